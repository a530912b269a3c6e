package lsp

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
)

// scaleGo is a function whose parameter the tests rename.
const scaleGo = "package main\n\nfunc scale(v int, factor int) int {\n\tif factor == 0 {\n\t\treturn v\n\t}\n\treturn v * factor\n}\n"

// renamedGo is scaleGo with the parameter renamed in the signature only.
var renamedGo = strings.Replace(scaleGo, "v int, factor int", "v int, k int", 1)

// renameDiff is the model's next edit after the rename: the uses below.
const renameDiff = "--- a/main.go\n+++ b/main.go\n@@ -3,6 +3,6 @@\n func scale(v int, k int) int {\n-\tif factor == 0 {\n+\tif k == 0 {\n \t\treturn v\n \t}\n-\treturn v * factor\n+\treturn v * k\n }\n"

// renamedAll is renamedGo with renameDiff applied.
var renamedAll = strings.ReplaceAll(renamedGo, "factor", "k")

// nextSession is a completion session with next edits after a short pause.
func nextSession(t *testing.T, rules ...modeltest.Rule) *compSession {
	t.Helper()
	return newCompSession(t, true, map[string]any{"nextEdit": map[string]any{"debounceMs": 20}}, rules...)
}

// wireDiag is a published diagnostic as the tests read it.
type wireDiag struct {
	Range    rangeJSON `json:"range"`
	Severity int       `json:"severity"`
	Code     string    `json:"code"`
	Source   string    `json:"source"`
	Message  string    `json:"message"`
	Data     struct {
		ID      uint64 `json:"id"`
		NewText string `json:"newText"`
	} `json:"data"`
}

// diagnostics waits for the newest publishDiagnostics of uri for which
// pred holds and returns its list.
func (cs *compSession) diagnostics(uri string, pred func([]wireDiag) bool) []wireDiag {
	cs.t.Helper()
	var out []wireDiag
	_, err := cs.ed.WaitMethod(ctxT(cs.t), "textDocument/publishDiagnostics", func(raw json.RawMessage) bool {
		var p struct {
			URI         string     `json:"uri"`
			Diagnostics []wireDiag `json:"diagnostics"`
		}
		if json.Unmarshal(raw, &p) != nil || p.URI != uri {
			return false
		}
		if pred(p.Diagnostics) {
			out = p.Diagnostics
			return true
		}
		return false
	})
	if err != nil {
		cs.t.Fatalf("no publishDiagnostics as wanted: %v", err)
	}
	return out
}

func hasNextEdit(ds []wireDiag) bool {
	for _, d := range ds {
		if d.Code == "next-edit" {
			return true
		}
	}
	return false
}

// nextActions asks for the code actions on line.
func (cs *compSession) nextActions(uri string, line int) []struct {
	Title       string          `json:"title"`
	Kind        string          `json:"kind"`
	IsPreferred bool            `json:"isPreferred"`
	Edit        json.RawMessage `json:"edit"`
	Command     *struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	} `json:"command"`
} {
	cs.t.Helper()
	var actions []struct {
		Title       string          `json:"title"`
		Kind        string          `json:"kind"`
		IsPreferred bool            `json:"isPreferred"`
		Edit        json.RawMessage `json:"edit"`
		Command     *struct {
			Command   string            `json:"command"`
			Arguments []json.RawMessage `json:"arguments"`
		} `json:"command"`
	}
	if err := cs.ed.Call(ctxT(cs.t), "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "range": rng(line, 1, line, 1),
		"context": map[string]any{"diagnostics": []any{}, "triggerKind": 2},
	}, &actions); err != nil {
		cs.t.Fatal(err)
	}
	return actions
}

// nextStats returns kimi.stats's nextEdit section.
func (cs *compSession) nextStats() complete.NextStats {
	cs.t.Helper()
	var st struct {
		NextEdit complete.NextStats `json:"nextEdit"`
	}
	if err := cs.ed.Call(ctxT(cs.t), "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
		cs.t.Fatal(err)
	}
	return st.NextEdit
}

