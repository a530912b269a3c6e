package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/gittest"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// gitInit makes js's directory a repository with files committed.
func (js *jobSession) gitInit(files map[string]string) {
	js.t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		js.t.Skip("git is not installed")
	}
	for name, text := range files {
		p := filepath.Join(js.dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			js.t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = js.dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+js.dir)
		if out, err := cmd.CombinedOutput(); err != nil {
			js.t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestReviewDiffClosedFile: kimi.review {diff: true} of a changed file the
// editor has not open publishes its findings (the editor's problem list
// shows them), on the lines of the file on disk.
func TestReviewDiffClosedFile(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "careful senior reviewer",
		Content: `{"findings":[{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds","explanation":""}]}`})
	js.gitInit(map[string]string{"calc.go": strings.Replace(reviewCalc, "a + b", "a - b", 1)})
	os.WriteFile(filepath.Join(js.dir, "calc.go"), []byte(reviewCalc), 0o644)
	uri := string(workspace.FileURI(filepath.Join(js.dir, "calc.go")))
	js.run("kimi.review", map[string]any{"diff": true}, "d1")
	if end := js.progressEnd(`"d1"`); !strings.Contains(end, "1 finding in 1 changed file") {
		t.Fatalf("review ended %q", end)
	}
	js.waitDiagnostics(uri, 4)
	// Opened (here with a line more above than on disk), the finding is
	// moved onto the buffer and published for its version.
	seen := js.publishedCount(uri)
	js.open(uri, "// top\n"+reviewCalc)
	js.waitDiagnosticsAfter(seen, uri, 5)
	acts := js.actionsAt(uri, map[string]any{"start": map[string]any{"line": 5, "character": 0}, "end": map[string]any{"line": 5, "character": 0}},
		map[string]any{"triggerKind": 1})
	found := false
	for _, a := range acts {
		found = found || a["title"] == "Kimi: Fix: Sub adds"
	}
	if !found {
		t.Fatalf("no quick fix on the opened file: %v", acts)
	}
}

// TestReviewEndsAfterClose: the findings of a file's review that ends
// after the editor closed the file are not kept (its buffer, which was
// reviewed, may never have been saved), and the job's end says so.
func TestReviewEndsAfterClose(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "careful senior reviewer", DelayMS: 1500, Content: reviewReply})
	uri := js.file("calc.go", reviewCalc)
	js.run("kimi.review", map[string]any{"uri": uri}, "r1")
	if _, err := js.srv.WaitRequests(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	js.ed.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	if end := js.progressEnd(`"r1"`); !strings.Contains(end, "2 findings (not shown: the file was closed meanwhile)") {
		t.Fatalf("review ended %q", end)
	}
	if n := js.session.srv.reviews.clear(""); n != 0 {
		t.Fatalf("%d findings kept for the closed file", n)
	}
}

// TestReviewWindowedFile: a review of a selection in a file over
// context.maxFileSize (the model sees a window of it, renumbered from 1)
// shows its findings on the file's lines, not the window's.
func TestReviewWindowedFile(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "l%02d\n", i)
	}
	text := b.String()
	js := newJobSession(t, nil, modeltest.Rule{Match: "careful senior reviewer",
		Content: `{"findings":[{"startLine":5,"endLine":5,"severity":"warning","message":"line 30","explanation":""}]}`})
	js.settings(map[string]any{"context": map[string]any{"maxFileSize": 40}}, func(s *Server) bool { return s.config().Context.MaxFileSize == 40 })
	le := js.liveEditor()
	uri := le.open("big.txt", text)
	rng := map[string]any{"start": map[string]any{"line": 29, "character": 0}, "end": map[string]any{"line": 30, "character": 0}}
	js.run("kimi.review", map[string]any{"uri": uri, "range": rng}, "w1")
	if end := js.progressEnd(`"w1"`); !strings.Contains(end, "1 finding") {
		t.Fatalf("review ended %q", end)
	}
	if p := string(js.srv.Requests()[0].Prompt); !strings.Contains(p, "only its lines 26-") {
		t.Fatalf("the window is not lines 26-…:\n%s", p)
	}
	js.waitDiagnostics(uri, 29)
}

