package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/assist/verify"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The edit verification tests run the real helper language servers
// (gopls, pyright), which .ci/run installs.

func needHelper(t *testing.T, name, install string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Fatalf("%s not found on PATH: install it with %s (.ci/run does)", name, install)
	}
}

// helperEnv keeps a test's helpers' temporary files in its own directory.
func helperEnv(t *testing.T) []string {
	return []string{"TMPDIR=" + t.TempDir(), "GOTOOLCHAIN=local", "GOFLAGS=-modcacherw", "GOTELEMETRY=off"}
}

// verifySession is a job session with verification on (onNewErrors as
// given) in a Go module with a.go.
func verifySession(t *testing.T, onNewErrors string, rules ...modeltest.Rule) *jobSession {
	t.Helper()
	js := newJobSessionKnobs(t, Options{}, testKnobs{verifyEnv: helperEnv(t)}, "[verify]\nenable = \"auto\"\nonNewErrors = \""+onNewErrors+"\"\n", nil, rules...)
	if err := os.WriteFile(filepath.Join(js.dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return js
}

const goFile = "package m\n\nfunc F() int {\n\treturn 1\n}\n"

// goDiff is a reply replacing the line "\treturn <from>" of F with
// "\treturn <to>".
func goDiff(from, to string) string {
	return "```diff\n--- a/a.go\n+++ b/a.go\n@@ -3,3 +3,3 @@\n func F() int {\n-\treturn " + from + "\n+\treturn " + to + "\n }\n```\nDone."
}

const repairMatch = "reports a new error it brings"

// TestFixBreakingTheBuildIsRepaired: the model's edit introduces an
// undefined name; gopls says so, the model is asked again in the same
// conversation with gopls's message, and its corrected edit lands.
func TestFixBreakingTheBuildIsRepaired(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	js := verifySession(t, config.OnNewErrorsRepair,
		modeltest.Rule{Match: repairMatch, Content: goDiff("x", "2")},
		modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "x"), Times: 1},
	)
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	end := js.progressEnd(`"f1"`)
	if !strings.Contains(end, "1 hunk in 1 file applied, verified by gopls: no new errors after repair") {
		t.Errorf("end %q", end)
	}
	reqs := js.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d provider requests, want 2 (the edit, the repair)", len(reqs))
	}
	second := string(reqs[1].Body)
	if !strings.Contains(second, "undefined: x") || !strings.Contains(second, "a.go:4") {
		t.Errorf("the repair request does not quote gopls's error: %.2000s", second)
	}
	// Cache-warm: the repair request is the first one with the answer and
	// the repair message appended.
	if first := string(reqs[0].Body); !strings.HasPrefix(second, first[:strings.LastIndex(first, `"messages"`)]) {
		t.Errorf("the repair request does not extend the first one's conversation")
	}
	if text, _, _ := le.state(uri); text != strings.Replace(goFile, "return 1", "return 2", 1) {
		t.Errorf("buffer %q, want the repaired edit", text)
	}
	var st statsReply
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
		t.Fatal(err)
	}
	if st.Verify.Verified != 1 || st.Verify.Repaired != 1 || st.Verify.Unverified != 0 || st.Verify.RepairTokens == 0 {
		t.Errorf("kimi.stats verify %+v, want 1 verified, 1 repaired, repair tokens counted", st.Verify)
	}
	// The request record names the repair round as such (#25.2).
	if recs := js.session.srv.requestRecord(2).Requests; len(recs) != 2 || recs[0].Surface != "fix" || recs[1].Surface != spend.SurfaceRepair {
		t.Errorf("request record %+v, want the fix, then the repair", recs)
	}
	// The repair round stays in view (issue 33 item 1): from the report
	// that says gopls's error goes back to the model to the end, every
	// report says so, none says "sending tool results", and the first,
	// broken diff is not streamed again.
	const pin = "repairing: gopls found 1 new error: undefined: x"
	pinned := 0
	for _, v := range js.progressOf(`"f1"`) {
		if v.Kind != "report" || pinned == 0 && !strings.Contains(v.Message, pin) {
			continue
		}
		pinned++
		if !strings.HasPrefix(v.Message, pin) || strings.Contains(v.Message, "sending tool results") || strings.Contains(v.Message, "+ return x") {
			t.Errorf("report during the repair %q, want it to start with %q, without the first diff", v.Message, pin)
		}
	}
	if pinned < 2 {
		t.Errorf("%d reports during the repair round, want the repair said from its start to the check", pinned)
	}
	// The cost of the repair round, for bench/README.md.
	t.Logf("repair round: %d tokens (prompt + completion); first request usage %+v; repair request usage %+v", st.Verify.RepairTokens, reqs[0].Usage, reqs[1].Usage)
}

