package lsp

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The gate's tests (assist/complete/nextgate.go, D79): next edits are
// asked about the user's typing only. Each sends what an editor sends
// (ranged changes, willSave, didSave) through the real protocol client,
// with the stand-in provider answering; the fast model's rule answers the
// next-edit requests with nothing, so that each is counted Empty.

// rangedChange is one content change of a didChange: the byte range
// [start, end) of the text the changes before it left (the tests' texts
// are ASCII: bytes are UTF-16 units) and its new text.
type rangedChange struct {
	start, end int
	text       string
}

// posOf is the LSP position of byte offset off of text.
func posOf(text string, off int) map[string]any {
	line := strings.Count(text[:off], "\n")
	return map[string]any{"line": line, "character": off - (strings.LastIndex(text[:off], "\n") + 1)}
}

// changeRanged sends one didChange of uri holding changes, in order.
func (cs *compSession) changeRanged(uri string, changes ...rangedChange) {
	cs.t.Helper()
	text := cs.texts[uri]
	var out []any
	for _, c := range changes {
		out = append(out, map[string]any{"range": map[string]any{"start": posOf(text, c.start), "end": posOf(text, c.end)}, "text": c.text})
		text = text[:c.start] + c.text + text[c.end:]
	}
	cs.version[uri]++
	cs.texts[uri] = text
	if err := cs.ed.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": cs.version[uri]},
		"contentChanges": out,
	}); err != nil {
		cs.t.Fatal(err)
	}
}

// changeTo sends the change of uri to text as editors with incremental
// sync do: one ranged change of the span that differs.
func (cs *compSession) changeTo(uri, text string) {
	cs.t.Helper()
	e := workspace.DiffEdit(cs.texts[uri], text)
	cs.changeRanged(uri, rangedChange{e.Start, e.End, e.Text})
}

// notify sends a notification about uri's document (willSave, didSave).
func (cs *compSession) notify(method, uri string) {
	cs.t.Helper()
	params := map[string]any{"textDocument": map[string]any{"uri": uri}}
	if method == "textDocument/willSave" {
		params["reason"] = 1
	}
	if err := cs.ed.Notify(method, params); err != nil {
		cs.t.Fatal(err)
	}
}

// save writes uri's text to its file, as an editor saving it does, between
// willSave (when will) and didSave.
func (cs *compSession) save(uri string) {
	cs.t.Helper()
	u, _ := workspace.ParseURI(uri)
	p, _ := u.Path()
	if err := os.WriteFile(p, []byte(cs.texts[uri]), 0o644); err != nil {
		cs.t.Fatal(err)
	}
	cs.notify("textDocument/didSave", uri)
}