// TestNextEditRename: renaming a parameter in the signature gives, after
// the pause, one provider request and a Hint diagnostic with code
// next-edit on the first use below; the preferred quickfix there applies
// the rename as one versioned edit, and its didChange counts it accepted.
func TestNextEditRename(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	ds := cs.diagnostics(uri, hasNextEdit)
	if n := len(cs.prov.Requests()); n != 1 {
		t.Errorf("%d provider requests, want 1", n)
	}
	d := ds[0]
	if d.Severity != 4 || d.Source != "kimi" || !strings.HasPrefix(d.Message, "Kimi: next edit — ") {
		t.Errorf("diagnostic %+v", d)
	}
	if d.Range.Start.Line != 3 || d.Range.Start.Character != 0 {
		t.Errorf("diagnostic at %+v, want the first use below the signature (line 3)", d.Range)
	}
	if d.Data.ID == 0 || !strings.Contains(d.Data.NewText, "if k == 0") {
		t.Errorf("diagnostic data %+v", d.Data)
	}
	if got := cs.nextActions(uri, 0); len(got) != 0 && strings.HasPrefix(got[0].Title, "Kimi: Apply next edit") {
		t.Errorf("next-edit action offered on the signature line: %+v", got)
	}
	actions := cs.nextActions(uri, 3)
	if len(actions) < 2 || !strings.HasPrefix(actions[0].Title, "Kimi: Apply next edit") || actions[0].Kind != "quickfix" ||
		!actions[0].IsPreferred || actions[1].Title != "Kimi: Dismiss next edit" {
		t.Fatalf("code actions %+v", actions)
	}
	var req applyEditRequest
	if err := json.Unmarshal([]byte(`{"edit":`+string(actions[0].Edit)+`}`), &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Edit.DocumentChanges) != 1 {
		t.Fatalf("edit %s: want one versioned document change", actions[0].Edit)
	}
	got := applyWorkspaceEdit(t, []byte(`{"edit":`+string(actions[0].Edit)+`}`), map[string]string{uri: renamedGo}, map[string]int32{uri: 2})[uri]
	if got != renamedAll {
		t.Fatalf("the action's edit gives\n%s\nwant\n%s", got, renamedAll)
	}
	cs.change(uri, got+"|")
	cs.diagnostics(uri, func(ds []wireDiag) bool { return !hasNextEdit(ds) })
	if st := cs.nextStats(); st.Accepted != 1 || st.Shown != 1 || st.Requested < 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 shown, 1 accepted", st)
	}
}

// bidiControls are the bidirectional controls the tests look for.
const bidiControls = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"

// TestNextEditMessageWithoutBidi: a suggested line carrying bidirectional
// controls (U+202E, an isolate) is shown without them, as a review
// finding's message is, in the diagnostic's message and the Apply action's
// title; the edit itself (the diagnostic's data, the action's edit) is the
// model's code verbatim.
func TestNextEditMessageWithoutBidi(t *testing.T) {
	line := "\tif k == 0 { // \u202e}{ \u2066evil\u2069\n"
	diff := strings.Replace(renameDiff, "+\tif k == 0 {\n", "+"+line, 1)
	cs := nextSession(t, modeltest.Rule{Content: diff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	d := cs.diagnostics(uri, hasNextEdit)[0]
	if strings.ContainsAny(d.Message, bidiControls) || !strings.HasPrefix(d.Message, "Kimi: next edit — if k == 0 { // }{ evil") {
		t.Errorf("diagnostic message %q", d.Message)
	}
	if !strings.Contains(d.Data.NewText, line) {
		t.Errorf("diagnostic data's newText %q, want the model's line %q verbatim", d.Data.NewText, line)
	}
	actions := cs.nextActions(uri, 3)
	if len(actions) < 1 || !strings.HasPrefix(actions[0].Title, "Kimi: Apply next edit — if k == 0") {
		t.Fatalf("code actions %+v", actions)
	}
	if strings.ContainsAny(actions[0].Title, bidiControls) {
		t.Errorf("action title %q holds a bidi control", actions[0].Title)
	}
	got := applyWorkspaceEdit(t, []byte(`{"edit":`+string(actions[0].Edit)+`}`), map[string]string{uri: renamedGo}, map[string]int32{uri: 2})[uri]
	if want := strings.Replace(renamedAll, "\tif k == 0 {\n", line, 1); got != want {
		t.Fatalf("the action's edit gives\n%q\nwant the model's answer\n%q", got, want)
	}
}

// TestNextEditBareHunks: an answer of "@@" hunks without a file header, as
// models often write, is a diff of the active file: shown as the headed one.
func TestNextEditBareHunks(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Content: renameDiff[strings.Index(renameDiff, "@@"):]})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	ds := cs.diagnostics(uri, hasNextEdit)
	if d := ds[0]; d.Range.Start.Line != 3 || !strings.Contains(d.Data.NewText, "if k == 0") {
		t.Errorf("diagnostic %+v, want the rename's first use below the signature (line 3)", d)
	}
}

