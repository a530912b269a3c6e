package lsp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// writeUserFile writes the user configuration file as an editor saves it:
// a new file renamed over the old one.
func writeUserFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

const userVerifyOff = "[verify]\nenable = \"off\"\n"

// TestUserFileBudgetAppliesLive (issue 33 item 5): a budget written to the
// user configuration file while the server runs changes the next request:
// the first Explain, under the default budget.confirmAbove, is sent
// without a question; after budget.confirmAbove = 0.0000001 is saved in
// the user file, the next Explain asks first, and "Cancel" sends nothing.
// An invalid file written next is refused as a whole, told once, and the
// last good values stay.
func TestUserFileBudgetAppliesLive(t *testing.T) {
	user := filepath.Join(t.TempDir(), "kimi-lsp", "config.toml")
	writeUserFile(t, user, userVerifyOff)
	cs, q := newSpendSessionUser(t, nil, "Cancel", user)
	uri, _ := cs.file("main.go", "package main\n\nfunc add(a, b int) int {\n\treturn a + b|\n}\n")
	if end := cs.explain(uri, "e1"); len(q.list()) != 0 || len(cs.prov.Requests()) != 1 {
		t.Fatalf("first explain: questions %q, %d requests, end %q; want none and 1", q.list(), len(cs.prov.Requests()), end)
	}

	writeUserFile(t, user, userVerifyOff+"[budget]\nconfirmAbove = 0.0000001\n")
	waitFor(t, func() bool { return cs.srv.config().Budget.ConfirmAbove == 0.0000001 })
	// Another file: the explanation of the first is kept (no model call).
	uri2, _ := cs.file("sub.go", "package main\n\nfunc sub(a, b int) int {\n\treturn a - b|\n}\n")
	end := cs.explain(uri2, "e2")
	asked := q.list()
	if len(asked) != 1 || !strings.Contains(asked[0], "above budget.confirmAbove") {
		t.Errorf("after the user file set budget.confirmAbove: questions %q, want one naming it", asked)
	}
	if n := len(cs.prov.Requests()); n != 1 || !strings.Contains(end, "not sent") {
		t.Errorf("after Cancel: %d requests at the stand-in (want still 1), progress ended %q", n, end)
	}

	writeUserFile(t, user, userVerifyOff+"[budget]\nconfirmAbove = \"lots\"\n")
	waitFor(t, func() bool {
		for _, m := range cs.messages() {
			if strings.Contains(m, "configuration problems") && strings.Contains(m, "budget.confirmAbove") {
				return true
			}
		}
		return false
	})
	if got := cs.srv.config().Budget.ConfirmAbove; got != 0.0000001 {
		t.Errorf("budget.confirmAbove %v after an invalid user file, want the last good 1e-7", got)
	}
}

// TestUserFileStartOnlyTold: what cannot apply live is named in one
// message: after the first action fixed the tool definitions, webSearch
// turned on in the user file is told as waiting for a restart, once,
// while the budget written with it is in force.
func TestUserFileStartOnlyTold(t *testing.T) {
	user := filepath.Join(t.TempDir(), "config.toml")
	writeUserFile(t, user, userVerifyOff)
	cs, _ := newSpendSessionUser(t, nil, "Send", user)
	uri, _ := cs.file("main.go", "package main\n\nfunc add(a, b int) int {\n\treturn a + b|\n}\n")
	cs.explain(uri, "e1")

	writeUserFile(t, user, "webSearch = true\n"+userVerifyOff+"[budget]\nhourly = 5.0\n")
	waitFor(t, func() bool { return cs.srv.config().Budget.Hourly == 5 })
	told := func() (n int) {
		for _, m := range cs.messages() {
			if strings.Contains(m, "except webSearch,") && strings.Contains(m, "start again") {
				n++
			}
		}
		return n
	}
	waitFor(t, func() bool { return told() > 0 })
	// Saved again with webSearch still on: not told again.
	writeUserFile(t, user, "webSearch = true\n"+userVerifyOff+"[budget]\nhourly = 6.0\n")
	waitFor(t, func() bool { return cs.srv.config().Budget.Hourly == 6 })
	uri2, _ := cs.file("sub.go", "package main\n\nfunc sub(a, b int) int {\n\treturn a - b|\n}\n")
	cs.explain(uri2, "e2")
	if n := told(); n != 1 {
		t.Errorf("webSearch told %d times, want once: %q", n, cs.messages())
	}
	if n := len(cs.prov.Requests()); n != 2 {
		t.Errorf("%d requests at the stand-in, want 2", n)
	}
	// A new price table is told too: the actions' recorded cost keeps the
	// first action's prices.
	writeUserFile(t, user, "webSearch = true\n"+userVerifyOff+"[budget]\nhourly = 6.0\n[prices.\"kimi-k3.1-pro-highspeed\"]\noutput = 9.0\n")
	waitFor(t, func() bool {
		for _, m := range cs.messages() {
			if strings.Contains(m, "except webSearch and prices (the cost recorded for actions), which wait") {
				return true
			}
		}
		return false
	})
	for _, r := range cs.prov.Requests() {
		if strings.Contains(string(r.Body), `"type":"web_search"`) {
			t.Errorf("a request offers web_search before a restart: the engine's tools changed")
		}
	}
}

// TestWorkspaceFileWrittenOnDisk: a .kimi-lsp.toml written by another
// program (no didSave, no didChangeWatchedFiles) is read again from the
// folder's fsnotify watch, as the user file is.
func TestWorkspaceFileWrittenOnDisk(t *testing.T) {
	dir := t.TempDir()
	s := newSession(t, nil)
	s.initialize(lsptest.DefaultInitializeParams(string(workspace.FileURI(dir))))
	// The folder is added off the read loop: its scan (and watch) first.
	waitFor(t, func() bool { return len(s.srv.folders.List()) == 1 })
	if err := s.srv.folders.Ready(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	writeUserFile(t, filepath.Join(dir, ".kimi-lsp.toml"), "[[actions]]\nname = \"shout\"\ntitle = \"Kimi: Shout\"\nprompt = \"{{selection}}\"\nresult = \"explain\"\n")
	waitFor(t, func() bool { _, ok := s.srv.config().ActionFor("shout"); return ok })
}
