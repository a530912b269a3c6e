package lsp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
)

const reviewCalc = "package calc\n\n// Sub returns a minus b.\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n\n// Add returns a plus b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"

const reviewReply = `{"findings":[{"startLine":5,"endLine":5,"severity":"error","message":"Sub adds instead of subtracting","explanation":""},` +
	`{"startLine":10,"endLine":10,"severity":"warning","message":"Add subtracts instead of adding","explanation":"a - b"}]}`

const reviewFixDiff = "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -9,3 +9,3 @@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + b\n }\n```\n"

func reviewRules() []modeltest.Rule {
	return []modeltest.Rule{
		{Match: "careful senior reviewer", Content: reviewReply},
		{Match: "Add subtracts instead of adding", Content: reviewFixDiff},
	}
}

type pubDiag struct {
	Range    rangeJSON `json:"range"`
	Severity int       `json:"severity"`
	Source   string    `json:"source"`
	Code     string    `json:"code"`
	Message  string    `json:"message"`
}

// waitDiagnostics waits for a publishDiagnostics of uri whose
// diagnostics start on the given (0-based) lines.
func (js *jobSession) waitDiagnostics(uri string, lines ...int) []pubDiag {
	js.t.Helper()
	var got []pubDiag
	_, err := js.ed.WaitMethod(ctxT(js.t), "textDocument/publishDiagnostics", func(raw json.RawMessage) bool {
		var p struct {
			URI         string    `json:"uri"`
			Diagnostics []pubDiag `json:"diagnostics"`
		}
		json.Unmarshal(raw, &p)
		var at []int
		for _, d := range p.Diagnostics {
			at = append(at, int(d.Range.Start.Line))
		}
		if p.URI == uri && slices.Equal(at, lines) {
			got = p.Diagnostics
			return true
		}
		return false
	})
	if err != nil {
		js.t.Fatalf("no diagnostics on lines %v: %v", lines, err)
	}
	return got
}

// type sends an incremental change at (line, col) to the server and the
// live editor's copy.
func (le *liveEditor) typeAt(uri string, line, col int, text string) {
	le.mu.Lock()
	le.version[uri]++
	v := le.version[uri]
	lines := strings.SplitAfter(le.text[uri], "\n")
	lines[line] = lines[line][:col] + text + lines[line][col:]
	le.text[uri] = strings.Join(lines, "")
	le.mu.Unlock()
	pos := map[string]any{"line": line, "character": col}
	le.js.ed.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": v},
		"contentChanges": []any{map[string]any{"range": map[string]any{"start": pos, "end": pos}, "text": text}},
	})
	le.js.text(uri, v)
}

// TestReviewFindingsAsDiagnostics is #26's check: a review with two
// findings publishes two diagnostics (source kimi) at their lines; typing
// above moves them; editing one finding's line drops that one only; its
// quick fix sends a Fix whose prompt holds the message, and when the edit
// lands the finding is gone.
func TestReviewFindingsAsDiagnostics(t *testing.T) {
	js := newJobSession(t, nil, reviewRules()...)
	le := js.liveEditor()
	uri := le.open("calc.go", reviewCalc)

	js.run("kimi.review", map[string]any{"uri": uri}, "r1")
	if end := js.progressEnd(`"r1"`); !strings.Contains(end, "2 findings") {
		t.Fatalf("review ended %q", end)
	}
	ds := js.waitDiagnostics(uri, 4, 9)
	for _, d := range ds {
		if d.Source != "kimi" || d.Code != "review" {
			t.Fatalf("diagnostic %+v", d)
		}
	}
	if ds[0].Severity != 1 || ds[1].Severity != 2 || ds[0].Message != "Sub adds instead of subtracting" {
		t.Fatalf("diagnostics %+v", ds)
	}

	le.typeAt(uri, 0, 0, "// top\n")
	js.waitDiagnostics(uri, 5, 10)

	le.typeAt(uri, 5, len("\treturn a + b"), " // sure?")
	left := js.waitDiagnostics(uri, 10)

	// The quick fix of the finding left; the editor sends the finding
	// along as a diagnostic at the cursor, as VS Code and Neovim do.
	acts := js.actionsAt(uri, map[string]any{"start": map[string]any{"line": 10, "character": 0}, "end": map[string]any{"line": 10, "character": 0}},
		map[string]any{"triggerKind": 1, "diagnostics": []any{left[0]}})
	var fix map[string]any
	for _, a := range acts {
		if a["title"] == "Kimi: Fix: Add subtracts instead of adding" && a["kind"] == "quickfix" {
			fix = a
		}
		if strings.HasPrefix(a["title"].(string), "Kimi: Fix “") {
			t.Fatalf("the finding is offered as a plain Fix too: %v", a["title"])
		}
	}
	if fix == nil {
		t.Fatalf("no quick fix for the finding: %v", acts)
	}
	if fix["isPreferred"] != true {
		t.Errorf("the finding's own fix is not its preferred action (#33 item 8): %v", fix)
	}
	cmd := fix["command"].(map[string]any)
	args := cmd["arguments"].([]any)[0].(map[string]any)
	js.run(cmd["command"].(string), args, "f1")
	if end := js.progressEnd(`"f1"`); !strings.Contains(end, "applied") {
		t.Fatalf("fix ended %q", end)
	}
	js.waitDiagnostics(uri)
	reqs := js.srv.Requests()
	if last := reqs[len(reqs)-1]; !strings.Contains(string(last.Prompt), "Add subtracts instead of adding") {
		t.Fatalf("the Fix prompt lacks the finding:\n%s", last.Prompt)
	}
	if text, _, _ := le.state(uri); !strings.Contains(text, "\treturn a + b\n}\n") || strings.Contains(text, "a - b") {
		t.Fatalf("text after the fix:\n%s", text)
	}
}