// TestNextEditApplyCommand: kimi.nextEdit.apply sends the suggestion as
// one versioned workspace/applyEdit.
func TestNextEditApplyCommand(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Content: renameDiff})
	var edits []json.RawMessage
	done := make(chan string, 1)
	cs.ed.Handle("workspace/applyEdit", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		edits = append(edits, p)
		done <- ""
		return map[string]any{"applied": true}, nil
	})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	ds := cs.diagnostics(uri, hasNextEdit)
	var out nextEditReply
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.nextEdit.apply", "arguments": []any{map[string]any{"uri": uri, "id": ds[0].Data.ID}},
	}, &out); err != nil {
		t.Fatal(err)
	}
	if !out.Applied {
		t.Fatalf("kimi.nextEdit.apply = %+v", out)
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("no workspace/applyEdit")
	}
	got := applyWorkspaceEdit(t, edits[0], map[string]string{uri: renamedGo}, map[string]int32{uri: 2})[uri]
	if got != renamedAll {
		t.Fatalf("applyEdit gives\n%s\nwant\n%s", got, renamedAll)
	}
	cs.change(uri, got+"|")
	cs.diagnostics(uri, func(ds []wireDiag) bool { return !hasNextEdit(ds) })
	if st := cs.nextStats(); st.Accepted != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 accepted", st)
	}
	if len(edits) != 1 {
		t.Errorf("%d applyEdits, want 1", len(edits))
	}
}

// TestNextEditTypingInsideDrops: typing inside the suggestion's range
// drops it (the diagnostic is cleared) and no edit is applied; typing
// elsewhere keeps it, re-placed.
func TestNextEditTypingInsideDrops(t *testing.T) {
	// No second suggestion: the rule answers once.
	cs := nextSession(t, modeltest.Rule{Content: renameDiff, Times: 1}, modeltest.Rule{Content: ""})
	applied := false
	cs.ed.Handle("workspace/applyEdit", func(json.RawMessage) (any, *lsptest.ResponseError) {
		applied = true
		return map[string]any{"applied": true}, nil
	})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	cs.diagnostics(uri, hasNextEdit)

	// Elsewhere: a comment above the package clause moves it one line down.
	moved := "// Package main scales.\n" + renamedGo
	cs.change(uri, moved+"|")
	ds := cs.diagnostics(uri, func(ds []wireDiag) bool { return hasNextEdit(ds) && ds[0].Range.Start.Line == 4 })
	actions := cs.nextActions(uri, 4)
	if len(actions) == 0 {
		t.Fatal("no action after typing elsewhere")
	}
	got := applyWorkspaceEdit(t, []byte(`{"edit":`+string(actions[0].Edit)+`}`), map[string]string{uri: moved}, map[string]int32{uri: 3})[uri]
	if want := "// Package main scales.\n" + renamedAll; got != want {
		t.Errorf("re-placed edit gives\n%s\nwant\n%s", got, want)
	}
	_ = ds

	// Inside: the user edits the line the suggestion changes.
	inside := strings.Replace(moved, "if factor == 0", "if factor <= 0", 1)
	cs.change(uri, inside+"|")
	cs.diagnostics(uri, func(ds []wireDiag) bool { return !hasNextEdit(ds) })
	if got := cs.nextActions(uri, 4); len(got) > 0 && strings.HasPrefix(got[0].Title, "Kimi: Apply next edit") {
		t.Errorf("action still offered after typing inside: %+v", got)
	}
	var out nextEditReply
	cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.nextEdit.apply", "arguments": []any{map[string]any{"uri": uri}},
	}, &out)
	if out.Applied || applied {
		t.Errorf("an edit was applied after the suggestion was dropped")
	}
	if st := cs.nextStats(); st.Stale != 1 || st.Accepted != 0 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 stale", st)
	}
}

