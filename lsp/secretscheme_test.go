package lsp

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestSecretsOfEveryScheme is issue 21 item 4: the secret rules apply to
// the path of a document of any scheme — VS Code's untitled: buffer for a
// new .env.production, its git: view of .env (path in the path, JSON in
// the query), a remote or virtual workspace's .env, any scheme — by the
// last path segment and by the workspace path it maps to (a link there to
// .env included). No action is offered, explain is refused, completion
// answers nothing, and no byte of such a buffer reaches the provider, not
// even as another open buffer while main.go is explained and completed.
func TestSecretsOfEveryScheme(t *testing.T) {
	cs := newCompSession(t, true, nil, modeltest.Rule{Content: "x"})
	os.WriteFile(filepath.Join(cs.dir, ".env"), []byte("TOKEN=on-disk\n"), 0o600)
	if err := os.Symlink(".env", filepath.Join(cs.dir, "settings.txt")); err != nil {
		t.Fatal(err)
	}
	query := url.QueryEscape(`{"path":"` + cs.dir + `/.env","ref":"HEAD"}`)
	uris := []string{
		"untitled:" + cs.dir + "/.env.production",
		"git:" + cs.dir + "/.env?" + query,
		"vscode-remote://ssh-remote+host" + cs.dir + "/.env",
		"vscode-vfs://github/owner/repo/config/credentials.json",
		"vscode-remote://wsl+Ubuntu/home/u/.ssh/id_ed25519",
		"x-any-scheme:/elsewhere/prod.env",
		"untitled:" + cs.dir + "/settings.txt", // maps to a link to .env
		"untitled:/elsewhere/SERVICE-ACCOUNT-1.JSON",
	}
	const secret = "sk-live-SCHEME-SECRET"
	line0 := map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 5}}
	for i, uri := range uris {
		text := "TOKEN=" + secret + string(rune('A'+i)) + "\n"
		cs.open(uri, text)
		cs.text(uri, 1)
		if acts := cs.codeActions(uri, nil, nil); len(acts) != 0 {
			t.Errorf("%s: code actions offered: %v", uri, titles(acts))
		}
		if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
			"command": "kimi.explain", "arguments": []any{map[string]any{"uri": uri, "range": line0}},
		}, nil); err == nil || !strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: explain: %v, want a refusal naming the secret", uri, err)
		}
		_, ch := cs.inline(uri, map[string]any{"line": 0, "character": 6}, 1)
		if l := cs.inlineResult(ch); len(l.Items) != 0 {
			t.Errorf("%s: completion answered %+v", uri, l)
		}
	}
	if n := len(cs.prov.Requests()); n != 0 {
		t.Errorf("%d requests reached the provider for secret buffers", n)
	}
	// The same buffers, open beside main.go, enter no prompt.
	main, pos := cs.file("main.go", mainGo)
	_, ch := cs.inline(main, pos, 1)
	cs.inlineResult(ch)
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.explain", "arguments": []any{map[string]any{"uri": main, "range": line0}},
	}, nil); err != nil {
		t.Fatal(err)
	}
	cs.waitArrived(2)
	cs.neverSent("SCHEME-SECRET")
	cs.neverSent("on-disk")
}

// A document of another scheme that is not secret still gets its actions.
func TestNonFileSchemeNotSecret(t *testing.T) {
	cs := newCompSession(t, true, nil, modeltest.Rule{Content: "x"})
	for _, uri := range []string{"untitled:Untitled-1", "untitled:" + cs.dir + "/notes.md", "git:" + cs.dir + "/main.go?%7B%7D"} {
		cs.open(uri, "package main\n")
		cs.text(uri, 1)
		if acts := cs.codeActions(uri, nil, nil); len(acts) == 0 {
			t.Errorf("%s: no code actions", uri)
		}
	}
}
