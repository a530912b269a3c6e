package config

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCompletionDefaults(t *testing.T) {
	c := Default()
	want := Completion{Enable: true, Items: ItemsAuto, DebounceMS: DefaultCompletionDebounceMS, ReasoningEffort: EffortLow,
		MaxCompletionTokens: DefaultCompletionTokens, MaxContextTokens: 4096, MaxLines: DefaultCompletionMaxLines}
	if c.Completion != want {
		t.Errorf("got %+v, want %+v", c.Completion, want)
	}
	if got := c.CompletionModel(); got != DefaultFastModel {
		t.Errorf("CompletionModel() = %q, want the fast model %q", got, DefaultFastModel)
	}
	// fastModel set by a source moves completion along with it.
	c, errs := c.WithEditor(json.RawMessage(`{"fastModel": "my-fast"}`))
	mustNoErrors(t, errs)
	if got := c.CompletionModel(); got != "my-fast" {
		t.Errorf("CompletionModel() = %q after fastModel changed, want my-fast", got)
	}
}

func TestCompletionAllKeys(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", `
[completion]
enable = false
items = "always"
debounceMs = 80
model = "kimi-k3.1-pro"
reasoningEffort = "medium"
maxCompletionTokens = 1024
maxContextTokens = 8192
maxLines = 3
`)
	c, errs := Default().WithUserFile(user)
	mustNoErrors(t, errs)
	want := Completion{Enable: false, Items: ItemsAlways, DebounceMS: 80, Model: "kimi-k3.1-pro", ReasoningEffort: EffortHigh,
		MaxCompletionTokens: 1024, MaxContextTokens: 8192, MaxLines: 3}
	if c.Completion != want {
		t.Fatalf("got %+v, want %+v", c.Completion, want)
	}
	// The editor overrides one key; the others keep the file's values.
	c, errs = c.WithEditor(json.RawMessage(`{"kimi": {"completion": {"enable": true, "items": "never"}}}`))
	mustNoErrors(t, errs)
	want.Enable, want.Items = true, ItemsNever
	if c.Completion != want {
		t.Fatalf("after the editor: got %+v, want %+v", c.Completion, want)
	}
	if s := sourceOf(t, c, "completion.enable"); s.Source.Kind != FromEditor || s.Value != "true" {
		t.Errorf("completion.enable = %+v, want true from the editor", s)
	}
	if s := sourceOf(t, c, "completion.maxLines"); s.Source.Kind != FromUserFile || s.Value != "3" {
		t.Errorf("completion.maxLines = %+v, want 3 from the user file", s)
	}
	// Removing the editor's settings falls back to the file.
	c, errs = c.WithEditor(nil)
	mustNoErrors(t, errs)
	if c.Completion.Enable || c.Completion.Items != ItemsAlways {
		t.Errorf("after the editor cleared its settings: %+v", c.Completion)
	}
}

func TestCompletionWorkspaceFileMayTuneIt(t *testing.T) {
	dir := t.TempDir()
	ws := writeFile(t, dir, ".kimi-lsp.toml", "[completion]\nmaxLines = 4\nenable = false\n")
	c, errs := Default().WithWorkspaceFiles(ws)
	mustNoErrors(t, errs)
	if c.Completion.MaxLines != 4 || c.Completion.Enable {
		t.Errorf("got %+v, want maxLines 4 and disabled from the workspace file", c.Completion)
	}
}

func TestCompletionInvalidValues(t *testing.T) {
	tests := []struct{ raw, want string }{
		{`{"completion": {"items": "sometimes"}}`, `completion.items: "sometimes" is not one of auto, always, never`},
		{`{"completion": {"enable": "yes"}}`, "completion.enable: got a string, want true or false"},
		{`{"completion": {"debounceMs": -1}}`, "completion.debounceMs: -1 is out of range: want 0 to 5000"},
		{`{"completion": {"maxContextTokens": 100}}`, "completion.maxContextTokens: 100 is out of range: want 1024 to 262144"},
		{`{"completion": {"maxLines": 0}}`, "completion.maxLines: 0 is out of range: want 1 to 1000"},
		{`{"completion": {"reasoningEffort": "turbo"}}`, `completion.reasoningEffort: "turbo" is not one of low, high, max`},
		{`{"completion": {"maxCompletionTokens": 0}}`, "completion.maxCompletionTokens: 0 is out of range"},
		{`{"completion": {"model": "a b"}}`, `completion.model: "a b" is not a model name`},
		{`{"completion": true}`, "completion: got a boolean, want a table"},
	}
	for _, tt := range tests {
		c, errs := Default().WithEditor(json.RawMessage(tt.raw))
		var msgs []string
		for _, err := range errs {
			if !IsWarning(err) {
				msgs = append(msgs, err.Error())
			}
		}
		if len(msgs) != 1 || !strings.Contains(msgs[0], tt.want) {
			t.Errorf("%s: got %q, want one error containing %q", tt.raw, msgs, tt.want)
		}
		if c.Completion != defaultCompletion() {
			t.Errorf("%s: the invalid section changed the settings to %+v", tt.raw, c.Completion)
		}
	}
}

func TestCompletionWarnings(t *testing.T) {
	c, errs := Default().WithEditor(json.RawMessage(`{"completion": {"debounce": 10, "maxCompletionTokens": 100}}`))
	if HasErrors(errs) {
		t.Fatalf("warnings only expected: %v", errs)
	}
	var all []string
	for _, e := range errs {
		all = append(all, e.Error())
	}
	joined := strings.Join(all, "\n")
	for _, w := range []string{"completion.debounce: unknown key (ignored); did you mean debounceMs?", "completion.maxCompletionTokens: 100 is very small"} {
		if !strings.Contains(joined, w) {
			t.Errorf("warnings %q lack %q", joined, w)
		}
	}
	if c.Completion.MaxCompletionTokens != 100 {
		t.Errorf("a small maxCompletionTokens is a warning, not refused: got %d", c.Completion.MaxCompletionTokens)
	}
}

func TestCompletionInSources(t *testing.T) {
	s := sourceOf(t, Default(), "completion.model")
	if !strings.Contains(s.Value, DefaultFastModel) || !strings.Contains(s.Value, "fastModel") {
		t.Errorf("completion.model = %q, want the fast model, marked as such", s.Value)
	}
	for _, k := range []string{"completion.enable", "completion.items", "completion.debounceMs", "completion.reasoningEffort",
		"completion.maxCompletionTokens", "completion.maxContextTokens", "completion.maxLines"} {
		sourceOf(t, Default(), k)
	}
}