// TestNextEditNeverShown: a reply that changes the lines just typed, one
// that does not apply, and one over nextEdit.maxLines are never shown.
func TestNextEditNeverShown(t *testing.T) {
	for _, tc := range []struct{ name, reply string }{
		{"changes the typed line", "--- a/main.go\n+++ b/main.go\n@@ -3,2 +3,2 @@\n-func scale(v int, k int) int {\n-\tif factor == 0 {\n+func scale(v int, factor int) int {\n+\tif factor == 0 {\n"},
		{"does not apply", "--- a/main.go\n+++ b/main.go\n@@ -3,2 +3,2 @@\n func scale(v int, k int) int {\n-\tif ratio == 0 {\n+\tif k == 0 {\n"},
		{"prose", "You should rename the other uses too."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := nextSession(t, modeltest.Rule{Content: tc.reply})
			uri, _ := cs.file("main.go", scaleGo+"|")
			cs.change(uri, renamedGo+"|")
			deadline := time.Now().Add(20 * time.Second)
			for {
				st := cs.nextStats()
				if st.Refused+st.Empty+st.Failed > 0 {
					if st.Shown != 0 || st.Refused != 1 {
						t.Errorf("kimi.stats nextEdit = %+v, want 1 refused, none shown", st)
					}
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the answer was never judged: %+v", st)
				}
				time.Sleep(10 * time.Millisecond)
			}
			for _, m := range cs.ed.Messages() {
				if m.Method == "textDocument/publishDiagnostics" && strings.Contains(string(m.Params), "next-edit") {
					t.Errorf("published %s", m.Params)
				}
			}
		})
	}
}

// TestNextEditMaxLines: a suggestion changing more lines than
// nextEdit.maxLines is never shown.
func TestNextEditMaxLines(t *testing.T) {
	cs := newCompSession(t, true, map[string]any{"nextEdit": map[string]any{"debounceMs": 20, "maxLines": 1}}, modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	deadline := time.Now().Add(20 * time.Second)
	for st := cs.nextStats(); st.Refused == 0; st = cs.nextStats() {
		if st.Shown > 0 || time.Now().After(deadline) {
			t.Fatalf("kimi.stats nextEdit = %+v, want 1 refused (2 lines changed, maxLines 1)", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNextEditNeverInSecrets: no next edit is asked for a secrets file,
// whatever its URI scheme, nor when nextEdit.enable is false.
func TestNextEditNeverInSecrets(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Content: renameDiff})
	for _, uri := range []string{"untitled:.env", "file://" + cs.dir + "/.env"} {
		cs.open(uri, "A=1\n")
		cs.version[uri] = 1
		cs.change(uri, "A=2\n|")
	}
	// An eligible file after them: its request proves the pause has passed.
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	cs.diagnostics(uri, hasNextEdit)
	if n := len(cs.prov.Requests()); n != 1 {
		t.Errorf("%d provider requests, want 1 (for main.go only)", n)
	}
	cs.neverSent("A=2")
}

// TestNextEditNewerEditHangsUp: an edit while the stream runs hangs it up;
// the burst's last edit makes the one request whose answer is shown.
func TestNextEditNewerEditHangsUp(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Content: renameDiff, DelayMS: 3000, Times: 1}, modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, strings.Replace(scaleGo, "factor int", "kk int", 1)+"|")
	cs.waitArrived(1)
	cs.change(uri, renamedGo+"|")
	cs.diagnostics(uri, hasNextEdit)
	st := cs.nextStats()
	if st.Requested != 2 || st.Cancelled != 1 || st.Shown != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want 2 requests, 1 hung up, 1 shown", st)
	}
}