// waitNext polls kimi.stats's nextEdit section until ok holds for it.
func (cs *compSession) waitNext(what string, ok func(complete.NextStats) bool) complete.NextStats {
	cs.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := cs.nextStats()
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			cs.t.Fatalf("never %s: kimi.stats nextEdit = %+v", what, st)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// quietNext is the fast model's rule: every next-edit request is answered
// with nothing (counted Empty).
var quietNext = modeltest.Rule{Model: config.DefaultFastModel, Content: ""}

// TestNextEditNotAfterFixNorItsUndo is issue 32's check "a landed Fix and
// its undo: no next-edit request": the user's edit asks once; the Fix's
// edit landing, its undo and its redo ask nothing (the texts before and
// after it are remembered); the user's next edit asks again.
func TestNextEditNotAfterFixNorItsUndo(t *testing.T) {
	cs := nextSession(t, quietNext, modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	// The user's edit: the buffer is no longer the file on disk, so the
	// undo below is not a reload.
	cs.changeTo(uri, renamedGo)
	cs.waitNext("the user's edit answered", func(st complete.NextStats) bool { return st.Empty == 1 })
	cs.ed.Handle("workspace/applyEdit", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		got := applyWorkspaceEdit(t, p, map[string]string{uri: renamedGo}, map[string]int32{uri: cs.version[uri]})[uri]
		cs.changeTo(uri, got)
		return map[string]any{"applied": true}, nil
	})
	cs.ed.Handle("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.ResponseError) { return nil, nil })
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.fix", "arguments": []any{map[string]any{
		"uri": uri, "range": rng(2, 0, 8, 0),
	}}}, nil); err != nil {
		t.Fatal(err)
	}
	// The job's end: its edit no longer in flight (EditQueue.Busy is
	// false for what follows).
	if _, err := cs.ed.WaitMethod(ctxT(t), "$/progress", func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"kind":"end"`)
	}); err != nil {
		t.Fatal(err)
	}
	if cs.texts[uri] != renamedAll {
		t.Fatalf("the Fix left %q", cs.texts[uri])
	}
	cs.changeTo(uri, renamedGo)  // undo
	cs.changeTo(uri, renamedAll) // redo
	cs.changeTo(uri, renamedGo)  // undo again
	if st := cs.nextStats(); st.NotTyped != 4 {
		t.Errorf("kimi.stats nextEdit = %+v, want 4 edits not typed: the Fix's, two undos, a redo", st)
	}
	// Ten times the pause: a request about the undo would be out by now.
	time.Sleep(200 * time.Millisecond)
	cs.changeTo(uri, "// Package main scales.\n"+renamedGo)
	st := cs.waitNext("the user's next edit answered", func(st complete.NextStats) bool { return st.Empty == 2 })
	if st.Requested != 2 {
		t.Errorf("kimi.stats nextEdit = %+v, want 2 requests: the user's two edits, none about the Fix, its undo or redo", st)
	}
}

// TestNextEditNotAfterReload: the buffer read again from disk (Neovim's
// :e!: a ranged change back to the file's text) and the whole text
// replaced in one ranged change (a revert) ask nothing; typing after them
// asks.
func TestNextEditNotAfterReload(t *testing.T) {
	cs := nextSession(t, quietNext)
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.changeTo(uri, renamedGo)
	cs.waitNext("the user's edit answered", func(st complete.NextStats) bool { return st.Empty == 1 })
	cs.changeTo(uri, scaleGo) // :e!
	cs.waitNext("the reload taken as no typing", func(st complete.NextStats) bool { return st.NotTyped == 1 })
	cs.changeRanged(uri, rangedChange{0, len(scaleGo), "// Reverted.\n" + scaleGo})
	if st := cs.nextStats(); st.NotTyped != 2 {
		t.Errorf("kimi.stats nextEdit = %+v, want the whole-text replacement not typed", st)
	}
	time.Sleep(200 * time.Millisecond) // ten times the pause
	cs.changeTo(uri, "// Reverted.\n"+renamedGo)
	st := cs.waitNext("the typing after the reload answered", func(st complete.NextStats) bool { return st.Empty == 2 })
	if st.Requested != 2 {
		t.Errorf("kimi.stats nextEdit = %+v, want 2 requests (the two edits typed), none about the reloads", st)
	}
}

// TestNextEditNotForFormatOnSave: a formatter's change between willSave
// and didSave (VS Code, Neovim), and one that is no keystroke right before
// a didSave with no willSave (Helix), ask nothing; a keystroke right
// before a save is typing and asks, and the saved text is no reload.
func TestNextEditNotForFormatOnSave(t *testing.T) {
	// A pause longer than the save window: the didSave comes inside it.
	cs := newCompSession(t, true, map[string]any{"nextEdit": map[string]any{"debounceMs": 600}}, quietNext)
	uri, _ := cs.file("main.go", scaleGo+"|")
	// The formatters' changes reindent two lines (one character changed
	// would be a keystroke).
	spaces := strings.ReplaceAll(scaleGo, "\treturn", "    return")
	cs.notify("textDocument/willSave", uri)
	cs.changeTo(uri, spaces) // the formatter's
	if st := cs.nextStats(); st.NotTyped != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want the change during the save not typed", st)
	}
	cs.save(uri)
	cs.changeTo(uri, scaleGo) // a formatter's, with no willSave
	cs.save(uri)
	if st := cs.nextStats(); st.NotTyped != 2 {
		t.Errorf("kimi.stats nextEdit = %+v, want the change right before the save not typed", st)
	}
	typed := strings.Replace(scaleGo, "func scale(", "func scales(", 1)
	cs.changeTo(uri, typed) // one keystroke, then the save
	cs.save(uri)
	st := cs.waitNext("the keystroke answered", func(st complete.NextStats) bool { return st.Empty == 1 })
	if st.Requested != 1 || st.NotTyped != 2 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 request, the keystroke's (and 2 edits not typed)", st)
	}
}

// TestNextEditNotForAnotherServersEdit: organize imports (two lines
// removed in one didChange) and a rename across files (one change to each
// of two documents at once) ask nothing, for neither document; typing
// with two cursors (a keystroke at each) asks.
func TestNextEditNotForAnotherServersEdit(t *testing.T) {
	cs := newCompSession(t, true, map[string]any{"nextEdit": map[string]any{"debounceMs": 600}}, quietNext)
	const aGo = "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\t\"strings\"\n)\n\nvar factor = strings.Repeat(\"x\", 2)\n"
	const bGo = "package main\n\nfunc twice() string { return factor + factor }\n"
	a, _ := cs.file("a.go", aGo+"|")
	b, _ := cs.file("b.go", bGo+"|")
	fmtAt := strings.Index(aGo, "\t\"fmt\"\n")
	cs.changeRanged(a, rangedChange{fmtAt, fmtAt + len("\t\"fmt\"\n"), ""}, rangedChange{fmtAt, fmtAt + len("\t\"os\"\n"), ""})
	if st := cs.nextStats(); st.NotTyped != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want organize imports not typed", st)
	}
	cs.changeTo(a, strings.Replace(cs.texts[a], "var factor", "var k", 1))
	cs.changeTo(b, strings.ReplaceAll(bGo, "factor", "k"))
	if st := cs.nextStats(); st.NotTyped != 3 {
		t.Errorf("kimi.stats nextEdit = %+v, want the rename's changes to both documents not typed", st)
	}
	// Two cursors on "k" in b.go: one keystroke at each.
	text := cs.texts[b]
	first := strings.Index(text, "k +")
	second := strings.LastIndex(text, "k }")
	cs.changeRanged(b, rangedChange{first + 1, first + 1, "s"}, rangedChange{second + 2, second + 2, "s"})
	st := cs.waitNext("the two cursors' keystrokes answered", func(st complete.NextStats) bool { return st.Empty == 1 })
	if st.Requested != 1 || st.NotTyped != 3 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 request, the keystrokes' (and 3 edits not typed)", st)
	}
}

// TestNextEditNotAfterAcceptedNorItsUndo: an accepted suggestion and its
// undo ask nothing.
func TestNextEditNotAfterAcceptedNorItsUndo(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.changeTo(uri, renamedGo)
	cs.diagnostics(uri, hasNextEdit)
	cs.changeTo(uri, renamedAll) // accepted
	cs.changeTo(uri, renamedGo)  // undone
	if st := cs.nextStats(); st.Accepted != 1 || st.NotTyped != 2 {
		t.Errorf("kimi.stats nextEdit = %+v, want the accept and its undo not typed", st)
	}
	time.Sleep(200 * time.Millisecond) // ten times the pause
	if st := cs.nextStats(); st.Requested != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 request, none about the undo", st)
	}
}

// TestNextEditNotAfterFixInTwoChanges: an editor that applies a Fix's edit
// in two didChanges, the second after the job ended (no edit of ours in
// flight then): the change that completes it is the Fix's (the edit
// queue's history has its result), and asks nothing.
func TestNextEditNotAfterFixInTwoChanges(t *testing.T) {
	cs := nextSession(t, quietNext, modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.changeTo(uri, renamedGo)
	cs.waitNext("the user's edit answered", func(st complete.NextStats) bool { return st.Empty == 1 })
	half := strings.Replace(renamedGo, "if factor", "if k", 1)
	cs.ed.Handle("workspace/applyEdit", func(json.RawMessage) (any, *lsptest.ResponseError) {
		cs.changeTo(uri, half) // the first of the edit's two hunks
		return map[string]any{"applied": true}, nil
	})
	cs.ed.Handle("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.ResponseError) { return nil, nil })
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.fix", "arguments": []any{map[string]any{
		"uri": uri, "range": rng(2, 0, 8, 0),
	}}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ed.WaitMethod(ctxT(t), "$/progress", func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), `"kind":"end"`)
	}); err != nil {
		t.Fatal(err)
	}
	cs.changeTo(uri, renamedAll) // the second, after the job's end
	if st := cs.nextStats(); st.NotTyped != 2 {
		t.Errorf("kimi.stats nextEdit = %+v, want both parts of the Fix's edit not typed", st)
	}
	time.Sleep(200 * time.Millisecond) // ten times the pause
	if st := cs.nextStats(); st.Requested != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 request (the user's edit), none about the Fix", st)
	}
}
