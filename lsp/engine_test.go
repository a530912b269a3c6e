package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// liveEditor is the fake editor's own copy of the open documents, kept as
// a real editor keeps it: an applyEdit must name the current version or it
// is refused ("version mismatch", as VS Code and Neovim refuse it); an
// applied edit bumps the version and is reported with a didChange — sent
// before the answer for some edits and a little after it for others, as
// editors that debounce didChange do.
type liveEditor struct {
	js *jobSession

	// mu guards the fields below.
	mu       sync.Mutex
	text     map[string]string
	version  map[string]int32
	applies  int
	refused  []string
	hold     chan struct{} // if set, applyEdit waits for it to close
	received chan struct{} // if set, signalled when an applyEdit arrives
}

func (js *jobSession) liveEditor() *liveEditor {
	le := &liveEditor{js: js, text: map[string]string{}, version: map[string]int32{}}
	js.ed.Handle("workspace/applyEdit", le.applyEdit)
	return le
}

// open writes and opens a file the live editor tracks.
func (le *liveEditor) open(name, text string) string {
	uri := le.js.file(name, text)
	le.mu.Lock()
	le.text[uri], le.version[uri] = text, 1
	le.mu.Unlock()
	return uri
}

func (le *liveEditor) applyEdit(raw json.RawMessage) (any, *lsptest.ResponseError) {
	le.mu.Lock()
	hold, received := le.hold, le.received
	le.mu.Unlock()
	if received != nil {
		received <- struct{}{}
	}
	if hold != nil {
		<-hold
	}
	var p applyEditRequest
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, &lsptest.ResponseError{Code: -32602, Message: err.Error()}
	}
	le.mu.Lock()
	defer le.mu.Unlock()
	le.applies++
	for _, dc := range p.Edit.DocumentChanges {
		uri := dc.TextDocument.URI
		if v := dc.TextDocument.Version; v == nil || *v != le.version[uri] {
			reason := fmt.Sprintf("version mismatch %v != %d", dc.TextDocument.Version, le.version[uri])
			le.refused = append(le.refused, reason)
			return map[string]any{"applied": false, "failureReason": reason}, nil
		}
	}
	type change struct {
		uri     string
		version int32
		text    string
	}
	var changes []change
	for _, dc := range p.Edit.DocumentChanges {
		uri := dc.TextDocument.URI
		text := dc.apply(le.text[uri])
		le.text[uri] = text
		le.version[uri]++
		changes = append(changes, change{uri, le.version[uri], text})
	}
	notify := func() {
		for _, c := range changes {
			le.js.ed.Notify("textDocument/didChange", map[string]any{
				"textDocument":   map[string]any{"uri": c.uri, "version": c.version},
				"contentChanges": []any{map[string]any{"text": c.text}},
			})
		}
	}
	if le.applies%2 == 0 {
		notify() // before the answer
	} else {
		go func() { // after it, as a debounced didChange
			time.Sleep(30 * time.Millisecond)
			notify()
		}()
	}
	return map[string]any{"applied": true}, nil
}

func (le *liveEditor) state(uri string) (string, int, []string) {
	le.mu.Lock()
	defer le.mu.Unlock()
	return le.text[uri], le.applies, append([]string(nil), le.refused...)
}

// settings sets the editor's settings (workspace/configuration, pulled on
// didChangeConfiguration) and waits until applied(the server) holds.
func (js *jobSession) settings(kimi map[string]any, applied func(*Server) bool) {
	js.t.Helper()
	js.ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) {
		return []any{kimi}, nil
	})
	js.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": nil})
	deadline := time.Now().Add(30 * time.Second)
	for !applied(js.session.srv) {
		if time.Now().After(deadline) {
			js.t.Fatalf("settings %v not applied", kimi)
		}
		time.Sleep(time.Millisecond)
	}
}

// setMaxConcurrent sets jobs.maxConcurrent through the editor's settings.
func (js *jobSession) setMaxConcurrent(n int) {
	js.t.Helper()
	js.settings(map[string]any{"jobs": map[string]any{"maxConcurrent": n}}, func(s *Server) bool { return s.jobs.Limit() == n })
}

