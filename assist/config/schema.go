package config

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

// The configuration schema: one entry per key, in the order of the
// configuration table (README.md, which a test holds to it), of doctor's
// listing (Sources) and of the "known keys" of messages. An entry says how
// the key is read from a source (parse), where the value goes (set, or
// merge for values combined across sources), how doctor shows it (show,
// or list for keys that are more than one value), and whether a workspace
// file may set it. Adding a key is adding an entry here (and its field to
// Config, with its default in Default).

// wsRule says what a workspace file (.kimi-lsp.toml, shipped by a
// repository) may do with a key.
type wsRule int

const (
	wsAllowed   wsRule = iota // a workspace file may set it
	wsNever                   // it is ignored, with a warning, in a workspace file
	wsOffOnly                 // a workspace file may set it to false only
	wsLowerOnly               // a workspace file may lower it only (entry.lower)
)

// Reasons a workspace file may not set a key, in its warning.
const (
	whyUserOnly  = "only your user config file, the environment or your editor settings may set it"
	whyEndpoint  = "a cloned repository must not be able to send your key or your code to another host; set it in your user config file, the environment or your editor settings"
	whySearch    = "a cloned repository must not be able to send your code to a search engine; " + whyUserOnly
	whyAsYouType = "a cloned repository must not decide whether or how often your code is sent as you type; it may only set enable = false"
	whyVerifyOn  = "a cloned repository must not start programs in your folder; it may only set enable = \"off\""
)

// entry is one key of the schema.
type entry struct {
	path string // dotted, e.g. "context.maxTokens"
	env  string // the environment variable that sets it, "" for none
	def  string // the default, as the configuration table shows it
	doc  string // the configuration table's meaning
	ws   wsRule
	why  string // why a workspace file may not set it ("" for whyUserOnly)
	off  any    // for wsOffOnly, the one value a workspace file may set
	// dflt is the built-in value, which Default sets (nil: the zero
	// value, or, for merged keys, what Default sets itself).
	dflt any

	// parse reads the value v found at key in a source (key is path, or
	// a longer key for an entry that is a table) and returns what the
	// layer holds for it; ok false stores nothing (problems go to p).
	parse func(p *parser, key string, v any) (val any, ok bool)
	// set puts a layer's value into the Config (the source is recorded
	// under path); merge replaces set for values combined across sources
	// (it records sources itself).
	set   func(c *Config, v any)
	merge func(c *Config, v any, src Source)
	// lower, for a wsLowerOnly entry, reports whether v is no higher than
	// the value c holds so far (a workspace file's value is applied only
	// then).
	lower func(c *Config, v any) bool
	// show is the effective value as doctor lists it; list replaces it
	// for keys listed as several settings.
	show func(c Config) string
	list func(c Config, add func(key, value string, src Source))
}

func (e entry) envVar(name string) entry { e.env = name; return e }

func (e entry) never(why string) entry {
	e.ws, e.why = wsNever, why
	return e
}

// lowerOnly makes a workspace file's value apply only when it is no
// higher than the lower sources', where 0 means no bound (the highest).
func (e entry) lowerOnly(at func(*Config) *float64) entry {
	e.ws = wsLowerOnly
	e.lower = func(c *Config, v any) bool {
		cur, nw := *at(c), v.(float64)
		return cur == 0 && nw >= 0 || nw > 0 && nw <= cur
	}
	return e
}

func (e entry) offOnly(why string) entry { return e.offOnlyAt(false, why) }

// offOnlyAt makes off the only value a workspace file may set.
func (e entry) offOnlyAt(off any, why string) entry {
	e.ws, e.why, e.off = wsOffOnly, why, off
	return e
}

// field is an entry for a key held in one field of Config, whose default
// (Default) is dflt: at(c) is the field, parse reads it, show prints it.
func field[T any](path string, dflt T, def, doc string, at func(*Config) *T, parse func(p *parser, key string, v any) (T, bool), show func(T) string) entry {
	return entry{path: path, def: def, doc: doc, dflt: dflt,
		parse: func(p *parser, key string, v any) (any, bool) { return parse(p, key, v) },
		set:   func(c *Config, v any) { *at(c) = v.(T) },
		show:  func(c Config) string { return show(*at(&c)) },
	}
}

// Readers of the common kinds of value.

func ptrValue[T any](x *T) (T, bool) {
	if x == nil {
		var zero T
		return zero, false
	}
	return *x, true
}

