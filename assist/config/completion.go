package config

import (
	"strconv"
)

// Completion defaults.
const (
	// DefaultCompletionDebounceMS is how long a completion request waits for
	// the next keystroke before it asks the provider. Chosen by replaying
	// typing sessions (bench/README.md, "Inline completion"): below it the
	// pauses after a space or a bracket start streams that the next key
	// hangs up (17 provider requests per 100 keystrokes at 200 ms, 4 at
	// 300 ms); past it the requests barely fall while every suggestion
	// comes later.
	DefaultCompletionDebounceMS = 300
	// DefaultCompletionTokens is completion.maxCompletionTokens: thinking (at
	// low effort) and a suggestion of at most maxLines lines.
	DefaultCompletionTokens = 2048
	// DefaultCompletionContextTokens is completion.maxContextTokens, the
	// whole prompt's budget.
	DefaultCompletionContextTokens = 4096
	// DefaultCompletionMaxLines is completion.maxLines.
	DefaultCompletionMaxLines = 12
)

// Values of completion.items.
const (
	// ItemsAuto offers textDocument/completion items only to clients that
	// do not support textDocument/inlineCompletion (Helix, eglot, Kakoune).
	ItemsAuto = "auto"
	// ItemsAlways offers them to every client.
	ItemsAlways = "always"
	// ItemsNever never offers them.
	ItemsNever = "never"
)

// Completion tunes inline completion (ghost text, or completion items for
// clients without inline completion).
type Completion struct {
	// Enable turns completion on or off.
	Enable bool
	// Items is ItemsAuto, ItemsAlways or ItemsNever.
	Items string
	// DebounceMS is how long an as-you-type request waits for the next
	// keystroke before it asks the provider (0: no wait).
	DebounceMS int
	// Model is the completion model; empty means FastModel (see
	// Config.CompletionModel).
	Model string
	// ReasoningEffort for completion requests.
	ReasoningEffort Effort
	// MaxCompletionTokens bounds thinking and answer.
	MaxCompletionTokens int
	// MaxContextTokens bounds the whole prompt.
	MaxContextTokens int
	// MaxLines bounds a suggestion's lines.
	MaxLines int
}

// defaultCompletion returns the built-in completion settings.
func defaultCompletion() Completion {
	return Completion{
		Enable:              true,
		Items:               ItemsAuto,
		DebounceMS:          DefaultCompletionDebounceMS,
		ReasoningEffort:     EffortLow,
		MaxCompletionTokens: DefaultCompletionTokens,
		MaxContextTokens:    DefaultCompletionContextTokens,
		MaxLines:            DefaultCompletionMaxLines,
	}
}

// CompletionModel returns the model completion requests use:
// completion.model, else fastModel.
func (c Config) CompletionModel() string {
	if c.Completion.Model != "" {
		return c.Completion.Model
	}
	return c.FastModel
}

// completionLayer is what one source says under "completion".
type completionLayer struct {
	enable                        *bool
	items, model                  *string
	effort                        *Effort
	debounce, maxTok, ctxTok, max *int
}

var completionKeys = []string{"enable", "items", "debounceMs", "model", "reasoningEffort", "maxCompletionTokens", "maxContextTokens", "maxLines"}