// TestNextEditInlineCompletion: with the cursor on the suggestion's first
// line, inlineCompletion answers it with its range, without a provider
// request.
func TestNextEditInlineCompletion(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	cs.diagnostics(uri, hasNextEdit)
	n := len(cs.prov.Requests())
	_, ch := cs.inline(uri, map[string]any{"line": 3, "character": 1}, 1)
	l := cs.inlineResult(ch)
	if got := cs.applyInline(uri, l); got != renamedAll {
		t.Errorf("accepting the item gives\n%s\nwant\n%s", got, renamedAll)
	}
	if len(cs.prov.Requests()) != n {
		t.Errorf("the inline item made a provider request")
	}
}

// TestNextEditPullDiagnostics: a client that pulls diagnostics gets
// diagnosticProvider, a refresh when a suggestion appears, and the
// diagnostic through textDocument/diagnostic — and no push.
func TestNextEditPullDiagnostics(t *testing.T) {
	cs := &compSession{texts: map[string]string{}, version: map[string]int32{}}
	cs.prov = modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Content: renameDiff}}}, RequestLog: cs})
	t.Cleanup(cs.prov.Close)
	cs.dir = t.TempDir()
	cs.session = newSessionOpts(t, Options{Config: providerConfig(t, cs.prov)}, nil)
	refreshed := make(chan struct{}, 8)
	cs.ed.Handle("workspace/diagnostic/refresh", func(json.RawMessage) (any, *lsptest.ResponseError) {
		refreshed <- struct{}{}
		return nil, nil
	})
	p := completionInit("file://"+cs.dir, true, map[string]any{"nextEdit": map[string]any{"debounceMs": 20}})
	caps := p["capabilities"].(map[string]any)
	caps["textDocument"].(map[string]any)["diagnostic"] = map[string]any{"dynamicRegistration": false}
	caps["workspace"].(map[string]any)["diagnostics"] = map[string]any{"refreshSupport": true}
	res := cs.initialize(p)
	if _, ok := res["capabilities"].(map[string]any)["diagnosticProvider"]; !ok {
		t.Fatalf("no diagnosticProvider for a pulling client: %v", res["capabilities"])
	}
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	select {
	case <-refreshed:
	case <-time.After(20 * time.Second):
		t.Fatal("no workspace/diagnostic/refresh")
	}
	var rep struct {
		Kind  string     `json:"kind"`
		Items []wireDiag `json:"items"`
	}
	if err := cs.ed.Call(ctxT(t), "textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": uri}}, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Kind != "full" || !hasNextEdit(rep.Items) {
		t.Errorf("pulled %+v", rep)
	}
	for _, m := range cs.ed.Messages() {
		if m.Method == "textDocument/publishDiagnostics" {
			t.Errorf("pushed to a pulling client: %s", m.Params)
		}
	}
}

// TestNextEditHungUpBurstStaysTyped: the rename's stream is hung up by a
// keystroke elsewhere (a comment at the top); the answer to that last edit
// would undo the rename. The rename is still what the user just typed: the
// reply is never shown.
func TestNextEditHungUpBurstStaysTyped(t *testing.T) {
	undo := "--- a/main.go\n+++ b/main.go\n@@ -3,3 +3,3 @@\n \n-func scale(v int, k int) int {\n+func scale(v int, factor int) int {\n \tif factor == 0 {\n"
	cs := nextSession(t, modeltest.Rule{Content: "", DelayMS: 3000, Times: 1}, modeltest.Rule{Content: undo})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	cs.waitArrived(1)
	cs.change(uri, "// x\n"+renamedGo+"|")
	deadline := time.Now().Add(20 * time.Second)
	for st := cs.nextStats(); st.Refused+st.Shown == 0; st = cs.nextStats() {
		if time.Now().After(deadline) {
			t.Fatalf("the second answer was never judged: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := cs.nextStats(); st.Shown != 0 || st.Refused != 1 || st.Cancelled != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want the first stream hung up and the undo refused", st)
	}
}

// TestNextEditDisabledAtRuntime: nextEdit.enable turned false in the
// editor's settings drops the suggestion shown (its diagnostic is cleared,
// its code actions go) and hangs up a stream on its way, whose answer is
// never shown.
func TestNextEditDisabledAtRuntime(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Content: renameDiff, Times: 1}, modeltest.Rule{Content: renameDiff, DelayMS: 3000})
	var mu sync.Mutex
	enable := true
	cs.ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) {
		mu.Lock()
		defer mu.Unlock()
		return []any{map[string]any{"nextEdit": map[string]any{"enable": enable, "debounceMs": 20}}}, nil
	})
	set := func(on bool) {
		mu.Lock()
		enable = on
		mu.Unlock()
		cs.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": nil})
		waitFor(t, func() bool { return cs.srv.config().NextEdit.Enable == on })
	}
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	cs.diagnostics(uri, hasNextEdit)
	set(false)
	cs.diagnostics(uri, func(ds []wireDiag) bool { return !hasNextEdit(ds) })
	if got := cs.nextActions(uri, 3); len(got) > 0 && strings.HasPrefix(got[0].Title, "Kimi: Apply next edit") {
		t.Errorf("action still offered with nextEdit.enable false: %+v", got)
	}

	set(true)
	cs.change(uri, "// x\n"+renamedGo+"|")
	cs.waitArrived(2)
	set(false)
	deadline := time.Now().Add(20 * time.Second)
	for st := cs.nextStats(); st.Cancelled == 0; st = cs.nextStats() {
		if time.Now().After(deadline) {
			t.Fatalf("the stream on its way was not hung up: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := cs.nextStats(); st.Shown != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want only the first suggestion shown", st)
	}
}

