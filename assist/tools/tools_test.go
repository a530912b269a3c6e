package tools_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/patch/patchtest"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestDefinitionsGolden(t *testing.T) {
	a, err := json.MarshalIndent(tools.ModelTools(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.MarshalIndent(tools.ModelTools(), "", "  ")
	if !bytes.Equal(a, b) {
		t.Fatal("tool definitions serialise differently on two calls")
	}
	golden := filepath.Join("testdata", "tools.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(a, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(a)+"\n" {
		t.Errorf("tool definitions changed (they are part of the cached prompt prefix); run with -update if intended:\n%s", a)
	}
	// Strict mode: every property required, no additional properties.
	for _, d := range tools.Definitions() {
		var s struct {
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(d.ParametersJSON(), &s); err != nil {
			t.Fatalf("%s: %v", d.Name, err)
		}
		if len(s.Required) != len(s.Properties) || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: schema is not strict: %s", d.Name, d.ParametersJSON())
		}
	}
}

func newExecutor(t *testing.T, files map[string]string) (*tools.Executor, *patchtest.Dir) {
	t.Helper()
	root := t.TempDir()
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := patchtest.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	return tools.NewExecutor(patch.NewEditSet(d, patch.Options{}), nil), d
}

const calc = "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"

func TestCall(t *testing.T) {
	tests := []struct {
		name, tool, args string
		isErr            bool
		contains         string
	}{
		{"unknown tool", "run_shell", `{}`, true, `unknown tool "run_shell"`},
		{"invalid JSON", tools.ReadFile, `{"path": "calc.go"`, true, "invalid arguments"},
		{"unknown field", tools.ReadFile, `{"path": "calc.go", "mode": "x"}`, true, "unknown field"},
		{"wrong type", tools.ReadFile, `{"path": 3}`, true, "invalid arguments"},
		{"missing path", tools.ReadFile, `{}`, true, `needs the argument "path"`},
		{"empty arguments", tools.DeleteFile, ``, true, `needs the argument "path"`},
		{"read all", tools.ReadFile, `{"path": "calc.go", "start_line": null, "end_line": null}`, false, "calc.go: lines 1-6 of 6\npackage calc\n"},
		{"read range", tools.ReadFile, `{"path": "calc.go", "start_line": 4, "end_line": 5}`, false, "calc.go: lines 4-5 of 6\nfunc Add(a, b int) int {\n\treturn a - b\n"},
		{"read out of range", tools.ReadFile, `{"path": "calc.go", "start_line": 40, "end_line": null}`, true, "out of range"},
		{"read missing", tools.ReadFile, `{"path": "nope.go", "start_line": null, "end_line": null}`, true, "no such file"},
		{"read outside", tools.ReadFile, `{"path": "../../etc/passwd", "start_line": null, "end_line": null}`, true, "outside the workspace"},
		{"read .git", tools.ReadFile, `{"path": ".git/config", "start_line": null, "end_line": null}`, true, "outside the workspace"},
		{"replace", tools.ReplaceText, `{"path": "calc.go", "old_text": "a - b", "new_text": "a + b"}`, false, "replaced in calc.go"},
		{"replace no match", tools.ReplaceText, `{"path": "calc.go", "old_text": "a * b", "new_text": "a + b"}`, true, "was not found"},
		{"replace ambiguous", tools.ReplaceText, `{"path": "calc.go", "old_text": "a", "new_text": "b"}`, true, "exactly once"},
		{"replace with placeholder", tools.ReplaceText, `{"path": "calc.go", "old_text": "\treturn a - b\n", "new_text": "\t// ... existing code ...\n"}`, true, "placeholder"},
		{"create", tools.CreateFile, `{"path": "sub/new.go", "content": "package sub\n"}`, false, "created sub/new.go"},
		{"create existing", tools.CreateFile, `{"path": "calc.go", "content": "x"}`, true, "already exists"},
		{"create outside", tools.CreateFile, `{"path": "/tmp/evil.go", "content": "x"}`, true, "outside the workspace"},
		{"delete", tools.DeleteFile, `{"path": "calc.go"}`, false, "deleted calc.go"},
		{"diff", tools.ApplyDiff, `{"diff": "--- a/calc.go\n+++ b/calc.go\n@@ -4,3 +4,3 @@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + b\n }\n"}`, false, "calc.go hunk 1 at line 4 (hinted line)"},
		{"bad diff", tools.ApplyDiff, `{"diff": "--- a/calc.go\n+++ b/calc.go\n@@\n-\treturn a * b\n+\treturn a + b\n"}`, true, `your removed line 1 "\treturn a * b" occurs nowhere in the file`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x, _ := newExecutor(t, map[string]string{"calc.go": calc, ".git/config": "[core]\n"})
			r := x.Call(tc.tool, tc.args)
			if r.IsError != tc.isErr || !strings.Contains(r.Content, tc.contains) {
				t.Errorf("got (error %v) %q, want (error %v) containing %q", r.IsError, r.Content, tc.isErr, tc.contains)
			}
			if tc.isErr {
				if ch, err := x.Set().Changes(); err != nil || len(ch) != 0 {
					t.Errorf("a failed call left changes %v (%v)", ch, err)
				}
			}
		})
	}
}

func TestCallsAccumulate(t *testing.T) {
	x, d := newExecutor(t, map[string]string{"calc.go": calc})
	steps := []struct{ tool, args string }{
		{tools.ReplaceText, `{"path": "calc.go", "old_text": "a - b", "new_text": "a + b"}`},
		{tools.ApplyDiff, `{"diff": "--- a/calc.go\n+++ b/calc.go\n@@\n // Add adds.\n func Add(a, b int) int {\n \treturn a + b\n }\n+\n+// Sub subtracts.\n+func Sub(a, b int) int { return a - b }\n"}`},
		{tools.CreateFile, `{"path": "calc_test.go", "content": "package calc\n"}`},
	}
	for _, s := range steps {
		if r := x.Call(s.tool, s.args); r.IsError {
			t.Fatalf("%s: %s", s.tool, r.Content)
		}
	}
	// read_file sees the pending text.
	if r := x.Call(tools.ReadFile, `{"path": "calc.go", "start_line": 5, "end_line": 5}`); !strings.Contains(r.Content, "return a + b") {
		t.Fatalf("read does not see pending edits: %q", r.Content)
	}
	// Nothing reached the disk yet.
	if b, _ := os.ReadFile(filepath.Join(d.Root(), "calc.go")); string(b) != calc {
		t.Fatal("an edit was written before the end")
	}
	changes, err := x.Set().Changes()
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 2 || changes[0].Kind != patch.ModifyFile || changes[1].Kind != patch.CreateFile {
		t.Fatalf("changes %+v", changes)
	}
	want := "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\n// Sub subtracts.\nfunc Sub(a, b int) int { return a - b }\n"
	if changes[0].After != want {
		t.Errorf("after %q, want %q", changes[0].After, want)
	}
	if !errors.Is(nil, nil) || len(model.Message{}.ToolCalls) != 0 {
		t.Fatal("unreachable")
	}
}