// TestFixIntroducingNoErrorLandsAtOnce: an edit that fixes the error and
// brings none lands with "no new errors" and no second request.
func TestFixIntroducingNoErrorLandsAtOnce(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	broken := strings.Replace(goFile, "return 1", "return y", 1)
	js := verifySession(t, config.OnNewErrorsRepair, modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("y", "1")})
	le := js.liveEditor()
	uri := le.open("a.go", broken)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	end := js.progressEnd(`"f1"`)
	if !strings.Contains(end, "1 hunk in 1 file applied, verified by gopls: no new errors") || strings.Contains(end, "repair") {
		t.Errorf("end %q", end)
	}
	if n := len(js.srv.Requests()); n != 1 {
		t.Errorf("%d provider requests, want 1", n)
	}
	if text, _, _ := le.state(uri); text != goFile {
		t.Errorf("buffer %q", text)
	}
}

// TestNewErrorsAskShowsTheChange: the question's title says "Kimi: Fix"
// once (issue 33 item 2), "Show the change" shows the proposed diff and
// "Show the errors" gopls's error, each before the question comes again.
func TestNewErrorsAskShowsTheChange(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	js := verifySession(t, config.OnNewErrorsAsk, modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "x")})
	answers := []string{choiceChange, choiceShow, choiceDiscard}
	var asked []string
	js.ed.Handle("window/showMessageRequest", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		var req struct {
			Message string              `json:"message"`
			Actions []map[string]string `json:"actions"`
		}
		json.Unmarshal(p, &req)
		asked = append(asked, req.Message)
		if len(req.Actions) != 4 {
			t.Errorf("actions %v, want apply, discard, the errors, the change", req.Actions)
		}
		a := answers[min(len(asked), len(answers))-1]
		return map[string]any{"title": a}, nil
	})
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	end := js.progressEnd(`"f1"`)
	if len(asked) != 3 || !strings.HasPrefix(asked[0], "Kimi: Fix — the edit brings 1 new error") {
		t.Fatalf("asked %q, want 3 questions starting \"Kimi: Fix — \"", asked)
	}
	shown := shownMessages(js.ed)
	if len(shown) != 2 || !strings.HasPrefix(shown[0], "Kimi: the proposed change:\n--- a/a.go\n+++ b/a.go\n@@") ||
		!strings.Contains(shown[0], "\n-\treturn 1\n+\treturn x\n") || !strings.Contains(shown[1], "a.go:4: undefined: x") {
		t.Errorf("shown %q, want the diff, then the error", shown)
	}
	if !strings.Contains(end, "(discarded by your choice)") {
		t.Errorf("end %q", end)
	}
	// While asked, the progress says the job waits for the user.
	waiting := false
	for _, v := range js.progressOf(`"f1"`) {
		waiting = waiting || strings.Contains(v.Message, "waiting for your answer")
	}
	if !waiting {
		t.Errorf("no progress report said it waits for the answer: %+v", js.progressOf(`"f1"`))
	}
}

// TestNewErrorsAskDiscard: with onNewErrors = "ask" the editor is asked
// (no repair round); "Discard" leaves the buffer unchanged.
func TestNewErrorsAskDiscard(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	js := verifySession(t, config.OnNewErrorsAsk, modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "x")})
	asked := make(chan string, 4)
	js.ed.Handle("window/showMessageRequest", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		var req struct {
			Message string `json:"message"`
		}
		json.Unmarshal(p, &req)
		asked <- req.Message
		return map[string]any{"title": choiceDiscard}, nil
	})
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	end := js.progressEnd(`"f1"`)
	select {
	case msg := <-asked:
		if !strings.Contains(msg, "1 new error: undefined: x") || strings.Contains(msg, "Kimi: Kimi:") {
			t.Errorf("question %q", msg)
		}
	default:
		t.Fatal("the editor was not asked")
	}
	if !strings.Contains(end, "not applied: verified by gopls: 1 new error: undefined: x (discarded by your choice)") {
		t.Errorf("end %q", end)
	}
	if text, applies, _ := le.state(uri); text != goFile || applies != 0 {
		t.Errorf("buffer %q after %d applyEdits, want unchanged", text, applies)
	}
	if n := len(js.srv.Requests()); n != 1 {
		t.Errorf("%d provider requests, want 1 (ask: no repair round)", n)
	}
}

