package config

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

var editorSeeds = []string{
	`{"verify": {"enable": "auto", "servers": {"go": "gopls", "python": ["pyright-langserver", "--stdio"], "": "x"}, "idleMinutes": 3}}`,
	`{"kimi": {"apiKey": "sk-fuzz-000000000000abcd", "model": "m", "cacheTTL": "1h"}}`,
	`{"reasoningEffort": {"explain": "low", "default": "xhigh"}, "maxCompletionTokens": 4096}`,
	`{"actions": [{"name": "a", "prompt": "{{selection}} {{bogus}}", "result": "edit", "kind": "refactor.x"}]}`,
	`{"actions": {"r": {"prompt": "x", "result": "explain"}}}`,
	`{"context": {"maxTokens": 1e3, "include": {"related": false}, "exclude": ["[", "a/**"], "secrets": "*.key"}}`,
	`{"prices": {"m": {"input": 1.5, "output": "x"}}, "progress": {"maxReportsPerSecond": 1e400}}`,
	`[{"baseURL": "http://[::1]:8080/v1/"}]`,
	`{"maxCompletionTokens": 9223372036854775808}`,
	`{"baseURL": "https://user:pass@host", "apiKey": "Bearer x"}`,
	`null`, `[]`, `"x"`, `{"kimi": []}`, "{\"model\": \"\xff\"}",
	`{"completion": {"enable": false, "items": "always", "debounceMs": 80, "maxLines": 3, "maxContextTokens": 8192, "reasoningEffort": "max"}}`,
}

// FuzzWithEditor feeds arbitrary editor settings: no panic; an accepted
// section yields a printable configuration; a refused one leaves the
// configuration as it was, but for the endpoint (an invalid baseURL stops
// every request); no message ever quotes the API key.
func FuzzWithEditor(f *testing.F) {
	for _, s := range editorSeeds {
		f.Add([]byte(s))
	}
	base, _ := Default().WithEditor(json.RawMessage(`{"model": "base-model"}`))
	baseText := base.Redacted()
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, errs := base.WithEditor(raw)
		if HasErrors(errs) && withoutEndpoint(c.Redacted()) != withoutEndpoint(baseText) {
			t.Fatalf("a refused section changed the configuration")
		}
		_ = c.Sources()
		_ = c.Actions()
		if c.Context.MaxTokens < 1000 || c.Progress.MaxReportsPerSecond < 1 || (c.CacheTTL != "5m" && c.CacheTTL != "1h") {
			t.Fatalf("invalid value accepted: %v", c.Redacted())
		}
		for _, a := range c.Actions() {
			if a.MaxCompletionTokens < 1 || a.MaxCompletionTokens > MaxCompletionTokensLimit || a.Model == "" {
				t.Fatalf("invalid action accepted: %+v", a)
			}
		}
		if cc := c.Completion; cc.DebounceMS < 0 || cc.MaxLines < 1 || cc.MaxContextTokens < 1024 || cc.MaxCompletionTokens < 1 ||
			(cc.Items != ItemsAuto && cc.Items != ItemsAlways && cc.Items != ItemsNever) || c.CompletionModel() == "" {
			t.Fatalf("invalid completion settings accepted: %+v", cc)
		}
		m, err := decodeEditor(raw)
		if err != nil || m == nil {
			return
		}
		key, _ := m["apiKey"].(string)
		key = strings.TrimSpace(key)
		if len(key) < 12 || strings.ContainsFunc(key, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) {
			return
		}
		for _, err := range errs {
			if strings.Contains(err.Error(), key) {
				t.Fatalf("message quotes the API key: %v", err)
			}
		}
		if strings.Contains(c.Redacted(), key) {
			t.Fatalf("Redacted() shows the API key")
		}
	})
}

