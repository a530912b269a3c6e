package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestEditNamesRedoneToolCalls (#12.10): an edit tool call failed and the
// model redid it; the diff is printed and written, and stderr says which
// call failed and was redone.
func TestEditNamesRedoneToolCalls(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	file := filepath.Join(dir, "calc.go")
	os.WriteFile(file, []byte("package m\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"), 0o644)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "Fix Add", Times: 1, Reasoning: "Two edits.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "replace_text", Arguments: `{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}`},
			{Name: "replace_text", Arguments: `{"path":"calc.go","old_text":"// Mul multiplies.","new_text":"// Mul returns a times b."}`},
		}},
		{Match: "nothing of them was applied", Times: 1, Reasoning: "Document Add instead.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "replace_text", Arguments: `{"path":"calc.go","old_text":"// Add adds.","new_text":"// Add returns a plus b."}`},
		}},
		{LastRole: "tool", Content: "Done."},
	}}})
	defer srv.Close()
	env := envFunc(testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL))
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"edit", file + ":4-6", "-m", "Fix Add", "--write"}, nil, &out, &errb, env)
	if code != 0 || !strings.Contains(out.String(), "+\treturn a + b") {
		t.Fatalf("code %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
	if e := errb.String(); !strings.Contains(e, "1 edit tool call failed and was redone by the model: replace_text calc.go") {
		t.Errorf("stderr %q does not name the failed and redone call", e)
	}
	if b, _ := os.ReadFile(file); !strings.Contains(string(b), "// Add returns a plus b.") {
		t.Errorf("file after --write:\n%s", b)
	}
}

// TestDoctorChecksCompletionModel (#13.9 with #14): doctor also checks the
// model inline completion asks, with the effort it sends: a
// completion.model the provider refuses fails doctor instead of every
// suggestion failing silently in the log.
func TestDoctorChecksCompletionModel(t *testing.T) {
	srv := modeltest.NewServer(modeltest.Config{})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	cfgDir := envFunc(env)("XDG_CONFIG_HOME")
	os.MkdirAll(filepath.Join(cfgDir, "kimi-lsp"), 0o755)
	os.WriteFile(filepath.Join(cfgDir, "kimi-lsp", "config.toml"), []byte("[completion]\nmodel = \"nope\"\n"), 0o644)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"doctor"}, nil, &out, &errb, envFunc(env))
	text := out.String()
	if code != 1 || !strings.Contains(text, "failed: nope (reasoning_effort low, for completion)") {
		t.Errorf("doctor with completion.model nope: code %d, output:\n%s", code, text)
	}
	if !strings.Contains(text, "OK: kimi-k3.1-pro-highspeed (reasoning_effort low, for explain)") {
		t.Errorf("the explain model's line changed:\n%s", text)
	}
}
