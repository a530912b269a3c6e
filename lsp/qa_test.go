package lsp

import (
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestRedoneToolCallsNamed (#12.10): an edit tool call failed and the model
// redid it after being told; the edit lands, and the job's end says which
// call failed and was redone, so the user is not told less than the model.
func TestRedoneToolCallsNamed(t *testing.T) {
	js := newJobSession(t, nil,
		modeltest.Rule{Match: `action="fix"`, Times: 1, Reasoning: "Two edits.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "replace_text", Arguments: `{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}`},
			{Name: "replace_text", Arguments: `{"path":"calc.go","old_text":"// Mul multiplies.","new_text":"// Mul returns a times b."}`},
		}},
		modeltest.Rule{Match: "nothing of them was applied", Times: 1, Reasoning: "Mul is not here; document Add.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "replace_text", Arguments: `{"path":"calc.go","old_text":"// Add adds.","new_text":"// Add returns a plus b."}`},
		}},
		modeltest.Rule{LastRole: "tool", Content: "Done."})
	le := js.liveEditor()
	uri := le.open("calc.go", "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n")
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(3, 0, 5, 1)}, "fx")
	end := js.progressEnd(`"fx"`)
	if !strings.HasPrefix(end, "2 edits applied to 1 file") {
		t.Fatalf("end %q, want the edit applied", end)
	}
	if !strings.Contains(end, "1 edit tool call failed and was redone") || !strings.Contains(end, "replace_text calc.go") {
		t.Errorf("end %q does not say which tool call failed and was redone", end)
	}
	if text, _, _ := le.state(uri); !strings.Contains(text, "a + b") || !strings.Contains(text, "// Add returns a plus b.") {
		t.Errorf("editor text %q", text)
	}
}
