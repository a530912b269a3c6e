package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// wsReport is what the tests read of a workspace/diagnostic answer.
type wsReport struct {
	Items []struct {
		Kind     string          `json:"kind"`
		URI      string          `json:"uri"`
		Version  json.RawMessage `json:"version"`
		ResultID string          `json:"resultId"`
		Items    []pubDiag       `json:"items"`
	} `json:"items"`
}

// workspaceDiagnostic sends workspace/diagnostic with previousResultIds
// prev (uri → value; nil sends none).
func (js *jobSession) workspaceDiagnostic(prev map[string]string) wsReport {
	js.t.Helper()
	ids := []any{}
	for u, v := range prev {
		ids = append(ids, map[string]any{"uri": u, "value": v})
	}
	var rep wsReport
	if err := js.ed.Call(ctxT(js.t), "workspace/diagnostic", map[string]any{"previousResultIds": ids}, &rep); err != nil {
		js.t.Fatal(err)
	}
	return rep
}

// diagnosticProvider is the diagnosticProvider initialize declared (nil:
// none).
func (js *jobSession) diagnosticProvider() map[string]any {
	for _, m := range js.ed.Messages() {
		var r struct {
			Capabilities struct {
				DiagnosticProvider map[string]any `json:"diagnosticProvider"`
			} `json:"capabilities"`
		}
		if m.IsResponse() && json.Unmarshal(m.Result, &r) == nil && r.Capabilities.DiagnosticProvider != nil {
			return r.Capabilities.DiagnosticProvider
		}
	}
	return nil
}

// TestReviewWorkspaceDiagnostics: a client that pulls diagnostics is
// declared workspaceDiagnostics; after a review of changes,
// workspace/diagnostic answers the findings of a changed file it has not
// open; after Kimi: Clear Review (announced by a refresh) an empty report
// for that file, once; an open file is left to textDocument/diagnostic,
// and is told when it is closed.
func TestReviewWorkspaceDiagnostics(t *testing.T) {
	params := lsptest.DefaultInitializeParams("")
	params["rootUri"] = inJobDir
	caps := params["capabilities"].(map[string]any)
	caps["textDocument"].(map[string]any)["diagnostic"] = map[string]any{"dynamicRegistration": false}
	caps["workspace"].(map[string]any)["diagnostics"] = map[string]any{"refreshSupport": true}
	js := newJobSession(t, params, modeltest.Rule{Match: "careful senior reviewer",
		Content: `{"findings":[{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds","explanation":""}]}`})
	var refreshes atomic.Int32
	js.ed.Handle("workspace/diagnostic/refresh", func(json.RawMessage) (any, *lsptest.ResponseError) {
		refreshes.Add(1)
		return nil, nil
	})
	if dp := js.diagnosticProvider(); dp == nil || dp["workspaceDiagnostics"] != true {
		t.Fatalf("diagnosticProvider %v: no workspaceDiagnostics", dp)
	}
	if rep := js.workspaceDiagnostic(nil); len(rep.Items) != 0 {
		t.Fatalf("reports before any review: %+v", rep)
	}
	js.gitInit(map[string]string{"calc.go": strings.Replace(reviewCalc, "a + b", "a - b", 1)})
	os.WriteFile(filepath.Join(js.dir, "calc.go"), []byte(reviewCalc), 0o644)
	uri := string(workspace.FileURI(filepath.Join(js.dir, "calc.go")))
	js.run("kimi.review", map[string]any{"diff": true}, "d1")
	if end := js.progressEnd(`"d1"`); !strings.Contains(end, "1 finding in 1 changed file") {
		t.Fatalf("review ended %q", end)
	}
	rep := js.workspaceDiagnostic(nil)
	if len(rep.Items) != 1 || rep.Items[0].URI != uri || rep.Items[0].Kind != "full" || string(rep.Items[0].Version) != "null" ||
		rep.Items[0].ResultID == "" || len(rep.Items[0].Items) != 1 || rep.Items[0].Items[0].Range.Start.Line != 4 || rep.Items[0].Items[0].Message != "Sub adds" {
		t.Fatalf("workspace report %+v", rep)
	}
	first := rep.Items[0].ResultID

	before := refreshes.Load()
	var reply clearReviewReply
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.clearReview", "arguments": []any{map[string]any{"uri": uri}}}, &reply); err != nil || reply.Cleared != 1 {
		t.Fatalf("clearReview: %+v, %v", reply, err)
	}
	for deadline := time.Now().Add(5 * time.Second); refreshes.Load() == before; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no workspace/diagnostic/refresh after Clear Review")
		}
	}
	// The client says what it has: the findings' report.
	rep = js.workspaceDiagnostic(map[string]string{uri: first})
	if len(rep.Items) != 1 || rep.Items[0].URI != uri || rep.Items[0].Kind != "full" || len(rep.Items[0].Items) != 0 || rep.Items[0].ResultID == first {
		t.Fatalf("after Clear Review: %+v", rep)
	}
	if again := js.workspaceDiagnostic(map[string]string{uri: rep.Items[0].ResultID}); len(again.Items) != 0 {
		t.Fatalf("the empty report sent again: %+v", again)
	}
	// A client that sends no previousResultIds got it already too.
	if again := js.workspaceDiagnostic(nil); len(again.Items) != 0 {
		t.Fatalf("the empty report sent again: %+v", again)
	}

	// Reviewed again and opened: textDocument/diagnostic answers for it.
	js.run("kimi.review", map[string]any{"diff": true}, "d2")
	js.progressEnd(`"d2"`)
	if rep := js.workspaceDiagnostic(nil); len(rep.Items) != 1 || len(rep.Items[0].Items) != 1 {
		t.Fatalf("second review: %+v", rep)
	}
	js.open(uri, reviewCalc)
	js.text(uri, 1)
	if rep := js.workspaceDiagnostic(nil); len(rep.Items) != 0 {
		t.Fatalf("an open file reported: %+v", rep)
	}
	// Cleared while open: still textDocument/diagnostic's (an empty
	// workspace report would erase a next-edit suggestion there).
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.clearReview", "arguments": []any{map[string]any{"uri": uri}}}, &reply); err != nil || reply.Cleared != 1 {
		t.Fatalf("clearReview: %+v, %v", reply, err)
	}
	if rep := js.workspaceDiagnostic(nil); len(rep.Items) != 0 {
		t.Fatalf("an open file reported: %+v", rep)
	}
	// Closed: the findings the workspace answer gave it are gone.
	js.ed.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		rep := js.workspaceDiagnostic(nil)
		if len(rep.Items) == 1 && rep.Items[0].URI == uri && len(rep.Items[0].Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after close: %+v", rep)
		}
	}
}