// manyFuncs is a file of n small functions, F0 to F(n-1), each three lines
// followed by a blank line after line 2 ("package p", blank).
func manyFuncs(n int) string {
	var b strings.Builder
	b.WriteString("package p\n\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "func F%d() int {\n\treturn %d\n}\n\n", i, i)
	}
	return b.String()
}

// funcFix is the rule answering a Fix of F<i> with a diff changing its
// return value to want.
func funcFix(i int, want string, delayMS int) modeltest.Rule {
	line := 3 + 4*i
	return modeltest.Rule{
		Match:   fmt.Sprintf("<|selection|>func F%d() int {", i),
		DelayMS: delayMS,
		Content: fmt.Sprintf("```diff\n--- a/many.go\n+++ b/many.go\n@@ -%d,3 +%d,3 @@\n func F%d() int {\n-\treturn %d\n+\treturn %s\n }\n```\nFixed.", line, line, i, i, want),
	}
}

// TestConcurrentFixesOneFile: 12 Fixes on distinct functions of one file,
// run at once and finishing in a scrambled order, all land: each edit is
// rebased onto the document as our earlier edits left it, whether the
// editor's didChange for those came before or after its answer.
func TestConcurrentFixesOneFile(t *testing.T) {
	const n = 12
	var rules []modeltest.Rule
	for i := 0; i < n; i++ {
		rules = append(rules, funcFix(i, fmt.Sprintf("%d * 10", i), (i*173)%400))
	}
	js := newJobSession(t, nil, rules...)
	le := js.liveEditor()
	uri := le.open("many.go", manyFuncs(n))
	for i := 0; i < n; i++ {
		js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2+4*i, 0, 4+4*i, 1)}, fmt.Sprintf("fix-%d", i))
	}
	for i := 0; i < n; i++ {
		if end := js.progressEnd(fmt.Sprintf(`"fix-%d"`, i)); !strings.HasPrefix(end, "1 hunk in 1 file applied") {
			t.Errorf("fix %d ended %q", i, end)
		}
	}
	text, applies, refused := le.state(uri)
	want := manyFuncs(n)
	for i := 0; i < n; i++ {
		want = strings.Replace(want, fmt.Sprintf("\treturn %d\n", i), fmt.Sprintf("\treturn %d * 10\n", i), 1)
	}
	if text != want {
		t.Errorf("editor text after the fixes:\n%s\nwant:\n%s", text, want)
	}
	if applies != n || len(refused) > 0 {
		t.Errorf("%d applyEdits, refused %q; want %d, none refused", applies, refused, n)
	}
	if got := js.text(uri, n+1); got != want {
		t.Errorf("server copy differs from the editor's")
	}
}

// TestOverlapWithEarlierEdit: a Fix whose lines an earlier Fix of ours
// changed after it read them is refused with a message naming that edit,
// and never sent to the editor.
func TestOverlapWithEarlierEdit(t *testing.T) {
	js := newJobSession(t, nil, funcFix(3, "30", 0), modeltest.Rule{
		Match:   "<|selection|>\treturn 3",
		DelayMS: 600,
		Content: "```diff\n--- a/many.go\n+++ b/many.go\n@@ -15,3 +15,3 @@\n func F3() int {\n-\treturn 3\n+\treturn 33\n }\n```",
	})
	le := js.liveEditor()
	uri := le.open("many.go", manyFuncs(6))
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(14, 0, 16, 1)}, "whole")
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(15, 0, 15, 9)}, "line")
	if end := js.progressEnd(`"whole"`); !strings.HasPrefix(end, "1 hunk in 1 file applied") {
		t.Fatalf("first fix ended %q", end)
	}
	end := js.progressEnd(`"line"`)
	if !strings.HasPrefix(end, "not applied: many.go: the edit overlaps an earlier edit (Kimi: Fix)") {
		t.Errorf("second fix ended %q, want a refusal naming the earlier edit", end)
	}
	text, applies, refused := le.state(uri)
	if applies != 1 || len(refused) > 0 || !strings.Contains(text, "return 30\n") {
		t.Errorf("%d applyEdits (refused %q), text has return 30: %v; want only the first edit sent", applies, refused, strings.Contains(text, "return 30\n"))
	}
}