// TestReviewFixOfAnEarlierReview: the quick fix of a finding of an earlier
// review, landing after the file was reviewed again, removes no finding of
// the new review (the findings of each review are told apart).
func TestReviewFixOfAnEarlierReview(t *testing.T) {
	commentFix := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -7,3 +7,3 @@\n \n-// Add returns a plus b.\n+// Add returns a + b.\n func Add(a, b int) int {\n```\n"
	reversed := `{"findings":[{"startLine":10,"endLine":10,"severity":"warning","message":"Add subtracts instead of adding","explanation":""},` +
		`{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds instead of subtracting","explanation":""}]}`
	js := newJobSession(t, nil,
		modeltest.Rule{Match: "careful senior reviewer", Content: reviewReply, Times: 1},
		modeltest.Rule{Match: "careful senior reviewer", Content: reversed},
		modeltest.Rule{Match: "Add subtracts instead of adding", Content: commentFix})
	le := js.liveEditor()
	uri := le.open("calc.go", reviewCalc)
	js.run("kimi.review", map[string]any{"uri": uri}, "r1")
	js.progressEnd(`"r1"`)
	js.waitDiagnostics(uri, 4, 9)
	acts := js.actionsAt(uri, map[string]any{"start": map[string]any{"line": 9, "character": 0}, "end": map[string]any{"line": 9, "character": 0}},
		map[string]any{"triggerKind": 1})
	var cmd map[string]any
	for _, a := range acts {
		if a["title"] == "Kimi: Fix: Add subtracts instead of adding" {
			cmd = a["command"].(map[string]any)
		}
	}
	if cmd == nil {
		t.Fatalf("no quick fix: %v", acts)
	}
	// Reviewed again before the fix is run.
	js.run("kimi.review", map[string]any{"uri": uri}, "r2")
	js.progressEnd(`"r2"`)
	js.waitDiagnostics(uri, 9, 4)
	seen := js.publishedCount(uri)
	js.run(cmd["command"].(string), cmd["arguments"].([]any)[0].(map[string]any), "f1")
	if end := js.progressEnd(`"f1"`); !strings.Contains(end, "applied") {
		t.Fatalf("fix ended %q", end)
	}
	js.waitDiagnosticsAfter(seen, uri, 9, 4)
	if n := js.session.srv.reviews.clear(workspace.URI(uri)); n != 2 {
		t.Fatalf("%d findings left of the new review's 2", n)
	}
}

// TestReviewDiffNotGit: a review of changes in a folder that is no git
// work tree with a commit says so in its end, not "0 findings in 0
// changed files" as if nothing had changed.
func TestReviewDiffNotGit(t *testing.T) {
	js := newJobSession(t, nil)
	js.file("calc.go", reviewCalc)
	js.run("kimi.review", map[string]any{"diff": true}, "d1")
	if end := js.progressEnd(`"d1"`); !strings.Contains(end, "not a git work tree with a commit") {
		t.Fatalf("review ended %q", end)
	}
}

// TestReviewTypedInTwoPlacesMeanwhile: findings of a review that ends
// after the user typed above and below them (in two places) stay, moved
// with the text — the change since the reviewed text is not one span
// covering them.
func TestReviewTypedInTwoPlacesMeanwhile(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "careful senior reviewer", DelayMS: 1000, Content: reviewReply})
	le := js.liveEditor()
	uri := le.open("calc.go", reviewCalc)
	js.run("kimi.review", map[string]any{"uri": uri}, "r1")
	if _, err := js.srv.WaitRequests(ctxT(t), 1); err != nil {
		t.Fatal(err)
	}
	le.typeAt(uri, 0, 0, "// top\n")
	le.typeAt(uri, 11, 0, "// end\n") // the last line, "}", now line 11
	js.progressEnd(`"r1"`)
	js.waitDiagnostics(uri, 5, 10)
}