func readBool(p *parser, key string, v any) (bool, bool) { return ptrValue(p.boolean(key, v)) }

func readModel(p *parser, key string, v any) (string, bool) { return ptrValue(p.modelName(key, v)) }

func readInt(lo, hi int64) func(p *parser, key string, v any) (int, bool) {
	return func(p *parser, key string, v any) (int, bool) {
		n, ok := p.integer(key, v, lo, hi)
		return int(n), ok
	}
}

// readOneOf reads a string that must be one of values.
func readOneOf(values ...string) func(p *parser, key string, v any) (string, bool) {
	return func(p *parser, key string, v any) (string, bool) {
		s, ok := p.str(key, v)
		if !ok {
			return "", false
		}
		for _, x := range values {
			if s == x {
				return s, true
			}
		}
		p.fail(key, "%s is not one of %s", quote(s), strings.Join(values, ", "))
		return "", false
	}
}

func readLogLevel(p *parser, key string, v any) (string, bool) {
	s, ok := p.str(key, v)
	if !ok {
		return "", false
	}
	switch lv := strings.ToLower(s); lv {
	case "debug", "info", "warn", "error":
		return lv, true
	case "warning":
		return "warn", true
	}
	p.fail(key, "%s is not one of debug, info, warn, error", quote(s))
	return "", false
}

// readUSD reads an amount of US dollars from 0 to MaxBudget.
func readUSD(p *parser, key string, v any) (float64, bool) {
	f, ok := p.number(key, v, math.Inf(-1), math.Inf(1))
	if ok && (f < 0 || f > MaxBudget) {
		p.fail(key, "%g is out of range: want 0 (no bound) to %g (USD)", f, float64(MaxBudget))
		return 0, false
	}
	return f, ok
}