// TestFixOfferedFromHelperDiagnostics: a client that sends no diagnostics
// (Neovim sends a server only its own, eglot none): Fix is offered on the
// line gopls reports, titled with its message, and the prompt holds it; on
// a line without an error no Fix is offered.
func TestFixOfferedFromHelperDiagnostics(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	broken := strings.Replace(goFile, "return 1", "return y", 1)
	js := verifySession(t, config.OnNewErrorsRepair, modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("y", "1")})
	le := js.liveEditor()
	uri := le.open("a.go", broken)
	codeActions := func(line int) []codeAction {
		var acts []codeAction
		if err := js.ed.Call(ctxT(t), "textDocument/codeAction", map[string]any{
			"textDocument": map[string]any{"uri": uri},
			"range":        rng(line, 1, line, 1),
			"context":      map[string]any{"diagnostics": []any{}, "triggerKind": 1},
		}, &acts); err != nil {
			t.Fatal(err)
		}
		return acts
	}
	var fix *codeAction
	for _, a := range codeActions(3) {
		if strings.HasPrefix(a.Title, "Kimi: Fix") {
			fix = &a
		}
	}
	if fix == nil || fix.Title != "Kimi: Fix “undefined: y”" {
		t.Fatalf("on gopls's line: Fix %+v, want one titled with gopls's message", fix)
	}
	for _, a := range codeActions(0) {
		if strings.HasPrefix(a.Title, "Kimi: Fix") {
			t.Errorf("on a line without an error: %q offered", a.Title)
		}
	}
	args, _ := json.Marshal(fix.Command.Arguments[0])
	var m map[string]any
	json.Unmarshal(args, &m)
	js.run(fix.Command.Command, m, "f1")
	if end := js.progressEnd(`"f1"`); !strings.Contains(end, "verified by gopls: no new errors") {
		t.Errorf("end %q", end)
	}
	if body := string(js.srv.Requests()[0].Body); !strings.Contains(body, "undefined: y") {
		t.Errorf("the prompt does not hold gopls's message")
	}
}

// TestVerifyOffIsToday: verify.enable = "off" ends exactly as before
// verification existed; without gopls on PATH the edit lands the same and
// the end says it was not verified.
func TestVerifyOffIsToday(t *testing.T) {
	for _, tc := range []struct {
		name, enable, path, want string
	}{
		{"off", config.VerifyOff, "", "1 hunk in 1 file applied ("},
		{"no gopls", config.VerifyAuto, "empty", "1 hunk in 1 file applied, not verified (no gopls found) ("},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.path == "empty" {
				t.Setenv("PATH", t.TempDir())
			}
			js := newJobSessionKnobs(t, Options{}, testKnobs{verifyEnv: helperEnv(t)}, "[verify]\nenable = \""+tc.enable+"\"\n", nil,
				modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "x")})
			le := js.liveEditor()
			uri := le.open("a.go", goFile)
			js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
			if end := js.progressEnd(`"f1"`); !strings.HasPrefix(end, tc.want) {
				t.Errorf("end %q, want it to start with %q", end, tc.want)
			}
			if text, _, _ := le.state(uri); text != strings.Replace(goFile, "return 1", "return x", 1) {
				t.Errorf("buffer %q: the edit did not land", text)
			}
		})
	}
}

// TestPythonTypeErrorRepaired: the same with pyright: a call with a wrong
// argument type is repaired, the repair request quoting pyright.
func TestPythonTypeErrorRepaired(t *testing.T) {
	needHelper(t, "pyright-langserver", "npm install -g pyright@1.1.414")
	const py = "def f(n: int) -> int:\n    return n\n\n\nx = f(1)\n"
	pyDiff := func(from, to string) string {
		return "```diff\n--- a/a.py\n+++ b/a.py\n@@ -4,2 +4,2 @@\n \n-x = f(" + from + ")\n+x = f(" + to + ")\n```\nDone."
	}
	js := verifySession(t, config.OnNewErrorsRepair,
		modeltest.Rule{Match: repairMatch, Content: pyDiff(`"one"`, "2")},
		modeltest.Rule{MatchPrompt: "x = f(1)", Content: pyDiff("1", `"one"`), Times: 1},
	)
	le := js.liveEditor()
	uri := le.open("a.py", py)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(4, 0, 4, 8)}, "f1")
	end := js.progressEnd(`"f1"`)
	if !strings.Contains(end, "verified by pyright (untrusted folder: without the workspace's environment): no new errors after repair") {
		t.Errorf("end %q", end)
	}
	reqs := js.srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), `cannot be assigned to parameter`) {
		t.Fatalf("%d requests; want 2, the second quoting pyright", len(reqs))
	}
	if text, _, _ := le.state(uri); text != strings.Replace(py, "f(1)", "f(2)", 1) {
		t.Errorf("buffer %q", text)
	}
}

// hangingHelperSession is a job session whose Go helper is a real process
// that reads its input and never answers, started within start; the model
// answers a Fix of a.go's F with "return 2".
func hangingHelperSession(t *testing.T, start time.Duration) *jobSession {
	t.Helper()
	script := filepath.Join(t.TempDir(), "hanging-server")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nwhile IFS= read -r line; do :; done\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return newJobSessionKnobs(t, Options{}, testKnobs{verifyEnv: helperEnv(t), verifyStart: start},
		"[verify]\nenable = \"auto\"\n[verify.servers]\ngo = \""+script+"\"\n", nil,
		modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "2")})
}