// completion parses the "completion" table.
func (p *parser) completion(l *layer, k string, v any) {
	tbl, ok := p.table(k, v)
	if !ok {
		return
	}
	cl := &completionLayer{}
	intIn := func(key string, v any, lo, hi int64) *int {
		n, ok := p.integer(key, v, lo, hi)
		if !ok {
			return nil
		}
		i := int(n)
		return &i
	}
	for _, f := range sortedKeys(tbl) {
		fk, fv := k+"."+f, tbl[f]
		if p.src.Kind == FromWorkspaceFile && (f == "debounceMs" || f == "enable" && fv != false) {
			// Whether and how often code is sent as you type is the
			// user's to decide, like jobs.maxConcurrent; a repository may
			// only turn completion off.
			p.warn(fk, "ignored: a workspace file cannot set %s (a cloned repository must not decide whether or how often your code is sent as you type; it may only set enable = false)", fk)
			continue
		}
		switch f {
		case "enable":
			cl.enable = p.boolean(fk, fv)
		case "items":
			if s, ok := p.str(fk, fv); ok {
				switch s {
				case ItemsAuto, ItemsAlways, ItemsNever:
					cl.items = &s
				default:
					p.fail(fk, "%s is not one of auto, always, never", quote(s))
				}
			}
		case "debounceMs":
			cl.debounce = intIn(fk, fv, 0, 5000)
		case "model":
			cl.model = p.modelName(fk, fv)
		case "reasoningEffort":
			if e, ok := p.effort(fk, fv); ok {
				cl.effort = &e
			}
		case "maxCompletionTokens":
			if n, ok := p.integer(fk, fv, 1, MaxCompletionTokensLimit); ok {
				if n < 256 {
					p.warn(fk, "%d is very small: thinking counts against it and may leave no room for the suggestion", n)
				}
				i := int(n)
				cl.maxTok = &i
			}
		case "maxContextTokens":
			cl.ctxTok = intIn(fk, fv, 1024, 262144)
		case "maxLines":
			cl.max = intIn(fk, fv, 1, 1000)
		default:
			p.unknown(k, f, completionKeys)
		}
	}
	l.completion = cl
}

// applyCompletion overlays a layer's completion settings.
func (c *Config) applyCompletion(l *layer) {
	cl := l.completion
	if cl == nil {
		return
	}
	set := func(key string) { c.src["completion."+key] = l.src }
	if cl.enable != nil {
		c.Completion.Enable = *cl.enable
		set("enable")
	}
	if cl.items != nil {
		c.Completion.Items = *cl.items
		set("items")
	}
	if cl.model != nil {
		c.Completion.Model = *cl.model
		set("model")
	}
	if cl.effort != nil {
		c.Completion.ReasoningEffort = *cl.effort
		set("reasoningEffort")
	}
	for _, f := range []struct {
		dst *int
		v   *int
		key string
	}{
		{&c.Completion.DebounceMS, cl.debounce, "debounceMs"},
		{&c.Completion.MaxCompletionTokens, cl.maxTok, "maxCompletionTokens"},
		{&c.Completion.MaxContextTokens, cl.ctxTok, "maxContextTokens"},
		{&c.Completion.MaxLines, cl.max, "maxLines"},
	} {
		if f.v != nil {
			*f.dst = *f.v
			set(f.key)
		}
	}
}

// completionSources lists the completion settings for Sources.
func (c Config) completionSources(add func(key, value string, src Source)) {
	one := func(key, value string) { add("completion."+key, value, c.srcOf("completion."+key)) }
	cc := c.Completion
	one("enable", strconv.FormatBool(cc.Enable))
	one("items", strconv.Quote(cc.Items))
	one("debounceMs", strconv.Itoa(cc.DebounceMS))
	if cc.Model == "" {
		add("completion.model", strconv.Quote(c.CompletionModel())+" (fastModel)", c.srcOf("fastModel"))
	} else {
		one("model", strconv.Quote(cc.Model))
	}
	if e, forced := EffortFor(c.CompletionModel(), cc.ReasoningEffort); forced {
		add("completion.reasoningEffort", strconv.Quote(string(e)), Source{Kind: FromModel, Name: c.CompletionModel()})
	} else {
		one("reasoningEffort", strconv.Quote(string(cc.ReasoningEffort)))
	}
	one("maxCompletionTokens", strconv.Itoa(cc.MaxCompletionTokens))
	one("maxContextTokens", strconv.Itoa(cc.MaxContextTokens))
	one("maxLines", strconv.Itoa(cc.MaxLines))
}