// TestExplainAndFixCoexist: Explain and Fix on one range are different
// work: neither supersedes the other, both finish.
func TestExplainAndFixCoexist(t *testing.T) {
	fix := funcFix(1, "10", 0)
	fix.Match = `action="fix"`
	fix.Chunks, fix.IntervalMS = 20, 20
	js := newJobSession(t, nil, fix, modeltest.Rule{Match: `action="explain"`, Content: explainText, Chunks: 20, IntervalMS: 20})
	le := js.liveEditor()
	uri := le.open("many.go", manyFuncs(3))
	args := map[string]any{"uri": uri, "range": rng(6, 0, 8, 1)}
	js.run("kimi.explain", args, "ex")
	js.run("kimi.fix", args, "fx")
	if end := js.progressEnd(`"ex"`); !strings.HasPrefix(end, "explanation ready") {
		t.Errorf("explain ended %q", end)
	}
	if end := js.progressEnd(`"fx"`); !strings.HasPrefix(end, "1 hunk in 1 file applied") {
		t.Errorf("fix ended %q", end)
	}
}

// TestMaxConcurrentStreams: with jobs.maxConcurrent = 3 from the editor's
// settings, 10 jobs never hold more than 3 provider streams open (the
// stand-in counts them), the others report their place in the queue, and
// all 10 finish.
func TestMaxConcurrentStreams(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: `action="explain"`, Content: explainText, Chunks: 10, IntervalMS: 20})
	js.setMaxConcurrent(3)
	uri := js.file("many.go", manyFuncs(10))
	for i := 0; i < 10; i++ {
		js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(2+4*i, 0, 4+4*i, 1)}, fmt.Sprintf("ex-%d", i))
	}
	queued := 0
	for i := 0; i < 10; i++ {
		tok := fmt.Sprintf(`"ex-%d"`, i)
		if end := js.progressEnd(tok); !strings.HasPrefix(end, "explanation ready") {
			t.Errorf("job %d ended %q", i, end)
		}
		for _, v := range js.progressOf(tok) {
			if strings.HasPrefix(v.Message, "queued (") && strings.HasSuffix(v.Message, " ahead)") {
				queued++
				break
			}
		}
	}
	if _, peak := js.srv.Open(); peak != 3 {
		t.Errorf("at most %d provider streams were open at once, want 3", peak)
	}
	if n := len(js.srv.Requests()); n != 10 {
		t.Errorf("%d provider requests, want 10", n)
	}
	if queued < 5 {
		t.Errorf("%d jobs reported their place in the queue, want at least 5 of the 7 that waited", queued)
	}
}

// TestJobPanicKeepsServing: a panic in a job, or in its progress timer,
// fails that job with "internal error — please report" and its stack in
// the log; the server goes on answering and running jobs.
func TestJobPanicKeepsServing(t *testing.T) {
	for _, point := range []string{"job", "progress"} {
		t.Run(point, func(t *testing.T) {
			var once sync.Once
			knobs := testKnobs{hook: func(p string, arg any) {
				if p == point {
					once.Do(func() { panic("test hook: " + point) })
				}
			}}
			js := newJobSessionKnobs(t, Options{}, knobs, "", nil, modeltest.Rule{Match: `action="explain"`, Content: explainText, Chunks: 20, IntervalMS: 10})
			uri := js.file("a.go", "package a\n\nfunc A() {}\n")
			js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(2, 0, 2, 11)}, "boom")
			if end := js.progressEnd(`"boom"`); !strings.HasPrefix(end, "internal error — please report") {
				t.Errorf("panicked job ended %q", end)
			}
			if !strings.Contains(js.logbuf.String(), "test hook: "+point) || !strings.Contains(js.logbuf.String(), "goroutine") {
				t.Errorf("the log lacks the panic and its stack")
			}
			var actions []codeAction
			if err := js.ed.Call(ctxT(t), "textDocument/codeAction", map[string]any{
				"textDocument": map[string]any{"uri": uri}, "range": rng(2, 0, 2, 0), "context": map[string]any{"diagnostics": []any{}, "triggerKind": triggerInvoked},
			}, &actions); err != nil || len(actions) == 0 {
				t.Errorf("codeAction after the panic: %v, %d actions", err, len(actions))
			}
			js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(0, 0, 0, 9)}, "after")
			if end := js.progressEnd(`"after"`); !strings.HasPrefix(end, "explanation ready") {
				t.Errorf("next job ended %q", end)
			}
		})
	}
}

