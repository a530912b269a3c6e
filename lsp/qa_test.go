package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
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
	if !strings.HasPrefix(end, "1 hunk in 1 file applied") {
		t.Fatalf("end %q, want the edit applied", end)
	}
	if !strings.Contains(end, "1 edit tool call failed and was redone") || !strings.Contains(end, "replace_text calc.go") {
		t.Errorf("end %q does not say which tool call failed and was redone", end)
	}
	if text, _, _ := le.state(uri); !strings.Contains(text, "a + b") || !strings.Contains(text, "// Add returns a plus b.") {
		t.Errorf("editor text %q", text)
	}
}

// TestCompletionLinkRetargetedToSecret (#12.4, #14.9): a link opened while
// it pointed at an ordinary file, then pointed at .env and reloaded by the
// editor (autoread), gets no completion: the secret check of a completion
// looks at the link's target as it is now, not as it was when first asked.
func TestCompletionLinkRetargetedToSecret(t *testing.T) {
	cs := newCompSession(t, true, nil, modeltest.Rule{Content: "x"})
	os.WriteFile(filepath.Join(cs.dir, "notes.txt"), []byte("ordinary notes\n"), 0o644)
	os.WriteFile(filepath.Join(cs.dir, ".env"), []byte("API_TOKEN=sk-live-MUST-NOT-LEAK\n"), 0o644)
	linkPath := filepath.Join(cs.dir, "settings.txt")
	if err := os.Symlink("notes.txt", linkPath); err != nil {
		t.Fatal(err)
	}
	link := string(workspace.FileURI(linkPath))
	cs.open(link, "ordinary notes\n")
	cs.texts[link], cs.version[link] = "ordinary notes\n", 1
	cs.text(link, 1)
	_, ch := cs.inline(link, map[string]any{"line": 0, "character": 8}, 1)
	cs.inlineResult(ch)
	if n := len(cs.prov.Requests()); n != 1 {
		t.Fatalf("%d provider requests for the ordinary file, want 1", n)
	}
	os.Remove(linkPath)
	if err := os.Symlink(".env", linkPath); err != nil {
		t.Fatal(err)
	}
	pos := cs.change(link, "API_TOKEN=sk-live-MUST-NOT-LEAK|\n")
	cs.text(link, 2)
	_, ch = cs.inline(link, pos, 1)
	if l := cs.inlineResult(ch); len(l.Items) != 0 {
		t.Errorf("completion in a link to .env: %+v", l)
	}
	cs.neverSent("MUST-NOT-LEAK")
}

// TestWaitingForEarlierEditShown: a job whose edit waits for an earlier
// edit of the same document (the editor has not answered that one yet)
// says so in its progress, naming the document and the earlier edit, and
// lands once the earlier one did.
func TestWaitingForEarlierEditShown(t *testing.T) {
	js := newJobSession(t, nil, funcFix(0, "0 * 10", 0), funcFix(2, "2 * 10", 0))
	le := js.liveEditor()
	hold, received := make(chan struct{}), make(chan struct{}, 2)
	le.mu.Lock()
	le.hold, le.received = hold, received
	le.mu.Unlock()
	uri := le.open("many.go", manyFuncs(3))
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "first")
	<-received // the first edit is with the editor, which holds its answer
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(10, 0, 12, 1)}, "second")
	deadline := time.Now().Add(20 * time.Second)
	var seen bool
	for !seen && time.Now().Before(deadline) {
		for _, v := range js.progressOf(`"second"`) {
			if v.Message == "waiting for an earlier edit to many.go (Kimi: Fix) to be applied" {
				seen = true
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !seen {
		t.Errorf("no waiting status; the second job's progress: %+v", js.progressOf(`"second"`))
	}
	close(hold)
	for _, tok := range []string{`"first"`, `"second"`} {
		if end := js.progressEnd(tok); !strings.HasPrefix(end, "1 hunk in 1 file applied") {
			t.Errorf("%s ended %q", tok, end)
		}
	}
}