// TestHangingHelperDoesNotHoldTheEdit: a helper that never answers (a
// real process reading its input) makes the edit unverified within the
// start bound, and it lands, saying so.
func TestHangingHelperDoesNotHoldTheEdit(t *testing.T) {
	js := hangingHelperSession(t, 2*time.Second)
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	start := time.Now()
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	end := js.progressEnd(`"f1"`)
	if !strings.Contains(end, "1 hunk in 1 file applied, not verified (hanging-server did not answer within 2s)") {
		t.Errorf("end %q", end)
	}
	if took := time.Since(start); took > 2*time.Second+20*time.Second {
		t.Errorf("the edit took %v with a 2s start bound", took)
	}
	// The check waits for the helper's start (issue 33 item 4): the
	// progress says so and why a first start is slow while it waits (2 s
	// here), then that the edit is verified.
	var seen []string
	slow, then := -1, -1
	for _, v := range js.progressOf(`"f1"`) {
		seen = append(seen, v.Message)
		switch {
		case v.Message == "starting hanging-server (first start indexes the workspace, can take 10–20 s)":
			slow = len(seen)
		case slow > 0 && v.Message == "verifying the edit":
			then = len(seen)
		}
	}
	if slow < 0 || then < slow {
		t.Errorf("progress %q: want the helper's start and why it is slow, then the check", seen)
	}
}

// TestNewErrorsApplyOrRefuse: onNewErrors = "apply" lands the edit and
// says it brings errors; "refuse" lands nothing. Neither asks nor repairs.
func TestNewErrorsApplyOrRefuse(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	for _, tc := range []struct {
		policy, end, text string
	}{
		{config.OnNewErrorsApply, "1 hunk in 1 file applied, verified by gopls: 1 new error: undefined: x (applied: verify.onNewErrors = apply)", "return x"},
		{config.OnNewErrorsRefuse, "not applied: verified by gopls: 1 new error: undefined: x (verify.onNewErrors = refuse)", "return 1"},
	} {
		t.Run(tc.policy, func(t *testing.T) {
			js := verifySession(t, tc.policy, modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "x")})
			js.ed.Handle("window/showMessageRequest", func(json.RawMessage) (any, *lsptest.ResponseError) {
				t.Error("the editor was asked")
				return nil, nil
			})
			le := js.liveEditor()
			uri := le.open("a.go", goFile)
			js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
			if end := js.progressEnd(`"f1"`); !strings.HasPrefix(end, tc.end) {
				t.Errorf("end %q, want %q", end, tc.end)
			}
			if text, _, _ := le.state(uri); !strings.Contains(text, tc.text) {
				t.Errorf("buffer %q, want %q", text, tc.text)
			}
			if n := len(js.srv.Requests()); n != 1 {
				t.Errorf("%d provider requests, want 1", n)
			}
		})
	}
}