// TestReviewFixNoHunkKept: a finding's quick fix whose edit, sent for
// confirmation hunk by hunk, comes back with no hunk applied (every one
// unticked in the editor's preview) keeps the finding, and the job says
// nothing was applied.
func TestReviewFixNoHunkKept(t *testing.T) {
	params := lsptest.DefaultInitializeParams("")
	params["rootUri"] = inJobDir
	ws := params["capabilities"].(map[string]any)["workspace"].(map[string]any)
	ws["workspaceEdit"].(map[string]any)["changeAnnotationSupport"] = map[string]any{"groupsOnLabel": false}
	js := newJobSession(t, params, reviewRules()...)
	js.settings(map[string]any{"edits": map[string]any{"confirm": "always"}}, func(s *Server) bool { return s.config().Edits.Confirm == "always" })
	uri := js.file("calc.go", reviewCalc)
	js.ed.Handle("workspace/applyEdit", func(raw json.RawMessage) (any, *lsptest.ResponseError) {
		var got annotatedApply
		json.Unmarshal(raw, &got)
		// Applied, with nothing kept: the text is as it was.
		go js.ed.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": got.Edit.DocumentChanges[0].TextDocument.Version + 1},
			"contentChanges": []any{map[string]any{"text": reviewCalc}},
		})
		return map[string]any{"applied": true}, nil
	})
	js.run("kimi.review", map[string]any{"uri": uri}, "r1")
	js.progressEnd(`"r1"`)
	js.waitDiagnostics(uri, 4, 9)
	acts := js.actionsAt(uri, map[string]any{"start": map[string]any{"line": 9, "character": 0}, "end": map[string]any{"line": 9, "character": 0}},
		map[string]any{"triggerKind": 1})
	var cmd map[string]any
	for _, a := range acts {
		if a["title"] == "Kimi: Fix: Add subtracts instead of adding" {
			cmd = a["command"].(map[string]any)
		}
	}
	if cmd == nil {
		t.Fatalf("no quick fix: %v", acts)
	}
	js.run(cmd["command"].(string), cmd["arguments"].([]any)[0].(map[string]any), "f1")
	if end := js.progressEnd(`"f1"`); !strings.Contains(end, "not applied") {
		t.Fatalf("fix ended %q", end)
	}
	js.waitNoJobs()
	if n := js.session.srv.reviews.clear(workspace.URI(uri)); n != 2 {
		t.Fatalf("%d findings left of 2", n)
	}
}

// TestReviewEndRacesTyping: a review ending while the user types keeps its
// finding on its line: every didChange is either in the text the marks are
// moved to or moves them afterwards, never lost between the two.
func TestReviewEndRacesTyping(t *testing.T) {
	js := newJobSession(t, nil)
	var b strings.Builder
	for i := 0; i < 20000; i++ {
		b.WriteString("filler line\n")
	}
	base := b.String() + "MARK\n"
	uri := js.file("big.txt", base)
	srv := js.session.srv
	out := &assist.Outcome{Findings: []assist.Finding{{StartLine: 20001, EndLine: 20001, Severity: cache.SeverityWarning, Message: "mark"}}}
	for v := int32(2); v < 42; v++ {
		ended := make(chan struct{})
		go func() {
			srv.endReview(workspace.URI(uri), base, false, out)
			close(ended)
		}()
		pos := map[string]any{"line": 0, "character": 0}
		js.ed.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": v},
			"contentChanges": []any{map[string]any{"range": map[string]any{"start": pos, "end": pos}, "text": "x\n"}},
		})
		<-ended
		js.text(uri, v)
		// The read loop moves the marks just after the document changed:
		// wait for that (a lost change leaves them behind for good).
		var found []findingAt
		var in *workspace.Snapshot
		ok := false
		for deadline := time.Now().Add(5 * time.Second); !ok && time.Now().Before(deadline); {
			cur, _ := srv.docs.Snapshot(workspace.URI(uri))
			if found, in, ok = srv.reviews.current(workspace.URI(uri), cur); !ok {
				time.Sleep(time.Millisecond)
			}
		}
		if !ok || len(found) != 1 {
			t.Fatalf("version %d: the marks are not for it (%v) or dropped: %+v", v, ok, found)
		}
		if line := strings.Count(in.Text()[:found[0].start], "\n"); line != 20000+int(v-1) {
			t.Fatalf("version %d: the finding is on line %d, not %d", v, line, 20000+v-1)
		}
	}
}

// TestReviewDiffNestedFolders: a changed file in two workspace folders
// (one inside the other) is reviewed once, not once per folder.
func TestReviewDiffNestedFolders(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "careful senior reviewer",
		Content: `{"findings":[{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds","explanation":""}]}`})
	js.gitInit(map[string]string{"sub/calc.go": strings.Replace(reviewCalc, "a + b", "a - b", 1)})
	os.WriteFile(filepath.Join(js.dir, "sub", "calc.go"), []byte(reviewCalc), 0o644)
	sub := string(workspace.FileURI(filepath.Join(js.dir, "sub")))
	js.ed.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": sub, "name": "sub"}}, "removed": []any{}}})
	for deadline := time.Now().Add(10 * time.Second); len(js.session.srv.folders.List()) < 2; {
		if time.Now().After(deadline) {
			t.Fatal("the folder was not added")
		}
		time.Sleep(time.Millisecond)
	}
	js.run("kimi.review", map[string]any{"diff": true}, "d1")
	if end := js.progressEnd(`"d1"`); !strings.Contains(end, "1 finding in 1 changed file") {
		t.Fatalf("review ended %q", end)
	}
	if n := len(js.srv.Requests()); n != 1 {
		t.Fatalf("%d requests for one changed file", n)
	}
}