// TestSnapshotTakenOnArrival (#11.5): a didChange read after an
// executeCommand cannot shift the command's range, even when the request's
// goroutine runs late: the job works on the text as it was when the
// request arrived.
func TestSnapshotTakenOnArrival(t *testing.T) {
	release := make(chan struct{})
	knobs := testKnobs{hook: func(p string, arg any) {
		if p == "request" && arg == "workspace/executeCommand" {
			<-release
		}
	}}
	js := newJobSessionKnobs(t, Options{}, knobs, "", nil, modeltest.Rule{Match: `action="explain"`, Content: "ok"})
	before := "package a\n\nfunc Target() {}\n\nfunc Other() {}\n"
	uri := js.file("a.go", before)
	ch, err := js.ed.Send(js.ed.NextID(), "workspace/executeCommand", map[string]any{
		"command": "kimi.explain", "arguments": []any{map[string]any{"uri": uri, "range": rng(2, 0, 2, 17)}}, "workDoneToken": "snap",
	})
	if err != nil {
		t.Fatal(err)
	}
	// The user inserts two lines at the top; the read loop applies it while
	// the request's goroutine is held.
	js.ed.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"range": rng(0, 0, 0, 0), "text": "// one\n// two\n"}},
	})
	js.text(uri, 2)
	close(release)
	if _, err := lsptest.Await(ctxT(t), ch); err != nil {
		t.Fatal(err)
	}
	js.progressEnd(`"snap"`)
	body := string(js.srv.Requests()[0].Body)
	if !strings.Contains(body, "<|selection|>func Target() {}<|/selection|>") {
		t.Errorf("the job's selection moved with the later didChange; prompt tail: %s", body[max(0, len(body)-600):])
	}
}

// TestCancelWhileApplyEditPending (#12.11): a job cancelled while the
// editor holds its applyEdit waits for the answer and reports what the
// editor did.
func TestCancelWhileApplyEditPending(t *testing.T) {
	js := newJobSession(t, nil, funcFix(0, "7", 0))
	le := js.liveEditor()
	hold, received := make(chan struct{}), make(chan struct{}, 1)
	le.hold, le.received = hold, received
	uri := le.open("many.go", manyFuncs(1))
	job := js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "late")
	select {
	case <-received:
	case <-ctxT(t).Done():
		t.Fatal("no applyEdit")
	}
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.cancel", "arguments": []any{map[string]any{"job": job}}}, nil); err != nil {
		t.Fatal(err)
	}
	close(hold)
	end := js.progressEnd(`"late"`)
	if !strings.Contains(end, "the editor applied it: 1 hunk in 1 file applied") {
		t.Errorf("end %q, want it to say the editor applied the edit", end)
	}
	if text, _, _ := le.state(uri); !strings.Contains(text, "return 7") {
		t.Errorf("the editor did not get the edit")
	}
}