// TestContextFromHelperDefinitions: the selection calls Close on a value
// whose type three files declare a Close for; the symbol index cannot tell
// which, gopls can. The first action starts gopls and keeps the index's
// choice (none of the three); once gopls runs, the prompt holds the one
// Close it names, and neither of the others.
func TestContextFromHelperDefinitions(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	js := verifySession(t, config.OnNewErrorsRepair, modeltest.Rule{MatchPrompt: "conn.Close()", Content: "It closes the connection."})
	filler := strings.Repeat("// Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n", 120) // > 6 KiB: enters by snippets
	for _, name := range []string{"A", "B", "C"} {
		text := "package m\n\n" + filler + "\n// " + name + " is one kind of connection.\ntype " + name +
			" struct{ addr string }\n\n// Close closes the " + name + " connection.\nfunc (x *" + name + ") Close() error { return nil }\n"
		if err := os.WriteFile(filepath.Join(js.dir, "conn_"+strings.ToLower(name)+".go"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pool := "package m\n\n" + filler + "\n// Pool hands out Bs.\ntype Pool struct{ idle []*B }\n\n// Get returns an idle B.\nfunc (p *Pool) Get() *B { return p.idle[0] }\n"
	if err := os.WriteFile(filepath.Join(js.dir, "pool.go"), []byte(pool), 0o644); err != nil {
		t.Fatal(err)
	}
	// The files were written after the folder's scan started: wait until
	// its tree holds them all, so that the symbol index sees three Close
	// methods (with one seen, it would choose that one).
	waitFor(t, func() bool {
		v, _, ok := js.session.srv.folders.ViewOf(filepath.Join(js.dir, "pool.go"))
		if !ok || v.Tree() == nil {
			return false
		}
		for _, name := range []string{"conn_a.go", "conn_b.go", "conn_c.go", "pool.go"} {
			if _, ok := v.Tree().Lookup(name); !ok {
				return false
			}
		}
		return true
	})
	const run = "package m\n\nfunc Run(p *Pool) {\n\tconn := p.Get()\n\tconn.Close()\n}\n"
	le := js.liveEditor()
	uri := le.open("run.go", run)
	closes := func(body string) (a, b, c bool) {
		return strings.Contains(body, "Close closes the A connection"), strings.Contains(body, "Close closes the B connection"),
			strings.Contains(body, "Close closes the C connection")
	}
	// Document the line (the answer proposes no change): unlike an
	// explanation, it is asked of the model each time.
	var got string
	for i := 0; i < 60; i++ {
		token := fmt.Sprintf("d%d", i)
		js.run("kimi.document", map[string]any{"uri": uri, "range": rng(4, 1, 4, 13)}, token)
		js.progressEnd(`"` + token + `"`)
		reqs := js.srv.Requests()
		body := string(reqs[len(reqs)-1].Body)
		a, b, c := closes(body)
		if a || c {
			t.Fatalf("attempt %d: another type's Close is in the prompt (A %v, C %v)", i, a, c)
		}
		if i == 0 && b {
			t.Fatalf("the first action, before gopls ran, has B's Close: the symbol index chose it")
		}
		if b {
			got = body
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got == "" {
		t.Fatalf("B's Close never reached the prompt")
	}
	var st statsReply
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
		t.Fatal(err)
	}
	if st.Verify.ContextActions == 0 || st.Verify.DefinitionsLocated == 0 || st.Verify.DefinitionNames < st.Verify.DefinitionsLocated {
		t.Errorf("kimi.stats verify %+v: no action counted with the helper's definitions", st.Verify)
	}
}

// TestEditOfTwoLanguagesOneHelperMissing: an edit of a Go and a Python
// file without a Python helper: the error gopls finds is repaired all the
// same, and the end says what gopls verified and what was not verified.
func TestEditOfTwoLanguagesOneHelperMissing(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	const py = "x = 1\n"
	reply := func(from, to string) string {
		return "```diff\n--- a/a.go\n+++ b/a.go\n@@ -3,3 +3,3 @@\n func F() int {\n-\treturn " + from + "\n+\treturn " + to + "\n }\n" +
			"--- a/b.py\n+++ b/b.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n```\nDone."
	}
	js := newJobSessionKnobs(t, Options{}, testKnobs{verifyEnv: helperEnv(t)},
		"[verify]\nenable = \"auto\"\nonNewErrors = \"repair\"\n[verify.servers]\npython = \"no-such-pyright --stdio\"\n", nil,
		modeltest.Rule{Match: repairMatch, Content: goDiff("x", "2")},
		modeltest.Rule{MatchPrompt: "func F() int", Content: reply("1", "x"), Times: 1},
	)
	for name, text := range map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "b.py": py} {
		if err := os.WriteFile(filepath.Join(js.dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	le.open("b.py", py)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	end := js.progressEnd(`"f1"`)
	if !strings.Contains(end, "verified by gopls: no new errors after repair; not verified (no no-such-pyright found)") {
		t.Errorf("end %q", end)
	}
	reqs := js.srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "undefined: x") {
		t.Fatalf("%d provider requests; want 2, the second quoting gopls", len(reqs))
	}
	if text, _, _ := le.state(uri); text != strings.Replace(goFile, "return 1", "return 2", 1) {
		t.Errorf("buffer %q, want the repaired edit", text)
	}
}

// TestNewErrorsAskEditorCannotAsk: with onNewErrors = "ask", an editor
// that answers window/showMessageRequest with an error (it has no such
// dialog) leaves the buffer unchanged, and the end does not claim the user
// chose to discard the edit.
func TestNewErrorsAskEditorCannotAsk(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	js := verifySession(t, config.OnNewErrorsAsk, modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "x")})
	js.ed.Handle("window/showMessageRequest", func(json.RawMessage) (any, *lsptest.ResponseError) {
		return nil, &lsptest.ResponseError{Code: -32601, Message: "method not found"}
	})
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	end := js.progressEnd(`"f1"`)
	if !strings.Contains(end, "not applied: verified by gopls: 1 new error: undefined: x (the editor could not ask whether to apply it") || strings.Contains(end, "your choice") {
		t.Errorf("end %q", end)
	}
	if text, applies, _ := le.state(uri); text != goFile || applies != 0 {
		t.Errorf("buffer %q after %d applyEdits, want unchanged", text, applies)
	}
}

// TestCheckSeesFilesWrittenOnDisk: a file written on disk while gopls
// runs (a checkout, a generator; not open in the editor) is part of the
// next check: an edit calling the function it declares lands verified,
// with no repair round.
func TestCheckSeesFilesWrittenOnDisk(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	seen := make(chan string, 100)
	js := newJobSessionKnobs(t, Options{}, testKnobs{verifyEnv: helperEnv(t), hook: func(point string, arg any) {
		if point == "diskChanged" {
			for _, c := range arg.([]verify.FileChange) {
				seen <- string(c.URI)
			}
		}
	}}, "[verify]\nenable = \"auto\"\nonNewErrors = \"refuse\"\n", nil,
		modeltest.Rule{MatchPrompt: "return 1", Content: goDiff("1", "2"), Times: 1},
		modeltest.Rule{MatchPrompt: "return 2", Content: goDiff("2", "helper()")},
	)
	if err := os.WriteFile(filepath.Join(js.dir, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	// The first edit starts gopls.
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	if end := js.progressEnd(`"f1"`); !strings.Contains(end, "verified by gopls: no new errors") {
		t.Fatalf("end %q", end)
	}
	b := filepath.Join(js.dir, "b.go")
	if err := os.WriteFile(b, []byte("package m\n\nfunc helper() int { return 3 }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for want := string(workspace.FileURI(b)); ; {
		select {
		case u := <-seen:
			if u != want {
				continue
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the folder's view never reported b.go")
		}
		break
	}
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f2")
	if end := js.progressEnd(`"f2"`); !strings.Contains(end, "1 hunk in 1 file applied, verified by gopls: no new errors") {
		t.Errorf("end %q", end)
	}
	if text, _, _ := le.state(uri); !strings.Contains(text, "return helper()") {
		t.Errorf("buffer %q", text)
	}
}

// helperPids returns the pids of the processes named name that run in
// dir (a helper runs in the first workspace folder), from /proc.
func helperPids(t *testing.T, name, dir string) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var out []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil {
			continue
		}
		comm, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if strings.TrimSpace(string(comm)) == name && cwd == dir {
			out = append(out, pid)
		}
	}
	return out
}

// TestVerifyTurnedOffStopsHelpers: verify.enable = "off" sent by the
// editor (didChangeConfiguration) stops the running gopls at once, not
// at its idle stop; the next edit is not verified.
func TestVerifyTurnedOffStopsHelpers(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	js := verifySession(t, config.OnNewErrorsRepair,
		modeltest.Rule{MatchPrompt: "return 1", Content: goDiff("1", "2"), Times: 1},
		modeltest.Rule{MatchPrompt: "return 2", Content: goDiff("2", "3")})
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	if end := js.progressEnd(`"f1"`); !strings.Contains(end, "verified by gopls: no new errors") {
		t.Fatalf("end %q", end)
	}
	if len(helperPids(t, "gopls", js.dir)) == 0 {
		t.Fatal("no gopls runs in the folder after a verified edit")
	}
	waitFor(t, func() bool { // the editor's didChange of the edit
		for _, d := range js.session.srv.docs.All() {
			if strings.Contains(d.Text(), "return 2") {
				return true
			}
		}
		return false
	})
	js.ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) {
		return []any{map[string]any{"verify": map[string]any{"enable": "off"}}}, nil
	})
	js.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": nil})
	waitFor(t, func() bool { return js.session.srv.config().Verify.Enable == config.VerifyOff })
	waitFor(t, func() bool { return len(helperPids(t, "gopls", js.dir)) == 0 })
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f2")
	if end := js.progressEnd(`"f2"`); !strings.HasPrefix(end, "1 hunk in 1 file applied (") {
		t.Errorf("end %q, want no verification", end)
	}
}

// TestCancelWhileAskedAboutNewErrors: the job cancelled while the editor
// asks whether to apply an edit that brings new errors ends cancelled,
// with the buffer unchanged, not "discarded by your choice".
func TestCancelWhileAskedAboutNewErrors(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	js := verifySession(t, config.OnNewErrorsAsk, modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "x")})
	asked := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	js.ed.Handle("window/showMessageRequest", func(json.RawMessage) (any, *lsptest.ResponseError) {
		close(asked)
		<-release // the user has not decided yet
		return nil, nil
	})
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, 9)
	select {
	case <-asked:
	case <-ctxT(t).Done():
		t.Fatal("the editor was not asked")
	}
	js.ed.Notify("window/workDoneProgress/cancel", map[string]any{"token": 9})
	end := js.progressEnd(`9`)
	if !strings.Contains(strings.ToLower(end), "cancel") || strings.Contains(end, "your choice") {
		t.Errorf("end %q", end)
	}
	if text, applies, _ := le.state(uri); text != goFile || applies != 0 {
		t.Errorf("buffer %q after %d applyEdits, want unchanged", text, applies)
	}
}