// reviewChangedCalc runs a review of changes, to its end, of calc.go
// changed and not open, in a session initialized with params; the
// stand-in finds "Sub adds" on line 5. It returns the session and the
// file's URI.
func reviewChangedCalc(t *testing.T, params map[string]any) (*jobSession, string) {
	t.Helper()
	js := newJobSession(t, params, modeltest.Rule{Match: "careful senior reviewer",
		Content: `{"findings":[{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds","explanation":""}]}`})
	js.gitInit(map[string]string{"calc.go": strings.Replace(reviewCalc, "a + b", "a - b", 1)})
	os.WriteFile(filepath.Join(js.dir, "calc.go"), []byte(reviewCalc), 0o644)
	uri := string(workspace.FileURI(filepath.Join(js.dir, "calc.go")))
	js.run("kimi.review", map[string]any{"diff": true}, "d1")
	js.progressEnd(`"d1"`)
	return js, uri
}

// TestReviewDiffClosedFilePulled: a client that pulls diagnostics gets the
// findings of a review of changes in a file it opens afterwards.
func TestReviewDiffClosedFilePulled(t *testing.T) {
	params := lsptest.DefaultInitializeParams("")
	params["rootUri"] = inJobDir
	params["capabilities"].(map[string]any)["textDocument"].(map[string]any)["diagnostic"] = map[string]any{"dynamicRegistration": false}
	js, uri := reviewChangedCalc(t, params)
	js.open(uri, reviewCalc)
	js.text(uri, 1)
	var rep struct {
		Kind  string    `json:"kind"`
		Items []pubDiag `json:"items"`
	}
	if err := js.ed.Call(ctxT(t), "textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": uri}}, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Items) != 1 || rep.Items[0].Range.Start.Line != 4 || rep.Items[0].Message != "Sub adds" {
		t.Fatalf("report %+v", rep)
	}
}

// TestReviewDiffCancelAsksOnce: a review of changes whose first request
// asks (budget.confirmAbove) and is cancelled sends nothing and asks no
// more — not once per changed file.
func TestReviewDiffCancelAsksOnce(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "careful senior reviewer", Content: `{"findings":[]}`})
	dear := map[string]any{"input": 1000, "cachedRead": 1000, "write5m": 1000, "write1h": 1000}
	js.settings(map[string]any{"budget": map[string]any{"confirmAbove": 0.05},
		"prices": map[string]any{"kimi-k3.1-pro": dear, "kimi-k3.1-pro-highspeed": dear}},
		func(s *Server) bool { return s.config().Budget.ConfirmAbove == 0.05 })
	var mu sync.Mutex
	asked := 0
	js.ed.Handle("window/showMessageRequest", func(json.RawMessage) (any, *lsptest.ResponseError) {
		mu.Lock()
		asked++
		mu.Unlock()
		return map[string]any{"title": "Cancel"}, nil
	})
	old := strings.Replace(reviewCalc, "a + b", "a - b", 1)
	js.gitInit(map[string]string{"a.go": old, "b.go": old, "c.go": old})
	for _, n := range []string{"a.go", "b.go", "c.go"} {
		os.WriteFile(filepath.Join(js.dir, n), []byte(reviewCalc), 0o644)
	}
	js.run("kimi.review", map[string]any{"diff": true}, "d1")
	end := js.progressEnd(`"d1"`)
	mu.Lock()
	defer mu.Unlock()
	if asked != 1 || len(js.srv.Requests()) != 0 || !strings.Contains(end, "not sent") {
		t.Fatalf("asked %d times, %d requests; ended %q", asked, len(js.srv.Requests()), end)
	}
}