// TestNextEditDismissedStaysDismissed: a suggestion the user dismissed is
// not shown again when the model proposes the very same change after the
// user's next edit elsewhere.
func TestNextEditDismissedStaysDismissed(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	ds := cs.diagnostics(uri, hasNextEdit)
	var out nextEditReply
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.nextEdit.dismiss", "arguments": []any{map[string]any{"uri": uri, "id": ds[0].Data.ID}},
	}, &out); err != nil || !out.Dismissed {
		t.Fatalf("kimi.nextEdit.dismiss = %+v, %v", out, err)
	}
	cs.diagnostics(uri, func(ds []wireDiag) bool { return !hasNextEdit(ds) })
	cs.change(uri, "// Package main scales.\n"+renamedGo+"|")
	deadline := time.Now().Add(20 * time.Second)
	for st := cs.nextStats(); st.Refused+st.Shown < 2; st = cs.nextStats() {
		if time.Now().After(deadline) {
			t.Fatalf("the second answer was never judged: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := cs.nextStats(); st.Shown != 1 || st.Refused != 1 || st.Dismissed != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want the dismissed change not shown again", st)
	}
}

// TestNextEditPullWithoutRefresh: a client that pulls diagnostics but
// cannot be sent workspace/diagnostic/refresh would see a suggestion (which
// appears after the pause, with no edit) only at its next pull, after its
// next edit: it is declared no diagnosticProvider and gets the suggestion
// pushed.
func TestNextEditPullWithoutRefresh(t *testing.T) {
	cs := &compSession{texts: map[string]string{}, version: map[string]int32{}}
	cs.prov = modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Content: renameDiff}}}, RequestLog: cs})
	t.Cleanup(cs.prov.Close)
	cs.dir = t.TempDir()
	cs.session = newSessionOpts(t, Options{Config: providerConfig(t, cs.prov)}, nil)
	p := completionInit("file://"+cs.dir, true, map[string]any{"nextEdit": map[string]any{"debounceMs": 20}})
	p["capabilities"].(map[string]any)["textDocument"].(map[string]any)["diagnostic"] = map[string]any{"dynamicRegistration": false}
	res := cs.initialize(p)
	if dp, ok := res["capabilities"].(map[string]any)["diagnosticProvider"]; ok {
		t.Errorf("diagnosticProvider %v declared to a client without refreshSupport", dp)
	}
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	cs.diagnostics(uri, hasNextEdit)
}