// FuzzWorkspaceFile feeds arbitrary TOML as a workspace file: no panic, and
// the result never takes apiKey, baseURL or webSearch from it.
func FuzzWorkspaceFile(f *testing.F) {
	for _, s := range []string{
		"apiKey = \"sk-x\"\nbaseURL = \"https://evil.example\"\n",
		"[kimi]\napiKey = \"sk-x\"\nwebSearch = true\n",
		"[[actions]]\nname = \"a\"\nprompt = \"{{selection}}\"\nresult = \"edit\"\n",
		"[context]\nexclude = [\"**/x\"]\nmaxTokens = 2000\n[context.include]\nrecent = false\n",
		"reasoningEffort = { explain = \"max\" }\nmaxCompletionTokens = 10\n",
		"model = kimi\n", "a = 2023-01-01T00:00:00Z\n", "x = [1, \"a\"]\n",
		"[budget]\nhourly = 0.5\nconfirmAbove = 0.05\n", "budget = { confirmAbove = 0 }\n",
		"[verify]\nenable = \"off\"\nonNewErrors = \"ask\"\n[verify.servers]\ngo = \"evil --stdio\"\npython = [\"a\", 1]\n",
	} {
		f.Add([]byte(s))
	}
	base := Default()
	f.Fuzz(func(t *testing.T, data []byte) {
		l, errs := parseTOML(data, Source{Kind: FromWorkspaceFile, Name: "/ws/" + WorkspaceFileName})
		for _, err := range errs {
			if !isClean(err.Error()) {
				t.Fatalf("message %q holds a control or format character", err.Error())
			}
		}
		if HasErrors(errs) || l == nil {
			return
		}
		_, apiKey := l.vals["apiKey"]
		_, baseURL := l.vals["baseURL"]
		_, webSearch := l.vals["webSearch"]
		if apiKey || baseURL || webSearch {
			t.Fatalf("workspace layer sets a refused key")
		}
		st := base.stack
		st.workspace = []*layer{l}
		c, _ := build(st, l)
		if c.APIKey.IsSet() || c.BaseURL != model.DefaultBaseURL || c.WebSearch {
			t.Fatalf("workspace file changed a refused key")
		}
		if b := c.Budget; b.ConfirmAbove <= 0 || b.ConfirmAbove > DefaultConfirmAbove || b.Hourly < 0 || b.Daily < 0 {
			t.Fatalf("workspace file raised a budget: %+v", b)
		}
		for _, a := range c.Actions() {
			if !isClean(a.Title) {
				t.Fatalf("title %q holds a control or format character", a.Title)
			}
		}
		_ = c.Redacted()
	})
}

// isClean reports whether s holds no control or format character.
func isClean(s string) bool {
	return !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.Is(unicode.Cf, r) })
}

// FuzzCleanText: the result holds no control or format character, no
// ESC-less remains of a sequence that had an ESC, and cleaning it again
// changes nothing.
func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"\x1b[31mred\x1b[0m", "\x1b]8;;x\x07l\x1b]8;;\x07", "a\u202eb", "\u009b1mx", "a\nb", "\xff", "a\u200bb\u2060c\ufeff", "x\r\ny\u2028\tz  w"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := cleanText(s)
		if !isClean(c) {
			t.Fatalf("cleanText(%q) = %q holds a control or format character", s, c)
		}
		if again := cleanText(c); again != c {
			t.Fatalf("cleanText is not idempotent on %q: %q then %q", s, c, again)
		}
		// CleanLines: the same, but newlines and tabs may stay.
		l := CleanLines(s)
		if strings.ContainsFunc(l, func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) || unicode.Is(unicode.Cf, r) }) {
			t.Fatalf("CleanLines(%q) = %q holds a control or format character", s, l)
		}
		if again := CleanLines(l); again != l {
			t.Fatalf("CleanLines is not idempotent on %q: %q then %q", s, l, again)
		}
		if strings.Contains(s, "\x1b[31m") && !strings.Contains(strings.ReplaceAll(s, "\x1b[31m", ""), "[31m") && (strings.Contains(c, "[31m") || strings.Contains(l, "[31m")) {
			t.Fatalf("%q leaves [31m: %q, %q", s, c, l)
		}
	})
}