// TestRepairThatDoesNotApplyKeepsTheEdit: the repair's diff does not
// apply (to the text after the edit nor to the one before it), nor after
// the correction: the edit is not lost, the user is asked about it as it
// was, with gopls's error.
func TestRepairThatDoesNotApplyKeepsTheEdit(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	js := verifySession(t, config.OnNewErrorsRepair,
		modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "x"), Times: 1},
		modeltest.Rule{Content: goDiff("7", "2")}, // the repair, against a text that never was
	)
	asked := make(chan string, 4)
	js.ed.Handle("window/showMessageRequest", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		asked <- string(p)
		return map[string]any{"title": choiceApply}, nil
	})
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	end := js.progressEnd(`"f1"`)
	if !strings.HasPrefix(end, "1 hunk in 1 file applied, verified by gopls: 1 new error after repair: undefined: x (kept by your choice)") {
		t.Errorf("end %q", end)
	}
	if len(asked) != 1 {
		t.Errorf("the editor was asked %d times, want once", len(asked))
	}
	if n := len(js.srv.Requests()); n != 3 {
		t.Errorf("%d provider requests, want 3 (the edit, the repair, its correction)", n)
	}
	if text, _, _ := le.state(uri); text != strings.Replace(goFile, "return 1", "return x", 1) {
		t.Errorf("buffer %q, want the edit as it was before the repair", text)
	}
}

