package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// workspaceConfigSession starts a session on a workspace whose
// .kimi-lsp.toml holds toml and returns it with a.go's URI.
func workspaceConfigSession(t *testing.T, toml string) (*session, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".kimi-lsp.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	s := newSession(t, nil)
	s.ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) { return []any{nil}, nil })
	s.initialize(lsptest.DefaultInitializeParams(string(workspace.FileURI(dir))))
	uri := string(workspace.FileURI(filepath.Join(dir, "a.go")))
	s.open(uri, "package a\n")
	s.text(uri, 1)
	return s, uri
}

// shownMessages returns the window/showMessage texts ed received so far
// that contain every one of want, in order.
func shownMessages(ed *lsptest.Editor, want ...string) []string {
	var out []string
	for _, m := range ed.Messages() {
		if m.Method != "window/showMessage" {
			continue
		}
		var p struct{ Message string }
		json.Unmarshal(m.Params, &p)
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(p.Message, w)
		}
		if ok {
			out = append(out, p.Message)
		}
	}
	return out
}

// TestWorkspaceTemplateCapShown (#21.6): the editor is told once that an
// action's template is over the cap; the file's other action is offered.
func TestWorkspaceTemplateCapShown(t *testing.T) {
	s, uri := workspaceConfigSession(t, "[[actions]]\nname = \"huge\"\nresult = \"explain\"\nkind = \"refactor.review\"\nprompt = \"{{selection}}"+
		strings.Repeat("x", 20000)+"\"\n[[actions]]\nname = \"small\"\nresult = \"explain\"\nkind = \"refactor.review\"\nprompt = \"Review {{selection}}\"\n")
	acts := s.codeActions(uri, nil, []string{"refactor.review"})
	if len(acts) != 1 || acts[0]["title"] != "Kimi (repo): small" {
		t.Fatalf("actions %v", titles(acts))
	}
	if _, err := s.ed.WaitMethod(ctxT(t), "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `\"huge\"`) && strings.Contains(string(p), "16 KiB")
	}); err != nil {
		t.Fatalf("the editor was not told: %v", err)
	}
	if got := shownMessages(s.ed, "huge"); len(got) != 1 {
		t.Errorf("told %d times: %q", len(got), got)
	}
}

// TestWorkspaceBuiltinNameShown (#21.9): a repository action named like a
// built-in is dropped alone: the file's other action is offered, and the
// editor is told once.
func TestWorkspaceBuiltinNameShown(t *testing.T) {
	s, uri := workspaceConfigSession(t, "[[actions]]\nname = \"fix\"\nresult = \"edit\"\nprompt = \"{{selection}}\"\n"+
		"[[actions]]\nname = \"audit\"\nresult = \"explain\"\nkind = \"refactor.review\"\nprompt = \"Review {{selection}}\"\n")
	acts := s.codeActions(uri, nil, []string{"refactor.review"})
	if len(acts) != 1 || acts[0]["title"] != "Kimi (repo): audit" {
		t.Fatalf("actions %v", titles(acts))
	}
	if _, err := s.ed.WaitMethod(ctxT(t), "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `\"fix\" is a built-in name`)
	}); err != nil {
		t.Fatalf("the editor was not told: %v", err)
	}
	if got := shownMessages(s.ed, "built-in"); len(got) != 1 {
		t.Errorf("told %d times: %q", len(got), got)
	}
}