// TestReviewFixRemovesFinding: a finding's quick fix removes the finding
// when its edit lands, also when the edit is on other lines (so it does
// not drop the mark by touching it); the other finding stays.
func TestReviewFixRemovesFinding(t *testing.T) {
	commentFix := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -7,3 +7,3 @@\n \n-// Add returns a plus b.\n+// Add returns a + b.\n func Add(a, b int) int {\n```\n"
	js := newJobSession(t, nil,
		modeltest.Rule{Match: "careful senior reviewer", Content: reviewReply},
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
	seen := js.publishedCount(uri)
	js.run(cmd["command"].(string), cmd["arguments"].([]any)[0].(map[string]any), "f1")
	if end := js.progressEnd(`"f1"`); !strings.Contains(end, "applied") {
		t.Fatalf("fix ended %q", end)
	}
	// The other finding stays.
	js.waitDiagnosticsAfter(seen, uri, 4)
	if text, _, _ := le.state(uri); !strings.Contains(text, "// Add returns a + b.") {
		t.Fatalf("text after the fix:\n%s", text)
	}
}

// TestReviewClearAndClose: Kimi: Clear Review and didClose clear the
// findings.
func TestReviewClearAndClose(t *testing.T) {
	js := newJobSession(t, nil, reviewRules()...)
	le := js.liveEditor()
	uri := le.open("calc.go", reviewCalc)
	js.run("kimi.review", map[string]any{"uri": uri}, "r1")
	js.progressEnd(`"r1"`)
	js.waitDiagnostics(uri, 4, 9)
	var reply clearReviewReply
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.clearReview", "arguments": []any{map[string]any{"uri": uri}}}, &reply); err != nil || reply.Cleared != 2 {
		t.Fatalf("clear: %v %+v", err, reply)
	}
	js.waitDiagnostics(uri)

	// Reviewed again, then closed: the findings go with the file.
	seen := js.publishedCount(uri)
	js.run("kimi.review", map[string]any{"uri": uri}, "r2")
	js.progressEnd(`"r2"`)
	js.waitDiagnosticsAfter(seen, uri, 4, 9)
	seen = js.publishedCount(uri)
	js.ed.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": uri}})
	js.waitDiagnosticsAfter(seen, uri)
}

// publishedCount is how many publishDiagnostics of uri the editor got.
func (js *jobSession) publishedCount(uri string) int {
	n := 0
	for _, m := range js.ed.Messages() {
		var p struct {
			URI string `json:"uri"`
		}
		if m.Method == "textDocument/publishDiagnostics" && json.Unmarshal(m.Params, &p) == nil && p.URI == uri {
			n++
		}
	}
	return n
}

// waitDiagnosticsAfter is waitDiagnostics for a publishDiagnostics of uri
// after the first skip ones.
func (js *jobSession) waitDiagnosticsAfter(skip int, uri string, lines ...int) {
	js.t.Helper()
	n := 0
	_, err := js.ed.WaitMethod(ctxT(js.t), "textDocument/publishDiagnostics", func(raw json.RawMessage) bool {
		var p struct {
			URI         string    `json:"uri"`
			Diagnostics []pubDiag `json:"diagnostics"`
		}
		json.Unmarshal(raw, &p)
		if p.URI != uri {
			return false
		}
		if n++; n <= skip {
			return false
		}
		var at []int
		for _, d := range p.Diagnostics {
			at = append(at, int(d.Range.Start.Line))
		}
		return slices.Equal(at, lines)
	})
	if err != nil {
		js.t.Fatalf("no diagnostics on lines %v after the first %d: %v", lines, skip, err)
	}
}

// TestReviewPullDiagnostics: a client that pulls diagnostics is offered
// diagnosticProvider and answered by textDocument/diagnostic, and gets no
// pushed copy.
func TestReviewPullDiagnostics(t *testing.T) {
	params := lsptest.DefaultInitializeParams("")
	caps := params["capabilities"].(map[string]any)
	caps["textDocument"].(map[string]any)["diagnostic"] = map[string]any{"dynamicRegistration": false}
	caps["workspace"].(map[string]any)["diagnostics"] = map[string]any{"refreshSupport": true}
	js := newJobSession(t, params, reviewRules()...)
	declared := false
	for _, m := range js.ed.Messages() {
		var r struct {
			Capabilities struct {
				DiagnosticProvider *struct {
					Identifier string `json:"identifier"`
				} `json:"diagnosticProvider"`
			} `json:"capabilities"`
		}
		if m.IsResponse() && json.Unmarshal(m.Result, &r) == nil && r.Capabilities.DiagnosticProvider != nil {
			declared = r.Capabilities.DiagnosticProvider.Identifier == "kimi"
		}
	}
	if !declared {
		t.Fatal("initialize did not declare diagnosticProvider (identifier kimi)")
	}
	uri := js.file("calc.go", reviewCalc)
	js.run("kimi.review", map[string]any{"uri": uri}, "r1")
	if end := js.progressEnd(`"r1"`); !strings.Contains(end, "2 findings") {
		t.Fatalf("review ended %q", end)
	}
	var rep struct {
		Kind  string    `json:"kind"`
		Items []pubDiag `json:"items"`
	}
	if err := js.ed.Call(ctxT(t), "textDocument/diagnostic", map[string]any{"textDocument": map[string]any{"uri": uri}}, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Kind != "full" || len(rep.Items) != 2 || rep.Items[1].Range.Start.Line != 9 {
		t.Fatalf("report %+v", rep)
	}
	for _, m := range js.ed.Messages() {
		if m.Method == "textDocument/publishDiagnostics" {
			t.Fatalf("pushed to a pulling client: %s", m.Params)
		}
	}
}
