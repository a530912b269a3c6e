package config

import (
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
)

// Sources lists every effective value with where it came from, in a fixed
// order (the order of the keys in the configuration table, nested keys
// sorted), for `kimi-lsp doctor`. The API key appears redacted.
// Accumulating lists (context.exclude, context.secrets) give one Setting per
// element; the per-action values are resolved for every action.
func (c Config) Sources() []Setting {
	var out []Setting
	add := func(key, value string, src Source) {
		out = append(out, Setting{Key: key, Value: value, Source: src})
	}
	one := func(key, value string) { add(key, value, c.srcOf(key)) }

	one("apiKey", c.APIKey.String())
	one("baseURL", strconv.Quote(c.BaseURL))
	add("baseURL.fallback", strconv.Quote(c.FallbackURL()), c.srcOf("baseURL"))
	one("model", strconv.Quote(c.Model))
	one("fastModel", strconv.Quote(c.FastModel))
	var tokens []Setting
	for _, a := range c.Actions() {
		var own actionDef
		if i := c.actionIndex(a.Name); i >= 0 {
			own = c.actions[i]
		}
		e, src := c.actionEffort(a.Name, a.Result, own)
		if forced, ok := EffortFor(a.Model, e); ok {
			e, src = forced, Source{Kind: FromModel, Name: a.Model}
		}
		add("reasoningEffort."+a.Name, strconv.Quote(string(e)), src)
		n, src := c.actionTokens(a.Name, a.Result, own)
		tokens = append(tokens, Setting{Key: "maxCompletionTokens." + a.Name, Value: strconv.Itoa(n), Source: src})
	}
	out = append(out, tokens...)
	one("cacheTTL", strconv.Quote(c.CacheTTL))
	one("waitTimeout", strconv.Quote(c.WaitTimeout.String()))
	for _, d := range c.actions {
		a, _ := c.ActionFor(d.name)
		add("actions."+d.name, fmt.Sprintf("{title = %q, kind = %q, result = %q, model = %q}",
			a.Title, a.Kind, a.Result, a.Model), d.src)
	}
	one("context.maxTokens", strconv.Itoa(c.Context.MaxTokens))
	one("context.include.openBuffers", strconv.FormatBool(c.Context.Include.OpenBuffers))
	one("context.include.related", strconv.FormatBool(c.Context.Include.Related))
	one("context.include.recent", strconv.FormatBool(c.Context.Include.Recent))
	list := func(key string, vals []string, srcs []Source) {
		if len(vals) == 0 {
			add(key, "[]", defaultSource)
		}
		for i, v := range vals {
			add(key, strconv.Quote(v), srcs[i])
		}
	}
	list("context.exclude", c.Context.Exclude, c.excludeSrc)
	one("context.maxFileSize", strconv.FormatInt(c.Context.MaxFileSize, 10))
	list("context.secrets", c.Context.Secrets, c.secretsSrc)
	one("progress.showThinking", strconv.FormatBool(c.Progress.ShowThinking))
	one("progress.maxReportsPerSecond", strconv.Itoa(c.Progress.MaxReportsPerSecond))
	one("jobs.maxConcurrent", strconv.Itoa(c.Jobs.MaxConcurrent))
	for _, m := range sortedKeys(c.prices) {
		p := c.prices[m]
		for _, f := range []struct {
			name string
			v    float64
		}{{"input", p.Input}, {"cachedRead", p.CachedRead}, {"write5m", p.Write5m}, {"write1h", p.Write1h}, {"output", p.Output}} {
			one("prices."+m+"."+f.name, strconv.FormatFloat(f.v, 'f', -1, 64))
		}
	}
	one("logLevel", strconv.Quote(c.LogLevel))
	one("allowInvalidGo", strconv.FormatBool(c.AllowInvalidGo))
	one("webSearch", strconv.FormatBool(c.WebSearch))
	c.completionSources(add)
	return out
}

// Redacted returns the effective configuration as text, one
// `key = value (from source)` line per Setting, the API key redacted. It is
// what `kimi-lsp doctor` prints.
func (c Config) Redacted() string {
	var b strings.Builder
	for _, s := range c.Sources() {
		b.WriteString(s.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// String returns a one-line summary with the API key redacted.
func (c Config) String() string {
	return fmt.Sprintf("config{apiKey: %s, baseURL: %s, model: %s, fastModel: %s, cacheTTL: %s, actions: %d}",
		c.APIKey, c.BaseURL, c.Model, c.FastModel, c.CacheTTL, len(c.Actions()))
}

// Format implements fmt.Formatter so that no verb, %+v and %#v included,
// prints the unexported fields (which hold the sources' raw values): %v and
// %s print String, %+v and %#v print Redacted.
func (c Config) Format(f fmt.State, verb rune) {
	if verb == 'v' && (f.Flag('+') || f.Flag('#')) {
		_, _ = f.Write([]byte(c.Redacted()))
		return
	}
	_, _ = f.Write([]byte(c.String()))
}

// LogValue implements slog.LogValuer: a group of the main settings, the API
// key redacted.
func (c Config) LogValue() slog.Value {
	names := make([]string, 0, len(c.actions))
	for _, d := range c.actions {
		names = append(names, d.name)
	}
	slices.Sort(names)
	return slog.GroupValue(
		slog.String("apiKey", c.APIKey.String()),
		slog.String("baseURL", c.BaseURL),
		slog.String("model", c.Model),
		slog.String("fastModel", c.FastModel),
		slog.String("cacheTTL", c.CacheTTL),
		slog.String("logLevel", c.LogLevel),
		slog.Any("actions", names),
	)
}