// TestKeyNeverShown (#12.6): the provider echoes the API key; no progress
// report, message or explanation file shows it.
func TestKeyNeverShown(t *testing.T) {
	echo := "Here is your key: " + modeltest.DefaultKey + " — keep it safe. " + strings.Repeat("More text. ", 30)
	js := newJobSession(t, nil, modeltest.Rule{Match: `action="explain"`, Reasoning: "key " + modeltest.DefaultKey, Content: echo, Chunks: 40, IntervalMS: 5})
	uri := js.file("a.go", "package a\n")
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(0, 0, 0, 9)}, "k")
	js.progressEnd(`"k"`)
	for _, m := range js.ed.Messages() {
		if strings.Contains(string(m.Params), modeltest.DefaultKey[:14]) {
			t.Errorf("%s shows the key: %s", m.Method, m.Params)
		}
	}
	js.mu.Lock()
	defer js.mu.Unlock()
	if len(js.docs) != 1 {
		t.Fatalf("showDocument calls %d", len(js.docs))
	}
	for _, text := range js.docs {
		if strings.Contains(text, modeltest.DefaultKey) || !strings.Contains(text, "[REDACTED]") {
			t.Errorf("explanation file: %q", text)
		}
	}
}

// TestLongAnswerNotAMessage (#12.12): an edit action answered with a long
// text and no diff never becomes a huge window/showMessage: with
// showDocument the answer opens as a document; without it the message is
// capped and says where the whole text is.
func TestLongAnswerNotAMessage(t *testing.T) {
	long := "I would rather not change this code, because:\n" + strings.Repeat("this line explains one more reason in detail.\n", 3000)
	for _, showDoc := range []bool{true, false} {
		t.Run(fmt.Sprintf("showDocument=%v", showDoc), func(t *testing.T) {
			var params map[string]any
			if !showDoc {
				params = lsptest.DefaultInitializeParams("")
				params["capabilities"].(map[string]any)["window"] = map[string]any{"workDoneProgress": true}
			}
			js := newJobSession(t, params, modeltest.Rule{Match: `action="fix"`, Content: long, Chunks: 8})
			if !showDoc {
				// No folder in params: root the session like the others.
				js.ed.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
					"added": []any{map[string]any{"uri": string(workspace.FileURI(js.dir)), "name": "root"}}, "removed": []any{}}})
			}
			uri := js.file("a.go", "package a\n\nfunc A() {}\n")
			js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 2, 11)}, "long")
			if end := js.progressEnd(`"long"`); !strings.HasPrefix(end, "no change proposed") {
				t.Errorf("end %q", end)
			}
			for _, m := range js.ed.Messages() {
				if m.Method == "window/showMessage" && len(m.Params) > 3000 {
					t.Errorf("a showMessage of %d bytes", len(m.Params))
				}
			}
			if showDoc {
				js.mu.Lock()
				defer js.mu.Unlock()
				if len(js.docs) != 1 {
					t.Fatalf("showDocument calls: %d, want 1", len(js.docs))
				}
				for _, text := range js.docs {
					if !strings.Contains(text, long) {
						t.Errorf("the document does not hold the whole answer")
					}
				}
				return
			}
			m, err := js.ed.WaitMethod(ctxT(t), "window/showMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "rather not change") })
			if err != nil {
				t.Fatal(err)
			}
			var sm struct {
				Message string `json:"message"`
			}
			json.Unmarshal(m.Params, &sm)
			i := strings.Index(sm.Message, "the whole text is in ")
			if i < 0 || utf8.RuneCountInString(sm.Message) > 2300 {
				t.Fatalf("message of %d characters, tail %q", utf8.RuneCountInString(sm.Message), sm.Message[max(0, len(sm.Message)-200):])
			}
			file := strings.TrimSuffix(sm.Message[i+len("the whole text is in "):], ")")
			b, err := os.ReadFile(file)
			if err != nil || !strings.Contains(string(b), long) {
				t.Errorf("the file %s does not hold the whole answer: %v", file, err)
			}
		})
	}
}

