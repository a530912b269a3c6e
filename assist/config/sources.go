package config

import (
	"fmt"
	"log/slog"
	"slices"
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
	for _, e := range schema {
		if e.list != nil {
			e.list(c, add)
		} else {
			add(e.path, e.show(c), c.srcOf(e.path))
		}
	}
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