// TestNextEditNotAfterJobEdit: a job's edit landing on the document (here
// a Rewrite) is the model's own, like an accepted suggestion: no next edit
// is asked about it; the user's next edit asks as usual.
func TestNextEditNotAfterJobEdit(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Model: config.DefaultFastModel, Content: ""}, modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", renamedGo+"|")
	landed := make(chan struct{}, 1)
	cs.ed.Handle("workspace/applyEdit", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		// As editors do: the didChange goes out before the answer.
		got := applyWorkspaceEdit(t, p, map[string]string{uri: renamedGo}, map[string]int32{uri: 1})[uri]
		cs.change(uri, got+"|")
		landed <- struct{}{}
		return map[string]any{"applied": true}, nil
	})
	cs.ed.Handle("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.ResponseError) { return nil, nil })
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.rewrite", "arguments": []any{map[string]any{
		"uri": uri, "range": rng(2, 0, 8, 0), "instruction": "rename factor to k",
	}}}, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-landed:
	case <-ctxT(t).Done():
		t.Fatal("the Rewrite's edit never came")
	}
	// Ten times the pause: a next edit about the job's edit would be asked
	// by now.
	time.Sleep(200 * time.Millisecond)
	if st := cs.nextStats(); st.Requested != 0 || cs.texts[uri] != renamedAll {
		t.Errorf("after the Rewrite's edit: kimi.stats nextEdit = %+v, want no request (text %q)", st, cs.texts[uri])
	}
	cs.change(uri, "// Package main scales.\n"+renamedAll+"|")
	deadline := time.Now().Add(20 * time.Second)
	for st := cs.nextStats(); st.Empty == 0; st = cs.nextStats() {
		if time.Now().After(deadline) {
			t.Fatalf("the user's edit was never answered: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := cs.nextStats(); st.Requested != 1 {
		t.Errorf("kimi.stats nextEdit = %+v, want 1 request: the user's edit's, none about the Rewrite's", st)
	}
}

// applyNextEdit has the server apply uri's suggestion (kimi.nextEdit.apply).
func (cs *compSession) applyNextEdit(uri string, id uint64) nextEditReply {
	cs.t.Helper()
	var out nextEditReply
	if err := cs.ed.Call(ctxT(cs.t), "workspace/executeCommand", map[string]any{
		"command": "kimi.nextEdit.apply", "arguments": []any{map[string]any{"uri": uri, "id": id}},
	}, &out); err != nil {
		cs.t.Fatal(err)
	}
	return out
}

// TestNextEditApplyIsAJob: kimi.nextEdit.apply lands its edit as a job of
// the engine: kimi.stats lists it while it lands, and its applyEdit goes
// out from it.
func TestNextEditApplyIsAJob(t *testing.T) {
	landing, release := make(chan string, 1), make(chan struct{})
	cs := newCompSessionKnobs(t, Options{}, testKnobs{hook: func(point string, arg any) {
		if point == "nextEdit.apply" {
			landing <- "landing"
			<-release
		}
	}}, true, map[string]any{"nextEdit": map[string]any{"debounceMs": 20}}, modeltest.Rule{Content: renameDiff})
	edits := make(chan json.RawMessage, 4)
	cs.ed.Handle("workspace/applyEdit", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		edits <- p
		return map[string]any{"applied": true}, nil
	})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	ds := cs.diagnostics(uri, hasNextEdit)
	if out := cs.applyNextEdit(uri, ds[0].Data.ID); !out.Applied {
		t.Fatalf("kimi.nextEdit.apply = %+v", out)
	}
	select {
	case <-landing:
	case <-time.After(20 * time.Second):
		t.Fatal("the next edit did not land through the job engine")
	}
	var st statsReply
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Jobs) != 1 || st.Jobs[0].Title != "Kimi: next edit" {
		t.Errorf("kimi.stats jobs while the next edit lands = %+v, want the one job Kimi: next edit", st.Jobs)
	}
	close(release)
	select {
	case p := <-edits:
		if got := applyWorkspaceEdit(t, p, map[string]string{uri: renamedGo}, map[string]int32{uri: 2})[uri]; got != renamedAll {
			t.Fatalf("applyEdit gives\n%s\nwant\n%s", got, renamedAll)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no workspace/applyEdit")
	}
}