// TestRepairRestatedAgainstTheOriginalLands: the model answers the repair
// with the whole corrected change against the file as it was before its
// edit (as models often do, although the prompt asks for edits on the
// files as they are now): it does not apply to the edit, applies to the
// original, replaces the first edit, is checked by gopls the same way and
// lands verified; the end says the repair restated the change.
func TestRepairRestatedAgainstTheOriginalLands(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	js := verifySession(t, config.OnNewErrorsRepair,
		modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "x"), Times: 1},
		modeltest.Rule{Match: repairMatch, Content: goDiff("1", "2")}, // against the text before the edit
	)
	js.ed.Handle("window/showMessageRequest", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		t.Errorf("asked %s: the restated repair has no new error", p)
		return map[string]any{"title": choiceDiscard}, nil
	})
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	end := js.progressEnd(`"f1"`)
	if !strings.Contains(end, "1 hunk in 1 file applied, verified by gopls: no new errors after repair (the repair restated the whole change)") {
		t.Errorf("end %q", end)
	}
	if n := len(js.srv.Requests()); n != 2 {
		t.Errorf("%d provider requests, want 2 (the edit, the repair): no correction round", n)
	}
	if text, _, _ := le.state(uri); text != strings.Replace(goFile, "return 1", "return 2", 1) {
		t.Errorf("buffer %q, want the restated change", text)
	}
	var st statsReply
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
		t.Fatal(err)
	}
	if st.Verify.Verified != 1 || st.Verify.Repaired != 1 || st.Verify.WithErrors != 0 {
		t.Errorf("kimi.stats verify %+v, want 1 verified, 1 repaired", st.Verify)
	}
}

// TestHelperCrashDuringRepair: gopls is killed while the model writes its
// repair; the repaired edit is checked by a gopls started again, and
// lands verified.
func TestHelperCrashDuringRepair(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	var js *jobSession
	killed := make(chan []int, 1)
	js = verifySession(t, config.OnNewErrorsRepair,
		modeltest.Rule{Match: repairMatch, Content: goDiff("x", "2"), DelayMS: 1000},
		modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "x"), Times: 1},
	)
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	go func() {
		// The repair request is being answered (it takes a second): kill
		// the gopls that checked the first edit.
		deadline := time.Now().Add(30 * time.Second)
		for open, _ := js.srv.Open(); len(js.srv.Requests()) < 1 || open < 1; open, _ = js.srv.Open() {
			if time.Now().After(deadline) {
				killed <- nil
				return
			}
			time.Sleep(2 * time.Millisecond)
		}
		pids := helperPids(t, "gopls", js.dir)
		for _, pid := range pids {
			p, _ := os.FindProcess(pid)
			_ = p.Kill()
		}
		killed <- pids
	}()
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	end := js.progressEnd(`"f1"`)
	if pids := <-killed; len(pids) == 0 {
		t.Fatal("no gopls was running during the repair")
	}
	if !strings.Contains(end, "1 hunk in 1 file applied, verified by gopls: no new errors after repair") {
		t.Errorf("end %q", end)
	}
	if text, _, _ := le.state(uri); text != strings.Replace(goFile, "return 1", "return 2", 1) {
		t.Errorf("buffer %q", text)
	}
}

// TestCancelDuringCheckCountsNothing: a job cancelled while its edit is
// being checked ends cancelled, lands nothing, and kimi.stats counts no
// unverified edit for it.
func TestCancelDuringCheckCountsNothing(t *testing.T) {
	js := hangingHelperSession(t, 60*time.Second)
	le := js.liveEditor()
	uri := le.open("a.go", goFile)
	job := js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "f1")
	if _, err := js.ed.WaitMethod(ctxT(t), "$/progress", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "verifying the edit") || strings.Contains(string(p), "starting hanging-server")
	}); err != nil {
		t.Fatal(err)
	}
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.cancel", "arguments": []any{map[string]any{"job": job}}}, nil); err != nil {
		t.Fatal(err)
	}
	if end := js.progressEnd(`"f1"`); !strings.Contains(end, "cancel") {
		t.Errorf("end %q, want cancelled", end)
	}
	if text, _, _ := le.state(uri); text != goFile {
		t.Errorf("buffer %q: a cancelled edit landed", text)
	}
	var st statsReply
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
		t.Fatal(err)
	}
	if st.Verify.Unverified != 0 || st.Verify.Verified != 0 {
		t.Errorf("kimi.stats verify %+v: the cancelled job was counted", st.Verify)
	}
}