func showUSD(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func quoted(s string) string { return strconv.Quote(s) }
func showBool(b bool) string { return strconv.FormatBool(b) }
func showInt(n int) string   { return strconv.Itoa(n) }

// lastProblem returns the problem the parser added since it held n, if any.
func (p *parser) lastProblem(n int) (*Problem, bool) {
	if len(p.probs) <= n {
		return nil, false
	}
	pr, ok := p.probs[len(p.probs)-1].(*Problem)
	return pr, ok
}

// shownValue is a baseURL of another type than a string as doctor and
// messages show it: a number or a boolean as written, anything else by its
// type ("a list").
func shownValue(v any) string {
	switch v.(type) {
	case bool, int, int64, float64, json.Number:
		return fmt.Sprint(v)
	}
	return typeName(v)
}

// endpoint is a layer's baseURL: the URL, or, when err is set, the invalid
// value as it may be shown (see Config.BaseURLError).
type endpoint struct {
	url string
	err *Problem
}

// perActionValue is a layer's per-action setting (reasoningEffort,
// maxCompletionTokens): by action name, with "default"; all means one
// value for every action, which replaces the entries of lower sources.
type perActionValue[T any] struct {
	m   map[string]T
	all bool
}

// perActionEntry is the entry of a per-action setting.
func perActionEntry[T any](path, def, doc string, one func(p *parser, key string, v any) (T, bool), at func(*Config) map[string]T,
	resolve func(c Config, a Action, own actionDef) (string, Source)) entry {
	return entry{path: path, def: def, doc: doc,
		parse: func(p *parser, key string, v any) (any, bool) {
			m, all := perAction(p, key, v, func(key string, v any) (T, bool) { return one(p, key, v) })
			return perActionValue[T]{m, all}, m != nil
		},
		merge: func(c *Config, v any, src Source) {
			pv := v.(perActionValue[T])
			overlay(at(c), pv.m, pv.all, c.src, path+".", src)
		},
		list: func(c Config, add func(key, value string, src Source)) {
			for _, a := range c.Actions() {
				var own actionDef
				if i := c.actionIndex(a.Name); i >= 0 {
					own = c.actions[i]
				}
				val, src := resolve(c, a, own)
				add(path+"."+a.Name, val, src)
			}
		},
	}
}

// globsEntry is the entry of an accumulating glob list: every source's
// globs add to the lower sources'.
func globsEntry(path, def, doc string, at func(*Config) (*[]string, *[]Source)) entry {
	return entry{path: path, def: def, doc: doc,
		parse: func(p *parser, key string, v any) (any, bool) {
			g := p.globs(key, v)
			return g, g != nil
		},
		merge: func(c *Config, v any, src Source) {
			vals, srcs := at(c)
			for _, g := range v.([]string) {
				if !containsString(*vals, g) {
					*vals = append(*vals, g)
					*srcs = append(*srcs, src)
				}
			}
		},
		list: func(c Config, add func(key, value string, src Source)) {
			vals, srcs := at(&c)
			if len(*vals) == 0 {
				add(path, "[]", defaultSource)
			}
			for i, g := range *vals {
				add(path, strconv.Quote(g), (*srcs)[i])
			}
		},
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// schema is the configuration schema (see above).
var schema = []entry{
	field("apiKey", Secret{}, "none", "bearer key; without it actions fail with a message naming `KIMI_API_KEY`",
		func(c *Config) *Secret { return &c.APIKey },
		func(p *parser, key string, v any) (Secret, bool) {
			if s, ok := p.str(key, v); ok {
				return p.secret(key, s)
			}
			return Secret{}, false
		},
		func(s Secret) string { return s.String() }).envVar(APIKeyEnv).never(whyEndpoint),
	{path: "baseURL", env: "KIMI_BASE_URL", ws: wsNever, why: whyEndpoint, def: "`" + model.DefaultBaseURL + "`", dflt: endpoint{url: model.DefaultBaseURL},
		doc: "endpoint; after 5xx errors the default falls back to `" + model.DefaultFallbackURL + "`. Any OpenAI-compatible server works (Ollama, llama.cpp, vLLM, OpenAI), with or without `/v1`. " +
			"An invalid value (no `http://`/`https://`, another scheme, no host) from any source stops every request, with a message naming it and its source: it never falls back to the default endpoint",
		parse: func(p *parser, key string, v any) (any, bool) {
			n := len(p.probs)
			s, ok := p.str(key, v)
			if !ok {
				// A value of another type (baseURL = 8011, a list) is as
				// invalid as a bad string: it stops every request too,
				// rather than leave them to a lower source or the default.
				if pr, isProb := p.lastProblem(n); isProb {
					return endpoint{url: shownValue(v), err: pr}, true
				}
				return nil, false
			}
			if u, ok := p.url(key, s); ok {
				return endpoint{url: u}, true
			}
			pr, _ := p.probs[len(p.probs)-1].(*Problem)
			return endpoint{url: shownURL(s), err: pr}, pr != nil
		},
		set: func(c *Config, v any) {
			e := v.(endpoint)
			c.BaseURL, c.baseURLErr = e.url, e.err
		},
		list: func(c Config, add func(key, value string, src Source)) {
			add("baseURL", strconv.Quote(c.BaseURL), c.srcOf("baseURL"))
			add("baseURL.fallback", strconv.Quote(c.FallbackURL()), c.srcOf("baseURL"))
		},
	},
	field("model", DefaultModel, "`"+DefaultModel+"`", "model for edits", func(c *Config) *string { return &c.Model }, readModel, quoted).envVar("KIMI_MODEL"),
	field("fastModel", DefaultFastModel, "`"+DefaultFastModel+"`", "model for explanations", func(c *Config) *string { return &c.FastModel }, readModel, quoted),
	perActionEntry("reasoningEffort", "`low` for explain, `high` for edits",
		"`low`, `high`, `max`; the provider's aliases are accepted and mapped as it maps them: `medium` → `high`, `xhigh` → `max`, `minimal` and `none` → `low` (`none` does not turn thinking off). One value, or a table keyed by action name (`explain`, `fix`, `rewrite`, `document`, `tests`, your own) with `default` for the others. `kimi-k3` accepts `max` only, so actions on it always send `max` (`doctor` shows it)",
		func(p *parser, key string, v any) (Effort, bool) { return p.effort(key, v) },
		func(c *Config) map[string]Effort { return c.effort },
		func(c Config, a Action, own actionDef) (string, Source) {
			e, src := c.actionEffort(a.Name, a.Result, own)
			if forced, ok := EffortFor(a.Model, e); ok {
				e, src = forced, Source{Kind: FromModel, Name: a.Model}
			}
			return strconv.Quote(string(e)), src
		}),
	perActionEntry("maxCompletionTokens", "8192 explain, 32768 edits", "thinking + answer budget; one value or a table per action",
		func(p *parser, key string, v any) (int, bool) { return p.tokens(key, v) },
		func(c *Config) map[string]int { return c.maxTokens },
		func(c Config, a Action, own actionDef) (string, Source) {
			n, src := c.actionTokens(a.Name, a.Result, own)
			return strconv.Itoa(n), src
		}),
	field("cacheTTL", DefaultCacheTTL, "`"+DefaultCacheTTL+"`", "prompt-cache lifetime requested, `5m` or `1h`", func(c *Config) *string { return &c.CacheTTL }, readOneOf("5m", "1h"), quoted),
	field("waitTimeout", model.DefaultWaitTimeout, "`90s`", "longest wait for the provider to start answering, every retry and the fallback URL included (`5s`–`30m`; a duration or seconds); past it the action fails with a message. A reply that has started is never cut",
		func(c *Config) *time.Duration { return &c.WaitTimeout },
		func(p *parser, key string, v any) (time.Duration, bool) {
			return ptrValue(p.duration(key, v, MinWaitTimeout, MaxWaitTimeout))
		},
		func(d time.Duration) string { return strconv.Quote(d.String()) }).never(""),
	{path: "actions", def: "none",
		doc: "user-defined actions: `name`, `title`, `kind`, `prompt` (placeholders `{{selection}}`, `{{file}}`, `{{language}}`, `{{diagnostics}}`, `{{instruction}}`), `result` (`explain` or `edit`), optional `model`, `reasoningEffort`, `maxCompletionTokens`. " +
			"A `prompt` template is sent with every run: over 16 KiB (16384 bytes) in a workspace file, or 64 KiB elsewhere, the action is ignored and you are told its size and the cap; so is a workspace file's action whose template uses `{{selection}}`, `{{diagnostics}}` or `{{instruction}}` more than twice",
		parse: func(p *parser, key string, v any) (any, bool) {
			a := p.actions(key, v)
			return a, a != nil
		},
		merge: func(c *Config, v any, _ Source) {
			for _, d := range v.([]actionDef) {
				if i := c.actionIndex(d.name); i >= 0 {
					c.actions = append([]actionDef(nil), c.actions...)
					c.actions[i] = d
				} else {
					c.actions = append(c.actions[:len(c.actions):len(c.actions)], d)
				}
			}
		},
		list: func(c Config, add func(key, value string, src Source)) {
			for _, d := range c.actions {
				a, _ := c.ActionFor(d.name)
				add("actions."+d.name, "{title = "+strconv.Quote(a.Title)+", kind = "+strconv.Quote(a.Kind)+", result = "+strconv.Quote(string(a.Result))+", model = "+strconv.Quote(a.Model)+"}", d.src)
			}
		},
	},
	field("context.maxTokens", DefaultContextMaxTokens, "10000", "token budget for what a prompt shows besides the active file: the declarations the selection and the file use, then small related files. A typical action's prompt is then about 16,000 tokens (bench/README.md, \"Context\"); raise it for more context",
		func(c *Config) *int { return &c.Context.MaxTokens }, readInt(1000, MaxCompletionTokensLimit), showInt),
	field("context.include.openBuffers", true, "`true`", "other open buffers may fill that budget, whole when small (a large one only by the declarations used). The three `context.include` keys are booleans: `include = { related = true, openBuffers = true, recent = false }` in TOML, `\"include\": {\"recent\": false}` in editor settings",
		func(c *Config) *bool { return &c.Context.Include.OpenBuffers }, readBool, showBool),
	field("context.include.related", true, "`true`", "the declarations the selection uses may fill it (found through the workspace's symbol index, even in files that are not open) and the types they mention, the declarations the active file uses, the files it imports and its package's small files; they come first",
		func(c *Config) *bool { return &c.Context.Include.Related }, readBool, showBool),
	field("context.include.recent", true, "`true`", "recently viewed small files may fill it",
		func(c *Config) *bool { return &c.Context.Include.Recent }, readBool, showBool),
	globsEntry("context.exclude", "none", "gitignore-style globs kept out of prompts (`.gitignore` rules apply too); they add to those of lower sources",
		func(c *Config) (*[]string, *[]Source) { return &c.Context.Exclude, &c.excludeSrc }),
	field("context.maxFileSize", int64(DefaultMaxFileSize), "1048576 (1 MiB)", "larger files never enter a prompt; a larger active file is sent as a window around the selection (you are told)",
		func(c *Config) *int64 { return &c.Context.MaxFileSize },
		func(p *parser, key string, v any) (int64, bool) { return p.integer(key, v, 1, 1<<30) },
		func(n int64) string { return strconv.FormatInt(n, 10) }),
	globsEntry("context.secrets", "none", "extra secret globs, added to the built-in list below (which they cannot shorten) and to those of lower sources",
		func(c *Config) (*[]string, *[]Source) { return &c.Context.Secrets, &c.secretsSrc }),
	field("progress.showThinking", true, "`true`", "show a \"thinking…\" line while the model reasons",
		func(c *Config) *bool { return &c.Progress.ShowThinking }, readBool, showBool),
	field("progress.maxReportsPerSecond", DefaultMaxReportsPerSecond, "10", "progress throttle (1–100)",
		func(c *Config) *int { return &c.Progress.MaxReportsPerSecond }, readInt(1, 100), showInt),
	field("jobs.maxConcurrent", DefaultMaxConcurrentJobs, "4", "model streams open at once (1–64); more jobs wait in a queue (progress \"queued (N ahead)\")",
		func(c *Config) *int { return &c.Jobs.MaxConcurrent }, readInt(1, MaxConcurrentJobsLimit), showInt).never(""),
	{path: "prices", ws: wsNever, def: "K3.1 Pro: input 2.00, cached 0.20, 5m write 2.00, 1h write 4.00 USD/Mtok",
		doc: "per model, for the cost in `kimi.stats`: a table per model name whose keys are `input`, `cachedRead`, `write5m`, `write1h` and `output`, in USD per million tokens (`[prices.\"kimi-k3.1-pro\"]` then `output = 8.0`; keys left out keep their default). The output price and the other models' prices are editable assumptions",
		parse: func(p *parser, key string, v any) (any, bool) {
			m := p.prices(key, v)
			return m, m != nil
		},
		merge: func(c *Config, v any, src Source) {
			for m, pp := range v.(map[string]pricePatch) {
				p := c.prices[m]
				f := func(dst *float64, v *float64, field string) {
					if v != nil {
						*dst = *v
						c.src["prices."+m+"."+field] = src
					}
				}
				f(&p.Input, pp.input, "input")
				f(&p.CachedRead, pp.cachedRead, "cachedRead")
				f(&p.Write5m, pp.write5m, "write5m")
				f(&p.Write1h, pp.write1h, "write1h")
				f(&p.Output, pp.output, "output")
				c.prices[m] = p
			}
		},
		list: func(c Config, add func(key, value string, src Source)) {
			for _, m := range sortedKeys(c.prices) {
				p := c.prices[m]
				for _, f := range []struct {
					name string
					v    float64
				}{{"input", p.Input}, {"cachedRead", p.CachedRead}, {"write5m", p.Write5m}, {"write1h", p.Write1h}, {"output", p.Output}} {
					k := "prices." + m + "." + f.name
					add(k, strconv.FormatFloat(f.v, 'f', -1, 64), c.srcOf(k))
				}
			}
		},
	},
	field("logLevel", "info", "`info`", "`debug`, `info`, `warn`, `error`", func(c *Config) *string { return &c.LogLevel }, readLogLevel, quoted).never(""),
	field("allowInvalidGo", false, "`false`", "accept Go edits that no longer parse", func(c *Config) *bool { return &c.AllowInvalidGo }, readBool, showBool).never(""),
	field("webSearch", false, "`false`", "offer the provider's `web_search` tool (read at start)", func(c *Config) *bool { return &c.WebSearch }, readBool, showBool).never(whySearch),
	field("completion.enable", true, "`true`", "inline completion (ghost text, or completion items, see below)",
		func(c *Config) *bool { return &c.Completion.Enable }, readBool, showBool).offOnly(whyAsYouType),
	field("completion.items", ItemsAuto, "`auto`", "`textDocument/completion` items: `auto` (only for editors without inline completion: Helix, eglot, Kakoune), `always`, `never`",
		func(c *Config) *string { return &c.Completion.Items }, readOneOf(ItemsAuto, ItemsAlways, ItemsNever), quoted),
	field("completion.debounceMs", DefaultCompletionDebounceMS, "300", "how long an as-you-type request waits for the next keystroke before the provider is asked (0–5000; chosen by measurement, see [bench/README.md](bench/README.md))",
		func(c *Config) *int { return &c.Completion.DebounceMS }, readInt(0, 5000), showInt).never(whyAsYouType),
	{path: "completion.model", def: "`fastModel`", doc: "model for completions",
		parse: func(p *parser, key string, v any) (any, bool) { return readModel(p, key, v) },
		set:   func(c *Config, v any) { c.Completion.Model = v.(string) },
		list: func(c Config, add func(key, value string, src Source)) {
			if c.Completion.Model == "" {
				add("completion.model", strconv.Quote(c.CompletionModel())+" (fastModel)", c.srcOf("fastModel"))
			} else {
				add("completion.model", strconv.Quote(c.Completion.Model), c.srcOf("completion.model"))
			}
		},
	},
	{path: "completion.reasoningEffort", def: "`low`", dflt: EffortLow, doc: "`max` on `kimi-k3`, which accepts nothing else",
		parse: func(p *parser, key string, v any) (any, bool) { return p.effort(key, v) },
		set:   func(c *Config, v any) { c.Completion.ReasoningEffort = v.(Effort) },
		list: func(c Config, add func(key, value string, src Source)) {
			if e, forced := EffortFor(c.CompletionModel(), c.Completion.ReasoningEffort); forced {
				add("completion.reasoningEffort", strconv.Quote(string(e)), Source{Kind: FromModel, Name: c.CompletionModel()})
			} else {
				add("completion.reasoningEffort", strconv.Quote(string(c.Completion.ReasoningEffort)), c.srcOf("completion.reasoningEffort"))
			}
		},
	},
	field("completion.maxCompletionTokens", DefaultCompletionTokens, "2048", "thinking and suggestion together",
		func(c *Config) *int { return &c.Completion.MaxCompletionTokens },
		func(p *parser, key string, v any) (int, bool) {
			n, ok := p.integer(key, v, 1, MaxCompletionTokensLimit)
			if ok && n < 256 {
				p.warn(key, "%d is very small: thinking counts against it and may leave no room for the suggestion", n)
			}
			return int(n), ok
		}, showInt),
	field("completion.maxContextTokens", DefaultCompletionContextTokens, "4096", "the whole completion prompt (1024–262144): the file around the cursor, room for its edit log, related snippets",
		func(c *Config) *int { return &c.Completion.MaxContextTokens }, readInt(1024, 262144), showInt),
	field("completion.maxLines", DefaultCompletionMaxLines, "12", "longest suggestion, in lines",
		func(c *Config) *int { return &c.Completion.MaxLines }, readInt(1, 1000), showInt),
	field("nextEdit.enable", true, "`true`", "next-edit suggestions: after an edit and a pause, the change that comes next elsewhere in the file (a Hint diagnostic, a code action, ghost text)",
		func(c *Config) *bool { return &c.NextEdit.Enable }, readBool, showBool).offOnly(whyAsYouType),
	field("nextEdit.debounceMs", DefaultNextEditDebounceMS, "1000", "the pause after the last edit before a next edit is asked for (0–10000; chosen by measurement, see [bench/README.md](bench/README.md))",
		func(c *Config) *int { return &c.NextEdit.DebounceMS }, readInt(0, 10000), showInt).never(whyAsYouType),
	{path: "nextEdit.model", def: "`fastModel`", doc: "model for next-edit suggestions",
		parse: func(p *parser, key string, v any) (any, bool) { return readModel(p, key, v) },
		set:   func(c *Config, v any) { c.NextEdit.Model = v.(string) },
		list: func(c Config, add func(key, value string, src Source)) {
			if c.NextEdit.Model == "" {
				add("nextEdit.model", strconv.Quote(c.NextEditModel())+" (fastModel)", c.srcOf("fastModel"))
			} else {
				add("nextEdit.model", strconv.Quote(c.NextEdit.Model), c.srcOf("nextEdit.model"))
			}
		},
	},
	{path: "nextEdit.reasoningEffort", def: "`low`", dflt: EffortLow, doc: "`max` on `kimi-k3`, which accepts nothing else",
		parse: func(p *parser, key string, v any) (any, bool) { return p.effort(key, v) },
		set:   func(c *Config, v any) { c.NextEdit.ReasoningEffort = v.(Effort) },
		list: func(c Config, add func(key, value string, src Source)) {
			if e, forced := EffortFor(c.NextEditModel(), c.NextEdit.ReasoningEffort); forced {
				add("nextEdit.reasoningEffort", strconv.Quote(string(e)), Source{Kind: FromModel, Name: c.NextEditModel()})
			} else {
				add("nextEdit.reasoningEffort", strconv.Quote(string(c.NextEdit.ReasoningEffort)), c.srcOf("nextEdit.reasoningEffort"))
			}
		},
	},
	field("nextEdit.maxContextTokens", DefaultNextEditContextTokens, "3072", "the whole next-edit prompt (1024–262144): the file around the edit (a large file in pages of 16 lines, appended after the edit log as the cursor reaches them, within 3/4 of what the budget leaves the file), room for its edit log, related snippets",
		func(c *Config) *int { return &c.NextEdit.MaxContextTokens }, readInt(1024, 262144), showInt),
	field("nextEdit.maxLines", DefaultNextEditMaxLines, "20", "most lines a suggestion may change",
		func(c *Config) *int { return &c.NextEdit.MaxLines }, readInt(1, 200), showInt),
	field("review.maxFindings", DefaultMaxFindings, "20", "most findings of *Kimi: Review* kept per file (1–200), shown as diagnostics with source `kimi`",
		func(c *Config) *int { return &c.Review.MaxFindings }, readInt(1, 200), showInt),
	field("edits.confirm", ConfirmNever, "`never`", "when a model edit is sent for confirmation hunk by hunk (one change annotation per hunk, for editors that support them): `never`, `multiFile` (edits that touch more than one file or create, delete or rename one), `always`",
		func(c *Config) *string { return &c.Edits.Confirm }, readOneOf(ConfirmNever, ConfirmMultiFile, ConfirmAlways), quoted),
	budgetEntry("budget.hourly", 0.0, "0 (none)", "USD every surface together (actions, completion, next edits, repairs) may spend in the local clock hour, at `prices`, counted across restarts and editors. At 80 % you are told once; once it is spent, completion and next edits stop until the next full hour (one notice says so) and each action asks before it sends (`0`: no bound)",
		func(c *Config) *float64 { return &c.Budget.Hourly }),
	budgetEntry("budget.daily", 0.0, "0 (none)", "the same for the local day, until midnight",
		func(c *Config) *float64 { return &c.Budget.Daily }),
	budgetEntry("budget.confirmAbove", DefaultConfirmAbove, "0.1", "an action whose request is estimated above this many USD asks first, naming its size in tokens and its estimated cost (`0`: never asks)",
		func(c *Config) *float64 { return &c.Budget.ConfirmAbove }),
	field("verify.enable", VerifyAuto, "`auto`", "`auto`: before an edit lands, the language's own server (a private helper kimi-lsp starts: `gopls`, `pyright-langserver --stdio`, …, see `verify.servers`) checks it, Fix sees its errors where the editor sends none, and actions show the declarations it locates for the selection's names first; `off`: never",
		func(c *Config) *string { return &c.Verify.Enable }, readOneOf(VerifyAuto, VerifyOff), quoted).offOnlyAt(VerifyOff, whyVerifyOn),
	entry{path: "verify.servers", def: "Go `gopls`; Python `pyright-langserver --stdio`, else `basedpyright-langserver --stdio`; JavaScript/TypeScript `typescript-language-server --stdio`; Rust `rust-analyzer`; C/C++ `clangd`",
		doc:   "a table from language (`go`, `python`, `javascript`, `typescript`, `rust`, `c`, `cpp`, …) to the helper's command, a string split at spaces or a list; `\"\"` turns verification off for that language. A helper is started only when its command is on PATH",
		parse: func(p *parser, key string, v any) (any, bool) { return readServers(p, key, v) },
		set:   func(c *Config, v any) { c.Verify.Servers = v.(map[string][]string) },
		list: func(c Config, add func(key, value string, src Source)) {
			add("verify.servers", showServers(c.Verify.Servers), c.srcOf("verify.servers"))
		},
	}.never(whyServers),
	field("verify.onNewErrors", OnNewErrorsRepair, "`repair`", "an edit that brings new errors: `repair` (sent back to the model once with the errors, checked again, then `ask`), `ask` (the editor asks: apply anyway, discard, show the errors; `kimi-lsp edit --write` writes nothing), `apply`, `refuse`",
		func(c *Config) *string { return &c.Verify.OnNewErrors }, readOneOf(OnNewErrorsRepair, OnNewErrorsAsk, OnNewErrorsApply, OnNewErrorsRefuse), quoted),
	field("verify.idleMinutes", DefaultVerifyIdleMinutes, "10", "a helper without use for this long is stopped (1–1440)",
		func(c *Config) *int { return &c.Verify.IdleMinutes }, readInt(1, 1440), showInt),
	field("trust.folders", []string(nil), "none", "folders you trust, each with everything below it (absolute paths or `~/…`; `kimi-lsp trust DIR` adds one, `kimi-lsp untrust DIR` removes it). In a folder you do not trust, the helpers run restricted, so that none runs code the repository chose (see *Security model* below); only your user config file may set it",
		func(c *Config) *[]string { return &c.Trust.Folders }, readTrustFolders, showList).never(whyTrust),
	field("workspaceTrusted", false, "false", "sent by the editor: you trust its workspace folders (VS Code sends `workspace.isTrusted`); only editor settings may set it, never a file",
		func(c *Config) *bool { return &c.Trust.Editor }, readEditorTrust, showBool).never(whyTrustEditor),
}

// budgetEntry is the entry of a budget.* key.
func budgetEntry(path string, dflt float64, def, doc string, at func(*Config) *float64) entry {
	return field(path, dflt, def, doc, at, readUSD, showUSD).lowerOnly(at)
}

// schemaIndex maps every entry's path to its index in schema, and every
// table's path (the prefixes of the entries' paths: "context",
// "context.include", …) to -1.
var schemaIndex = func() map[string]int {
	m := map[string]int{}
	for i, e := range schema {
		m[e.path] = i
		for j := strings.IndexByte(e.path, '.'); j > 0; j = nextDot(e.path, j) {
			m[e.path[:j]] = -1
		}
	}
	return m
}()

func nextDot(s string, j int) int {
	if k := strings.IndexByte(s[j+1:], '.'); k >= 0 {
		return j + 1 + k
	}
	return -1
}

// schemaEntry returns the entry of path.
func schemaEntry(path string) (entry, bool) {
	if i, ok := schemaIndex[path]; ok && i >= 0 {
		return schema[i], true
	}
	return entry{}, false
}

// children returns the names one level below prefix ("" for the top
// level, else "context." and the like), in schema order: the known keys of
// that table.
func children(prefix string) []string {
	var out []string
	for _, e := range schema {
		rest, ok := strings.CutPrefix(e.path, prefix)
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, ".")
		if !containsString(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// workspaceRule returns what a workspace file may do with key, a leaf or a
// table (a table is refused only when every key in it is), and the reason
// of a refusal.
func workspaceRule(key string) (wsRule, string) {
	if e, ok := schemaEntry(key); ok {
		return e.ws, e.why
	}
	rule, why := wsNever, ""
	for _, e := range schema {
		if strings.HasPrefix(e.path, key+".") {
			if e.ws != wsNever {
				rule = wsAllowed
			} else if why == "" {
				why = e.why
			}
		}
	}
	return rule, why
}

// walk parses the table m found at prefix ("" for the section, else
// "context." and the like) into l, by the schema.
func (p *parser) walk(l *layer, prefix string, m map[string]any) {
	for _, k := range sortedKeys(m) {
		key, v := prefix+k, m[k]
		i, inSchema := schemaIndex[key]
		known, leaf := inSchema && i < 0, inSchema && i >= 0
		var e entry
		if leaf {
			e = schema[i]
		}
		if p.src.Kind == FromWorkspaceFile && inSchema {
			rule, why := workspaceRule(key)
			if rule == wsNever || rule == wsOffOnly && v != e.off {
				p.warn(key, "ignored: a workspace file cannot set %s (%s)", key, cmpOr(why, whyUserOnly))
				continue
			}
		}
		switch {
		case leaf:
			if val, ok := e.parse(p, key, v); ok {
				l.vals[key] = val
			}
		case known:
			if tbl, ok := p.table(key, v); ok {
				p.walk(l, key+".", tbl)
			}
		default:
			p.unknown(strings.TrimSuffix(prefix, "."), k, children(prefix))
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// envVars are the environment variables read (the schema's env), with the
// key each sets.
var envVars = func() []struct{ name, key string } {
	var out []struct{ name, key string }
	for _, e := range schema {
		if e.env != "" {
			out = append(out, struct{ name, key string }{e.env, e.path})
		}
	}
	return out
}()