// TestNextEditApplyPanicFailsItAlone: a panic while a next edit lands
// fails that edit alone — logged with its stack, an error shown, no
// applyEdit — and the server goes on: the same suggestion applied again
// lands.
func TestNextEditApplyPanicFailsItAlone(t *testing.T) {
	var once sync.Once
	cs := newCompSessionKnobs(t, Options{}, testKnobs{hook: func(point string, arg any) {
		if point == "nextEdit.apply" {
			once.Do(func() { panic("test hook: nextEdit.apply") })
		}
	}}, true, map[string]any{"nextEdit": map[string]any{"debounceMs": 20}}, modeltest.Rule{Content: renameDiff})
	edits := make(chan json.RawMessage, 4)
	cs.ed.Handle("workspace/applyEdit", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		edits <- p
		return map[string]any{"applied": true}, nil
	})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	ds := cs.diagnostics(uri, hasNextEdit)
	if out := cs.applyNextEdit(uri, ds[0].Data.ID); !out.Applied {
		t.Fatalf("kimi.nextEdit.apply = %+v", out)
	}
	if _, err := cs.ed.WaitMethod(ctxT(t), "window/showMessage", func(raw json.RawMessage) bool {
		return strings.Contains(string(raw), "Kimi: next edit: internal error")
	}); err != nil {
		t.Fatalf("no error shown for the panicked next edit: %v", err)
	}
	if log := cs.logbuf.String(); !strings.Contains(log, "test hook: nextEdit.apply") || !strings.Contains(log, "goroutine") {
		t.Errorf("the log lacks the panic and its stack:\n%s", log)
	}
	select {
	case <-edits:
		t.Fatal("the panicked next edit sent an applyEdit")
	default:
	}
	if out := cs.applyNextEdit(uri, ds[0].Data.ID); !out.Applied {
		t.Fatalf("kimi.nextEdit.apply after the panic = %+v", out)
	}
	select {
	case p := <-edits:
		if got := applyWorkspaceEdit(t, p, map[string]string{uri: renamedGo}, map[string]int32{uri: 2})[uri]; got != renamedAll {
			t.Fatalf("applyEdit gives\n%s\nwant\n%s", got, renamedAll)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no workspace/applyEdit after the panic")
	}
}

// TestNextEditMessageDiff (issue 32 item 6): after its first line the
// diagnostic's message shows the change as a diff — each replaced line
// "- ", each new line "+ ", edit by edit, indentation kept — so an editor
// that shows only the diagnostic (Helix, Emacs's Flymake) previews what
// Apply lands; the first line is unchanged.
func TestNextEditMessageDiff(t *testing.T) {
	cs := nextSession(t, modeltest.Rule{Content: renameDiff})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	d := cs.diagnostics(uri, hasNextEdit)[0]
	lines := strings.Split(d.Message, "\n")
	want := []string{"- \tif factor == 0 {", "+ \tif k == 0 {", "- \treturn v * factor", "+ \treturn v * k"}
	if len(lines) != 5 || !strings.HasPrefix(lines[0], "Kimi: next edit — ") || strings.Join(lines[1:], "\n") != strings.Join(want, "\n") {
		t.Errorf("message %q, want its first line and then\n%s", d.Message, strings.Join(want, "\n"))
	}
}

// TestNextEditMessageBounds: the diff in the message shows at most
// nextEditPreviewLines lines, then how many more; a long line is cut; a
// control character inside a line goes, its indentation stays; an insertion
// has no "- " line.
func TestNextEditMessageBounds(t *testing.T) {
	text := "a\nb\n"
	long := strings.Repeat("x", 300)
	var b strings.Builder
	for i := 0; i < 10; i++ {
		b.WriteString("\tnew \x1b[31mline\n")
	}
	sug := &complete.NextSuggestion{Summary: "s", Edits: []patch.Edit{{Start: 0, End: 2, NewText: long + "\n"}, {Start: 4, End: 4, NewText: b.String()}}}
	lines := strings.Split(nextEditMessage(text, sug), "\n")
	if len(lines) != 1+nextEditPreviewLines+1 {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	if lines[1] != "- a" || utf8.RuneCountInString(lines[2]) != nextEditPreviewWidth || !strings.HasSuffix(lines[2], "…") {
		t.Errorf("first edit %q", lines[1:3])
	}
	if lines[3] != "+ \tnew line" {
		t.Errorf("a new line %q, want its tab and no escape sequence", lines[3])
	}
	if got := lines[len(lines)-1]; got != "… 4 more lines" {
		t.Errorf("last line %q", got)
	}
}