// TestFolderAddedAfterHelperStarted: a workspace folder (another Go
// module) added after gopls started is told to it: a Fix there is
// checked with that module's view (its one new error, not the module's own
// names as undefined), and no helper Fix is offered on its valid lines.
func TestFolderAddedAfterHelperStarted(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	use := "package n\n\nimport \"example.com/n/sub\"\n\nfunc G() int {\n\treturn Helper() + sub.K\n}\n"
	js := verifySession(t, config.OnNewErrorsApply,
		modeltest.Rule{MatchPrompt: "func G() int", Content: "```diff\n--- a/n.go\n+++ b/n.go\n@@ -7 +7,3 @@\n }\n+\n+func H() int { return Helper() + y }\n```\nDone."},
		modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "2"), Times: 1},
	)
	le := js.liveEditor()
	a := le.open("a.go", goFile)
	js.run("kimi.fix", map[string]any{"uri": a, "range": rng(2, 0, 4, 1)}, "f1")
	if end := js.progressEnd(`"f1"`); !strings.Contains(end, "verified by gopls: no new errors") {
		t.Fatalf("first folder: end %q", end)
	}

	second := secondGoModule(t)
	js.ed.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": string(workspace.FileURI(second)), "name": "second"}}, "removed": []any{}}})
	rel, err := filepath.Rel(js.dir, filepath.Join(second, "n.go"))
	if err != nil {
		t.Fatal(err)
	}
	n := le.open(rel, use)
	var acts []codeAction
	if err := js.ed.Call(ctxT(t), "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": n},
		"range":        rng(5, 1, 5, 1),
		"context":      map[string]any{"diagnostics": []any{}, "triggerKind": 1},
	}, &acts); err != nil {
		t.Fatal(err)
	}
	for _, a := range acts {
		if strings.HasPrefix(a.Title, "Kimi: Fix") {
			t.Errorf("on a valid line of the added folder: %q offered", a.Title)
		}
	}
	js.run("kimi.fix", map[string]any{"uri": n, "range": rng(4, 0, 6, 1)}, "f2")
	if end := js.progressEnd(`"f2"`); !strings.Contains(end, "verified by gopls: 1 new error: undefined: y") {
		t.Errorf("added folder: end %q, want gopls's one new error", end)
	}
}

// secondGoModule writes another Go module, example.com/n, whose n.go (not
// written) may use Helper and sub.K.
func secondGoModule(t *testing.T) string {
	t.Helper()
	second := t.TempDir()
	for name, text := range map[string]string{
		"go.mod": "module example.com/n\n\ngo 1.22\n", "helper.go": "package n\n\nfunc Helper() int { return 2 }\n",
		"sub/sub.go": "package sub\n\nconst K = 3\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(second, name)), 0o755)
		if err := os.WriteFile(filepath.Join(second, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return second
}

// TestFolderRemovedStopsHelperRunningThere: removing the workspace folder
// gopls runs in stops it at once (it no longer holds that directory, nor
// knows a folder outside the workspace); the next Fix, in the folder
// left, is checked by a gopls running there.
func TestFolderRemovedStopsHelperRunningThere(t *testing.T) {
	needHelper(t, "gopls", "go install golang.org/x/tools/gopls@v0.23.0")
	use := "package n\n\nimport \"example.com/n/sub\"\n\nfunc G() int {\n\treturn Helper() + sub.K\n}\n"
	js := verifySession(t, config.OnNewErrorsApply,
		modeltest.Rule{MatchPrompt: "func G() int", Content: "```diff\n--- a/n.go\n+++ b/n.go\n@@ -7 +7,3 @@\n }\n+\n+func H() int { return Helper() + y }\n```\nDone."},
		modeltest.Rule{MatchPrompt: "func F() int", Content: goDiff("1", "2"), Times: 1},
	)
	le := js.liveEditor()
	a := le.open("a.go", goFile)
	second := secondGoModule(t)
	rel, err := filepath.Rel(js.dir, filepath.Join(second, "n.go"))
	if err != nil {
		t.Fatal(err)
	}
	js.ed.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{map[string]any{"uri": string(workspace.FileURI(second)), "name": "second"}}, "removed": []any{}}})
	js.run("kimi.fix", map[string]any{"uri": a, "range": rng(2, 0, 4, 1)}, "f1")
	if end := js.progressEnd(`"f1"`); !strings.Contains(end, "verified by gopls: no new errors") {
		t.Fatalf("first folder: end %q", end)
	}
	if len(helperPids(t, "gopls", js.dir)) == 0 {
		t.Fatal("no gopls runs in the first folder after a verified edit")
	}
	js.ed.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added": []any{}, "removed": []any{map[string]any{"uri": string(workspace.FileURI(js.dir)), "name": "root"}}}})
	waitFor(t, func() bool { return len(helperPids(t, "gopls", js.dir)) == 0 })
	n := le.open(rel, use)
	js.run("kimi.fix", map[string]any{"uri": n, "range": rng(4, 0, 6, 1)}, "f2")
	if end := js.progressEnd(`"f2"`); !strings.Contains(end, "verified by gopls: 1 new error: undefined: y") {
		t.Errorf("folder left: end %q, want gopls's one new error", end)
	}
	// The gopls that checked it runs in the folder left (a scan of /proc
	// under load may miss a process for a moment: looked for until seen).
	waitFor(t, func() bool { return len(helperPids(t, "gopls", second)) > 0 })
	if n := len(helperPids(t, "gopls", js.dir)); n != 0 {
		t.Errorf("%d gopls still run in the removed folder", n)
	}
}