// TestReviewWorkspaceDiagnosticsPushClient: a client that does not pull
// is declared no workspaceDiagnostics (no diagnosticProvider); asked
// anyway, workspace/diagnostic reports nothing: it gets every finding
// pushed, and would show it twice.
func TestReviewWorkspaceDiagnosticsPushClient(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "careful senior reviewer",
		Content: `{"findings":[{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds","explanation":""}]}`})
	if dp := js.diagnosticProvider(); dp != nil {
		t.Fatalf("diagnosticProvider %v declared to a client that does not pull", dp)
	}
	js.gitInit(map[string]string{"calc.go": strings.Replace(reviewCalc, "a + b", "a - b", 1)})
	os.WriteFile(filepath.Join(js.dir, "calc.go"), []byte(reviewCalc), 0o644)
	uri := string(workspace.FileURI(filepath.Join(js.dir, "calc.go")))
	js.run("kimi.review", map[string]any{"diff": true}, "d1")
	js.progressEnd(`"d1"`)
	js.waitDiagnostics(uri, 4)
	if rep := js.workspaceDiagnostic(nil); len(rep.Items) != 0 {
		t.Fatalf("workspace report to a push client: %+v", rep)
	}
}

// TestReviewWorkspaceDiagnosticsBounded: an answer holds at most
// maxWorkspaceReports documents, those the client has not current first,
// so that every changed file's findings reach it over its pulls.
func TestReviewWorkspaceDiagnosticsBounded(t *testing.T) {
	defer func(n int) { maxWorkspaceReports = n }(maxWorkspaceReports)
	maxWorkspaceReports = 1
	params := lsptest.DefaultInitializeParams("")
	params["rootUri"] = inJobDir
	caps := params["capabilities"].(map[string]any)
	caps["textDocument"].(map[string]any)["diagnostic"] = map[string]any{"dynamicRegistration": false}
	caps["workspace"].(map[string]any)["diagnostics"] = map[string]any{"refreshSupport": true}
	js := newJobSession(t, params, modeltest.Rule{Match: "careful senior reviewer",
		Content: `{"findings":[{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds","explanation":""}]}`})
	js.ed.Handle("workspace/diagnostic/refresh", func(json.RawMessage) (any, *lsptest.ResponseError) { return nil, nil })
	old := strings.Replace(reviewCalc, "a + b", "a - b", 1)
	js.gitInit(map[string]string{"a.go": old, "b.go": old})
	os.WriteFile(filepath.Join(js.dir, "a.go"), []byte(reviewCalc), 0o644)
	os.WriteFile(filepath.Join(js.dir, "b.go"), []byte(reviewCalc), 0o644)
	js.run("kimi.review", map[string]any{"diff": true}, "d1")
	if end := js.progressEnd(`"d1"`); !strings.Contains(end, "2 findings in 2 changed files") {
		t.Fatalf("review ended %q", end)
	}
	prev := map[string]string{}
	for i := 0; i < 2; i++ {
		rep := js.workspaceDiagnostic(prev)
		if len(rep.Items) != 1 || len(rep.Items[0].Items) != 1 {
			t.Fatalf("pull %d: %+v", i, rep)
		}
		if _, dup := prev[rep.Items[0].URI]; dup {
			t.Fatalf("pull %d sent %s again before the other file", i, rep.Items[0].URI)
		}
		prev[rep.Items[0].URI] = rep.Items[0].ResultID
	}
	for _, name := range []string{"a.go", "b.go"} {
		if _, ok := prev[string(workspace.FileURI(filepath.Join(js.dir, name)))]; !ok {
			t.Fatalf("%s never reported: %v", name, prev)
		}
	}
}
