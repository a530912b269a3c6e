package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestSecretLinkAsActiveDocument is issue 12 item 4: envlink.txt → .env,
// opened as the active buffer, gets no code action and no job, its bytes
// reach the provider neither as the active file, nor as another open
// buffer, nor through read_file.
func TestSecretLinkAsActiveDocument(t *testing.T) {
	const secret = "sk-live-LINKED-SECRET-0123456789"
	js := newJobSession(t, nil,
		modeltest.Rule{Match: `action="explain"`, Times: 1, Reasoning: "Read the file.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "read_file", Arguments: `{"path":"envlink.txt"}`},
		}},
		modeltest.Rule{LastRole: "tool", Content: "It reads the token."})
	os.WriteFile(filepath.Join(js.dir, ".env"), []byte("API_TOKEN="+secret+"\n"), 0o600)
	if err := os.Symlink(".env", filepath.Join(js.dir, "envlink.txt")); err != nil {
		t.Fatal(err)
	}
	link := string(workspace.FileURI(filepath.Join(js.dir, "envlink.txt")))
	js.open(link, "API_TOKEN="+secret+"\n")
	js.text(link, 1)
	if acts := js.codeActions(link, nil, nil); len(acts) != 0 {
		t.Errorf("code actions offered on a link to .env: %v", titles(acts))
	}
	if _, err := js.ed.WaitMethod(ctxT(t), "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "envlink.txt") && strings.Contains(string(p), "secrets file")
	}); err != nil {
		t.Errorf("the user was not told why: %v", err)
	}
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.explain", "arguments": []any{map[string]any{"uri": link, "range": rng(0, 0, 0, 5)}},
	}, nil); err == nil {
		t.Errorf("explain of a link to .env was accepted")
	}
	main := js.file("main.go", "package main\n\n// reads API_TOKEN\nfunc main() {}\n")
	js.run("kimi.explain", map[string]any{"uri": main, "range": rng(3, 0, 3, 14)}, "x")
	js.progressEnd(`"x"`)
	reqs := js.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests reached the provider, want 2 (explain main.go, then the read_file result)", len(reqs))
	}
	if !strings.Contains(string(reqs[1].Body), "secret file") {
		t.Errorf("the read_file result does not say the file is secret")
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), "LINKED-SECRET") {
			t.Errorf("the linked secret reached the provider in request %d", r.Seq)
		}
	}
}

// TestSecretMemoBounded is issue 12 item 18: the secret-check memo keeps a
// bounded number of answers however many files a session touches.
func TestSecretMemoBounded(t *testing.T) {
	dir := t.TempDir()
	s := newSession(t, func(s *Server) { s.secretCache.max = 16 })
	s.initialize(lsptest.DefaultInitializeParams(string(workspace.FileURI(dir))))
	var last string
	for i := range 100 {
		last = string(workspace.FileURI(filepath.Join(dir, fmt.Sprintf("f%03d.go", i))))
		s.open(last, "package a\n")
		if acts := s.codeActions(last, nil, nil); len(acts) == 0 {
			t.Fatalf("no code actions for %s", last)
		}
	}
	if n := s.srv.secretCache.len(); n > 16 || n == 0 {
		t.Errorf("secret memo holds %d answers, want 1..16", n)
	}
	if _, ok := s.srv.secretCache.load(workspace.URI(last)); !ok {
		t.Errorf("the latest answer was evicted")
	}
}

// TestColonInFileName is issue 12 item 14: the model can edit a file whose
// name holds ':', with an edit tool and with a diff.
func TestColonInFileName(t *testing.T) {
	js := newJobSession(t, nil,
		modeltest.Rule{Match: `action="tests"`, Times: 1, Reasoning: "Bump it.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "replace_text", Arguments: `{"path":"notes:v2.go","old_text":"Version = 1","new_text":"Version = 2"}`},
		}},
		modeltest.Rule{LastRole: "tool", Content: "Done."},
		modeltest.Rule{Match: `action="rewrite"`, Content: "```diff\n--- a/12:30.go\n+++ b/12:30.go\n@@ -1,3 +1,3 @@\n package a\n \n-const At = 1230\n+const At = 1231\n```"})
	notes := filepath.Join(js.dir, "notes:v2.go")
	os.WriteFile(notes, []byte("package a\n\nconst Version = 1\n"), 0o644)
	var edits []json.RawMessage
	js.ed.Handle("workspace/applyEdit", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		edits = append(edits, p)
		return map[string]any{"applied": true}, nil
	})
	uri := js.file("12:30.go", "package a\n\nconst At = 1230\n")
	js.run("kimi.tests", map[string]any{"uri": uri, "range": rng(2, 0, 2, 5)}, "t")
	if end := js.progressEnd(`"t"`); !strings.Contains(end, "applied to 1 file") {
		t.Fatalf("edit of notes:v2.go: %q", end)
	}
	js.run("kimi.rewrite", map[string]any{"uri": uri, "range": rng(2, 0, 2, 5), "instruction": "next minute"}, "r")
	if end := js.progressEnd(`"r"`); !strings.Contains(end, "applied to 1 file") {
		t.Fatalf("diff of 12:30.go: %q", end)
	}
	if len(edits) != 2 {
		t.Fatalf("%d applyEdit requests, want 2", len(edits))
	}
	for i, want := range []struct{ uri, text string }{
		{string(workspace.FileURI(notes)), "Version = 2"},
		{uri, "1231"},
	} {
		if !strings.Contains(string(edits[i]), `"uri":"`+want.uri+`"`) || !strings.Contains(string(edits[i]), want.text) {
			t.Errorf("applyEdit %d = %s, want an edit of %s with %q", i, edits[i], want.uri, want.text)
		}
	}
}