// TestShutdownEndsJobs: shutdown cancels every job, queued or running, and
// answers only once their ends went out.
func TestShutdownEndsJobs(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: `action="explain"`, Content: strings.Repeat("slow ", 200), Chunks: 200, IntervalMS: 30})
	js.setMaxConcurrent(1)
	uri := js.file("many.go", manyFuncs(2))
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "running")
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(6, 0, 8, 1)}, "queued")
	if _, err := js.ed.WaitMethod(ctxT(t), "$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), "queued (0 ahead)") }); err != nil {
		t.Fatal(err)
	}
	if err := js.ed.Call(ctxT(t), "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	var reply time.Time
	for _, m := range js.ed.Messages() {
		if m.IsResponse() {
			reply = m.At
		}
	}
	for _, tok := range []string{`"running"`, `"queued"`} {
		m, err := js.ed.WaitMethod(ctxT(t), "$/progress", func(p json.RawMessage) bool {
			return strings.Contains(string(p), tok) && strings.Contains(string(p), `"end"`)
		})
		if err != nil {
			t.Fatalf("%s: no end: %v", tok, err)
		}
		if !strings.Contains(string(m.Params), "the server is shutting down") || m.At.After(reply) {
			t.Errorf("%s ended with %s at %v, after the shutdown reply (%v)", tok, m.Params, m.At, reply)
		}
	}
}

// TestCancelQueuedJob: a job waiting for a stream slot is cancelled by its
// progress token (and by kimi.cancel) at once, without ever reaching the
// provider; the jobs behind it move up.
func TestCancelQueuedJob(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: `action="explain"`, Content: strings.Repeat("slow ", 100), Chunks: 60, IntervalMS: 15})
	js.setMaxConcurrent(1)
	uri := js.file("many.go", manyFuncs(4))
	queuedAs := func(tok, place string) {
		t.Helper()
		if _, err := js.ed.WaitMethod(ctxT(t), "$/progress", func(p json.RawMessage) bool {
			return strings.Contains(string(p), `"token":`+tok) && strings.Contains(string(p), "queued ("+place+" ahead)")
		}); err != nil {
			var seen []string
			for _, m := range js.ed.Messages() {
				if m.Method == "$/progress" {
					seen = append(seen, string(m.Params))
				}
			}
			t.Fatalf("%s never queued with %s ahead: %v\n%s", tok, place, err, strings.Join(seen, "\n"))
		}
	}
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "first")
	if _, err := js.ed.WaitMethod(ctxT(t), "$/progress", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"first"`) && strings.Contains(string(p), "slow")
	}); err != nil {
		t.Fatal(err)
	}
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(6, 0, 8, 1)}, 41)
	queuedAs("41", "0")
	byCommand := js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(10, 0, 12, 1)}, 42)
	queuedAs("42", "1")
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(14, 0, 16, 1)}, "last")
	queuedAs(`"last"`, "2")
	js.ed.Notify("window/workDoneProgress/cancel", map[string]any{"token": 41})
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.cancel", "arguments": []any{map[string]any{"job": byCommand}}}, nil); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{"41", "42"} {
		if end := js.progressEnd(tok); end != "cancelled" {
			t.Errorf("queued job %s ended %q", tok, end)
		}
	}
	queuedAs(`"last"`, "0")
	js.progressEnd(`"first"`)
	js.progressEnd(`"last"`)
	if n := len(js.srv.Requests()); n != 2 {
		t.Errorf("%d provider requests, want 2 (the cancelled queued jobs never asked)", n)
	}
}

// TestOverSizeFileNotice (#12.13): an active buffer over
// context.maxFileSize is sent as a window around the selection and the
// user is told.
func TestOverSizeFileNotice(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: `action="explain"`, Content: "ok"})
	js.settings(map[string]any{"context": map[string]any{"maxFileSize": 4096}}, func(s *Server) bool { return s.config().Context.MaxFileSize == 4096 })
	uri := js.file("many.go", manyFuncs(500))
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(1002, 0, 1004, 1)}, "big")
	js.progressEnd(`"big"`)
	if _, err := js.ed.WaitMethod(ctxT(t), "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "many.go is ") && strings.Contains(string(p), "over context.maxFileSize")
	}); err != nil {
		t.Errorf("the user was not told: %v", err)
	}
	body := string(js.srv.Requests()[0].Body)
	if strings.Contains(body, "func F3()") || !strings.Contains(body, "func F250()") {
		t.Errorf("the prompt is not a window around the selection")
	}
}