// TestReviewDiffRunsNoRepositoryProgram (#30.4): kimi.review {diff: true}
// in a folder whose repository names a program for git to run
// (gittest.Traps) runs none of them, and still reviews the changed file:
// the stand-in receives its diff (in a partial clone missing the file's
// HEAD blob, the end says why it was not reviewed).
func TestReviewDiffRunsNoRepositoryProgram(t *testing.T) {
	for _, trap := range gittest.Traps {
		t.Run(trap, func(t *testing.T) {
			gittest.Hermetic(t)
			js := newJobSession(t, nil, modeltest.Rule{Match: "careful senior reviewer",
				Content: `{"findings":[{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds","explanation":""}]}`})
			marks := t.TempDir()
			gittest.Repo(t, js.dir, map[string]string{"calc.go": strings.Replace(reviewCalc, "a + b", "a - b", 1)}, "")
			gittest.Arm(t, js.dir, trap, marks)
			os.WriteFile(filepath.Join(js.dir, "calc.go"), []byte(reviewCalc), 0o644)
			js.run("kimi.review", map[string]any{"diff": true}, "d1")
			end := js.progressEnd(`"d1"`)
			if ran := gittest.Ran(marks); ran != "" {
				t.Fatalf("the repository's program ran:\n%s", ran)
			}
			reqs := js.srv.Requests()
			if !gittest.Diffable(trap) {
				if len(reqs) != 0 || !strings.Contains(end, "not reviewed: calc.go (HEAD's copy could not be read)") {
					t.Fatalf("review ended %q, %d requests", end, len(reqs))
				}
				return
			}
			if !strings.Contains(end, "1 finding in 1 changed file") || len(reqs) != 1 || !strings.Contains(string(reqs[0].Prompt), "+\treturn a + b") {
				t.Fatalf("review ended %q, %d requests", end, len(reqs))
			}
		})
	}
}

// TestReviewDiffSkipsWorded (#30.7): kimi.review {diff: true} leaves out a
// changed file over the size cap and a changed submodule with the words
// kimi-lsp review --diff prints (assist.ChangedFiles words both), and
// reviews the rest.
func TestReviewDiffSkipsWorded(t *testing.T) {
	gittest.Hermetic(t)
	js := newJobSession(t, nil, modeltest.Rule{Match: "careful senior reviewer",
		Content: `{"findings":[{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds","explanation":""}]}`})
	sub := filepath.Join(js.dir, "sub")
	os.MkdirAll(sub, 0o755)
	gittest.Repo(t, sub, map[string]string{"s.txt": "one\n"}, "")
	gittest.Repo(t, js.dir, map[string]string{"calc.go": strings.Replace(reviewCalc, "a + b", "a - b", 1), "big.txt": "small\n"}, "")
	os.WriteFile(filepath.Join(sub, "s.txt"), []byte("two\n"), 0o644)
	gittest.Git(t, sub, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-am", "next")
	os.WriteFile(filepath.Join(js.dir, "big.txt"), []byte(strings.Repeat("x\n", 7<<19)), 0o644) // 7 MiB
	os.WriteFile(filepath.Join(js.dir, "calc.go"), []byte(reviewCalc), 0o644)
	js.run("kimi.review", map[string]any{"diff": true}, "d1")
	end := js.progressEnd(`"d1"`)
	if !strings.Contains(end, "1 finding in 1 changed file") ||
		!strings.Contains(end, "big.txt (7.0 MiB, over the size cap of 1.0 MiB: raise context.maxFileSize to review it)") ||
		!strings.Contains(end, "sub (a submodule: review it in its own folder)") || len(js.srv.Requests()) != 1 {
		t.Fatalf("review ended %q, %d requests", end, len(js.srv.Requests()))
	}
}

// TestReviewDiffClosedFileVSCode (#33 item 14): a client that pulls
// diagnostics, as VS Code does, pulls only the files it has open, so the
// findings of a changed file it has not open are pushed (VS Code's Problems
// said "No problems"); once it opens the file the pushed copy is cleared
// and the pull answers with the finding instead — one copy, not two.
func TestReviewDiffClosedFileVSCode(t *testing.T) {
	params := lsptest.DefaultInitializeParams("")
	params["rootUri"] = inJobDir
	caps := params["capabilities"].(map[string]any)
	caps["textDocument"].(map[string]any)["diagnostic"] = map[string]any{"dynamicRegistration": false}
	caps["workspace"].(map[string]any)["diagnostics"] = map[string]any{"refreshSupport": true}
	js, uri := reviewChangedCalc(t, params)
	js.waitDiagnostics(uri, 4) // pushed: the file is not open
	seen := js.publishedCount(uri)
	js.open(uri, reviewCalc)
	js.text(uri, 1)
	js.waitDiagnosticsAfter(seen, uri) // the pushed copy cleared
	var rep struct {
		Items []pubDiag `json:"items"`
	}
	if err := js.ed.Call(ctxT(t), "textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": uri}}, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Items) != 1 || rep.Items[0].Message != "Sub adds" {
		t.Fatalf("pulled %+v", rep)
	}
}
