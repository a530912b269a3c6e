package lsp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// standIn starts the stand-in provider with the given rules.
func standIn(t *testing.T, rules ...modeltest.Rule) *modeltest.Server {
	t.Helper()
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: rules}})
	t.Cleanup(srv.Close)
	return srv
}

// providerConfig is the configuration that points at srv.
func providerConfig(t *testing.T, srv *modeltest.Server) config.Config {
	t.Helper()
	// No helper language server in the tests of other features: what they
	// assert is today's behaviour, which verify.enable = "off" keeps
	// exactly (verify_test.go turns it on).
	return providerConfigFile(t, srv, "[verify]\nenable = \"off\"\n")
}

// providerConfig is the configuration pointing at the stand-in, with a
// user configuration file holding userTOML.
func providerConfigFile(t *testing.T, srv *modeltest.Server, userTOML string) config.Config {
	t.Helper()
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	user := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(user, []byte(userTOML), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, errs := config.Default().WithUserFile(user)
	if config.HasErrors(errs) {
		t.Fatal(errs)
	}
	cfg, errs = cfg.WithEnv(func(k string) string { return env[k] })
	if config.HasErrors(errs) {
		t.Fatal(errs)
	}
	return cfg
}

// jobSession is a session in a temporary workspace, pointed at the
// stand-in provider, with a client that records applyEdit and showDocument.
type jobSession struct {
	*session
	dir  string
	srv  *modeltest.Server
	mu   sync.Mutex
	docs map[string]string // showDocument URI → file contents at the time
}

func newJobSession(t *testing.T, params map[string]any, rules ...modeltest.Rule) *jobSession {
	t.Helper()
	return newJobSessionOpts(t, Options{}, params, rules...)
}

// newJobSessionOpts is newJobSession with server options; Config is set to
// point at the stand-in.
func newJobSessionOpts(t *testing.T, opts Options, params map[string]any, rules ...modeltest.Rule) *jobSession {
	t.Helper()
	return newJobSessionConfig(t, opts, "", params, rules...)
}

// newJobSessionConfig is newJobSessionOpts with a user configuration file
// holding userTOML ("": the tests' default, verification off).
func newJobSessionConfig(t *testing.T, opts Options, userTOML string, params map[string]any, rules ...modeltest.Rule) *jobSession {
	t.Helper()
	return newJobSessionKnobs(t, opts, testKnobs{}, userTOML, params, rules...)
}

// newJobSessionKnobs is newJobSessionConfig with the test knobs set.
func newJobSessionKnobs(t *testing.T, opts Options, knobs testKnobs, userTOML string, params map[string]any, rules ...modeltest.Rule) *jobSession {
	t.Helper()
	srv := standIn(t, rules...)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	js := &jobSession{dir: dir, srv: srv, docs: map[string]string{}}
	if userTOML == "" {
		opts.Config = providerConfig(t, srv)
	} else {
		opts.Config = providerConfigFile(t, srv, userTOML)
	}
	js.session = newSessionKnobs(t, opts, knobs, nil)
	js.ed.Handle("window/showDocument", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		var sd struct {
			URI string `json:"uri"`
		}
		json.Unmarshal(p, &sd)
		u, _ := workspace.ParseURI(sd.URI)
		path, _ := u.Path()
		b, _ := os.ReadFile(path)
		js.mu.Lock()
		js.docs[sd.URI] = string(b)
		js.mu.Unlock()
		return map[string]any{"success": true}, nil
	})
	js.ed.Handle("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.ResponseError) { return nil, nil })
	if params == nil {
		params = lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))
	} else if params["rootUri"] == inJobDir {
		d := lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))
		params["rootUri"], params["workspaceFolders"] = d["rootUri"], d["workspaceFolders"]
	}
	js.initialize(params)
	return js
}

// inJobDir, as the rootUri of newJobSession's params, is replaced by the
// session's directory.
const inJobDir = "<the job session's directory>"

// file writes a file in the workspace and opens it in the editor.
func (js *jobSession) file(name, text string) string {
	js.t.Helper()
	p := filepath.Join(js.dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		js.t.Fatal(err)
	}
	uri := string(workspace.FileURI(p))
	js.open(uri, text)
	js.text(uri, 1)
	return uri
}

// run executes a command and returns the job id.
func (js *jobSession) run(command string, args map[string]any, token any) string {
	js.t.Helper()
	params := map[string]any{"command": command, "arguments": []any{args}}
	if token != nil {
		params["workDoneToken"] = token
	}
	var reply struct {
		Job string `json:"job"`
	}
	if err := js.ed.Call(ctxT(js.t), "workspace/executeCommand", params, &reply); err != nil {
		js.t.Fatalf("%s: %v", command, err)
	}
	if reply.Job == "" {
		js.t.Fatalf("%s: no job id in the reply", command)
	}
	return reply.Job
}

// progressEnd waits for the end of the progress with token.
func (js *jobSession) progressEnd(token string) string {
	js.t.Helper()
	m, err := js.ed.WaitMethod(ctxT(js.t), "$/progress", func(p json.RawMessage) bool {
		var pp struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind string `json:"kind"`
			} `json:"value"`
		}
		json.Unmarshal(p, &pp)
		return sameJSON(pp.Token, json.RawMessage(token)) && pp.Value.Kind == "end"
	})
	if err != nil {
		js.t.Fatalf("no progress end for %s: %v", token, err)
	}
	var pp struct {
		Value struct {
			Message string `json:"message"`
		} `json:"value"`
	}
	json.Unmarshal(m.Params, &pp)
	return pp.Value.Message
}

// progressOf returns the $/progress values sent for token, in order.
func (js *jobSession) progressOf(token string) []progressValue {
	var out []progressValue
	for _, m := range js.ed.Messages() {
		if m.Method != "$/progress" {
			continue
		}
		var pp struct {
			Token json.RawMessage `json:"token"`
			Value progressValue   `json:"value"`
		}
		json.Unmarshal(m.Params, &pp)
		if sameJSON(pp.Token, json.RawMessage(token)) {
			pp.Value.At = m.At
			out = append(out, pp.Value)
		}
	}
	return out
}

type progressValue struct {
	Kind        string `json:"kind"`
	Title       string `json:"title"`
	Message     string `json:"message"`
	Cancellable bool   `json:"cancellable"`
	At          time.Time
}

const explainText = "This function adds two numbers and returns the sum. It has no side effects; overflow wraps around as Go's int arithmetic does."

// TestExplainStreams is issue 5's main check: a 50-chunk stream over about
// two seconds reaches the editor as begin, many reports spread over the
// stream, and end; meanwhile didChange, codeAction and other requests are
// answered before the stream ends; the explanation opens with
// showDocument.
func TestExplainStreams(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "Explain", Reasoning: "Reading the function.", Content: explainText, Chunks: 50, IntervalMS: 40})
	uri := js.file("add.go", "package add\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n")
	other := js.file("other.go", "package add\n")
	ctx := ctxT(t)
	start := time.Now()
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "tok-1")

	// While the model streams, the server answers everything else.
	if _, err := js.ed.WaitMethod(ctx, "$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"report"`) }); err != nil {
		t.Fatal(err)
	}
	js.ed.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": other, "version": 2},
		"contentChanges": []any{map[string]any{"text": "package add // changed\n"}},
	})
	var actions []codeAction
	if err := js.ed.Call(ctx, "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "range": rng(2, 0, 2, 0), "context": map[string]any{"diagnostics": []any{}, "triggerKind": triggerInvoked},
	}, &actions); err != nil {
		t.Fatal(err)
	}
	answered := time.Now()
	if got := js.text(other, 2); got != "package add // changed\n" {
		t.Errorf("didChange during the stream: %q", got)
	}
	if len(actions) == 0 {
		t.Errorf("no code actions during the stream")
	}

	end := js.progressEnd(`"tok-1"`)
	if !strings.HasPrefix(end, "explanation ready") {
		t.Errorf("end message %q, want explanation ready…", end)
	}
	vals := js.progressOf(`"tok-1"`)
	if len(vals) < 12 || vals[0].Kind != "begin" || vals[len(vals)-1].Kind != "end" {
		t.Fatalf("progress: %d values, first %+v; want begin, ≥10 reports, end", len(vals), vals[0])
	}
	if vals[0].Title != "Kimi: Explain" || !vals[0].Cancellable {
		t.Errorf("begin = %+v, want title Kimi: Explain, cancellable", vals[0])
	}
	reports := vals[1 : len(vals)-1]
	if !answered.Before(vals[len(vals)-1].At) {
		t.Errorf("requests answered at %v, after the stream ended at %v", answered.Sub(start), vals[len(vals)-1].At.Sub(start))
	}
	// Reports follow the stream, not bunched at its end: they show the
	// answer growing (no clock: under load the stream may stretch).
	distinct := map[string]bool{}
	for _, r := range reports {
		distinct[r.Message] = true
	}
	if len(distinct) < 5 || strings.Contains(reports[0].Message, "wraps around") {
		t.Errorf("%d distinct reports, the first %q; want the text growing over the stream", len(distinct), reports[0].Message)
	}
	spread := reports[len(reports)-1].At.Sub(reports[0].At)
	last := reports[len(reports)-1].Message
	if !strings.Contains(explainText, strings.TrimPrefix(last, "…")) {
		t.Errorf("last report %q is not a tail of the answer", last)
	}
	t.Logf("%d reports over %v; requests answered %v after the job started", len(reports), spread, answered.Sub(start))

	js.mu.Lock()
	defer js.mu.Unlock()
	if len(js.docs) != 1 {
		t.Fatalf("showDocument calls: %v, want one", js.docs)
	}
	for u, text := range js.docs {
		if !strings.HasSuffix(u, ".md") || !strings.Contains(text, explainText) {
			t.Errorf("showDocument %s with %q, want a .md file holding the explanation", u, text)
		}
	}
}

// TestExplainTwiceServedFromResult: asking again for unchanged code makes
// no model call.
func TestExplainTwiceServedFromResult(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "Explain", Content: explainText})
	uri := js.file("add.go", "package add\n\nfunc Add(a, b int) int { return a + b }\n")
	args := map[string]any{"uri": uri, "range": rng(2, 0, 2, 10)}
	js.run("kimi.explain", args, "a")
	js.progressEnd(`"a"`)
	js.run("kimi.explain", args, "b")
	if end := js.progressEnd(`"b"`); !strings.Contains(end, "no model call") {
		t.Errorf("second explain ended with %q, want it served from the earlier answer", end)
	}
	if n := len(js.srv.Requests()); n != 1 {
		t.Errorf("provider saw %d requests, want 1", n)
	}
}

// waitNoJobs asks kimi.stats until no job runs. A job's last notification
// is written before the job leaves the list, so every message of the jobs
// is in js.ed.Messages() once this returns.
func (js *jobSession) waitNoJobs() {
	js.t.Helper()
	ctx := ctxT(js.t)
	for {
		var st struct {
			Jobs []json.RawMessage `json:"jobs"`
		}
		if err := js.ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
			js.t.Fatalf("kimi.stats: %v", err)
		}
		if len(st.Jobs) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			js.t.Fatalf("jobs still running: %d", len(st.Jobs))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// noProgressParams are initialize params of a client without progress
// support (eglot 1.9 declares no window capability at all), with
// showDocument support when showDocument is set.
func noProgressParams(t *testing.T, showDocument bool) map[string]any {
	params := lsptest.DefaultInitializeParams(string(workspace.FileURI(t.TempDir())))
	caps := params["capabilities"].(map[string]any)
	caps["window"] = map[string]any{}
	if showDocument {
		caps["window"] = map[string]any{"showDocument": map[string]any{"support": true}}
	}
	return params
}

// windowMessage is a showMessage or logMessage as the editor got it.
type windowMessage struct {
	method  string
	typ     int
	message string
}

// windowMessages returns the showMessage and logMessage notifications
// received so far, in order, and fails on any $/progress.
func (js *jobSession) windowMessages() []windowMessage {
	js.t.Helper()
	var out []windowMessage
	for _, m := range js.ed.Messages() {
		switch m.Method {
		case "$/progress":
			js.t.Errorf("$/progress sent to a client without progress support: %s", m.Params)
		case "window/showMessage", "window/logMessage":
			var p struct {
				Type    int    `json:"type"`
				Message string `json:"message"`
			}
			json.Unmarshal(m.Params, &p)
			out = append(out, windowMessage{m.Method, p.Type, p.Message})
		}
	}
	return out
}

// TestClientWithoutProgress: a client with neither progress nor
// showDocument (eglot 1.9) is told once that the job started, then gets the
// whole explanation in one window/showMessage and no message after it (an
// "explanation ready" shown over the answer would replace it in a one-line
// echo area); the stream is not sent as log lines, whatever its length:
// at most two log lines per explain.
func TestClientWithoutProgress(t *testing.T) {
	js := newJobSession(t, noProgressParams(t, false), modeltest.Rule{Match: "Explain", Content: explainText, Chunks: 60, IntervalMS: 10})
	uri := js.file("add.go", "package add\n")
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(0, 0, 0, 5)}, nil)
	js.waitNoJobs()
	msgs := js.windowMessages()
	var shown []windowMessage
	answer, logs := -1, 0
	for i, m := range msgs {
		if m.method == "window/logMessage" {
			logs++
			continue
		}
		shown = append(shown, m)
		if strings.Contains(m.message, explainText) {
			answer = i
		}
	}
	if answer < 0 {
		t.Fatalf("no showMessage holds the whole explanation: %+v", msgs)
	}
	if len(shown) != 2 || !strings.HasPrefix(shown[0].message, "Kimi: Explain: asking ") {
		t.Errorf("showMessages %+v, want the start notice then the explanation", shown)
	}
	for _, m := range msgs[answer+1:] {
		if m.method == "window/showMessage" {
			t.Errorf("showMessage %q after the explanation", m.message)
		}
	}
	if logs > 2 {
		t.Errorf("%d logMessage lines for one explain, want at most 2: %+v", logs, msgs)
	}
	if last := msgs[len(msgs)-1]; last.method != "window/logMessage" || !strings.Contains(last.message, "explanation ready") {
		t.Errorf("last message %+v, want the outcome logged", last)
	}
}

// TestClientWithoutProgressShowDocument: a client without progress support
// that declares showDocument gets the explanation file opened, not the text
// in a message; the outcome is then shown (nothing to cover).
func TestClientWithoutProgressShowDocument(t *testing.T) {
	js := newJobSession(t, noProgressParams(t, true), modeltest.Rule{Match: "Explain", Content: explainText, Chunks: 60, IntervalMS: 10})
	uri := js.file("add.go", "package add\n")
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(0, 0, 0, 5)}, nil)
	js.waitNoJobs()
	js.mu.Lock()
	docs := len(js.docs)
	for u, text := range js.docs {
		if !strings.HasSuffix(u, ".md") || !strings.Contains(text, explainText) {
			t.Errorf("showDocument %s with %q, want a .md file holding the explanation", u, text)
		}
	}
	js.mu.Unlock()
	if docs != 1 {
		t.Fatalf("%d showDocument requests, want 1", docs)
	}
	logs := 0
	msgs := js.windowMessages()
	for _, m := range msgs {
		if m.method == "window/logMessage" {
			logs++
		} else if strings.Contains(m.message, explainText) {
			t.Errorf("explanation sent in a showMessage too: %q", m.message)
		}
	}
	if logs > 2 {
		t.Errorf("%d logMessage lines for one explain, want at most 2: %+v", logs, msgs)
	}
	if last := msgs[len(msgs)-1]; last.method != "window/showMessage" || !strings.Contains(last.message, "explanation ready") {
		t.Errorf("last message %+v, want the outcome shown", last)
	}
}

// TestCancelRoutes cancels a slow stream by each of the three routes: the
// provider sees the hang-up and the progress ends with "cancelled".
func TestCancelRoutes(t *testing.T) {
	for _, route := range []string{"progress", "cancelRequest", "kimi.cancel"} {
		t.Run(route, func(t *testing.T) {
			js := newJobSession(t, nil, modeltest.Rule{Match: `action="fix"`, Content: strings.Repeat("slow ", 400), Chunks: 400, IntervalMS: 50})
			uri := js.file("a.go", "package a\n\nfunc f() {}\n")
			ctx := ctxT(t)
			id := json.RawMessage(`4242`)
			ch, err := js.ed.Send(id, "workspace/executeCommand", map[string]any{
				"command": "kimi.fix", "arguments": []any{map[string]any{"uri": uri, "range": rng(2, 0, 2, 5)}}, "workDoneToken": 77,
			})
			if err != nil {
				t.Fatal(err)
			}
			reply, err := lsptest.Await(ctx, ch)
			if err != nil || reply.Error != nil {
				t.Fatalf("executeCommand: %v %+v", err, reply)
			}
			var job struct {
				Job string `json:"job"`
			}
			json.Unmarshal(reply.Result, &job)
			// The stream has started when the first report arrives.
			if _, err := js.ed.WaitMethod(ctx, "$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"report"`) }); err != nil {
				t.Fatal(err)
			}
			switch route {
			case "progress":
				js.ed.Notify("window/workDoneProgress/cancel", map[string]any{"token": 77})
			case "cancelRequest":
				js.ed.Notify("$/cancelRequest", map[string]any{"id": id})
			case "kimi.cancel":
				if err := js.ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": "kimi.cancel", "arguments": []any{map[string]any{"job": job.Job}}}, nil); err != nil {
					t.Fatal(err)
				}
			}
			if end := js.progressEnd(`77`); end != "cancelled" {
				t.Errorf("end message %q, want cancelled", end)
			}
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				if r := js.srv.Requests(); len(r) == 1 && r[0].HungUp {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
			if r := js.srv.Requests(); len(r) != 1 || !r[0].HungUp {
				t.Errorf("provider did not see the hang-up (%d requests)", len(r))
			}
			for _, m := range js.ed.Messages() {
				if m.Method == "workspace/applyEdit" {
					t.Errorf("an edit was applied after cancel")
				}
			}
		})
	}
}

// TestFixAppliesVersionedEdit: a diff from the model becomes one versioned
// workspace/applyEdit that turns the buffer into the expected text.
func TestFixAppliesVersionedEdit(t *testing.T) {
	diff := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -3,3 +3,3 @@\n func Sub(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n```\nSub now subtracts."
	js := newJobSession(t, nil, modeltest.Rule{Match: `action="fix"`, Content: diff})
	before := "package calc\n\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"
	uri := js.file("calc.go", before)
	var got string
	js.ed.Handle("workspace/applyEdit", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		got = applyWorkspaceEdit(t, p, map[string]string{uri: before}, map[string]int32{uri: 1})[uri]
		return map[string]any{"applied": true}, nil
	})
	js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1), "diagnostics": []any{
		map[string]any{"range": rng(3, 1, 3, 13), "severity": 1, "message": "Sub adds"},
	}}, "fix")
	end := js.progressEnd(`"fix"`)
	if !strings.HasPrefix(end, "1 edit applied to 1 file") {
		t.Errorf("end message %q", end)
	}
	if want := strings.Replace(before, "a + b", "a - b", 1); got != want {
		t.Errorf("buffer after the edit:\n%s\nwant:\n%s", got, want)
	}
	body := string(js.srv.Requests()[0].Body)
	if !strings.Contains(body, "Sub adds") {
		t.Errorf("the diagnostic did not reach the prompt")
	}
}

// TestStaleBuffer: typing elsewhere while the model thinks is rebased over;
// typing in the edited lines refuses the edit.
func TestStaleBuffer(t *testing.T) {
	diff := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -5,3 +5,3 @@\n func Sub(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n```"
	before := "package calc\n\n// Sub subtracts.\n\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"
	for _, tc := range []struct {
		name     string
		change   map[string]any // didChange while the model answers
		after    string         // buffer text after the user's change
		want     string         // "" when the edit must be refused
		endStart string
	}{
		{"unrelated", map[string]any{"range": rng(0, 0, 0, 0), "text": "// header\n"},
			"// header\n" + before, "// header\n" + strings.Replace(before, "a + b", "a - b", 1), "1 edit applied"},
		{"overlapping", map[string]any{"range": rng(5, 8, 5, 13), "text": "b + a"},
			strings.Replace(before, "a + b", "b + a", 1), "", "not applied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js := newJobSession(t, nil, modeltest.Rule{Match: `action="fix"`, Content: diff, DelayMS: 300})
			uri := js.file("calc.go", before)
			var got string
			applied := false
			js.ed.Handle("workspace/applyEdit", func(p json.RawMessage) (any, *lsptest.ResponseError) {
				applied = true
				got = applyWorkspaceEdit(t, p, map[string]string{uri: tc.after}, map[string]int32{uri: 2})[uri]
				return map[string]any{"applied": true}, nil
			})
			js.run("kimi.fix", map[string]any{"uri": uri, "range": rng(4, 0, 6, 1)}, "s")
			js.ed.Notify("textDocument/didChange", map[string]any{
				"textDocument": map[string]any{"uri": uri, "version": 2}, "contentChanges": []any{tc.change},
			})
			if got := js.text(uri, 2); got != tc.after {
				t.Fatalf("buffer after typing: %q", got)
			}
			end := js.progressEnd(`"s"`)
			if !strings.HasPrefix(end, tc.endStart) {
				t.Errorf("end message %q, want %s…", end, tc.endStart)
			}
			if tc.want == "" {
				if applied {
					t.Errorf("an edit was sent for a buffer changed where it applies")
				}
				return
			}
			if got != tc.want {
				t.Errorf("after rebase:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

// applyEditRequest is workspace/applyEdit's params as the tests read them.
type applyEditRequest struct {
	Edit struct {
		DocumentChanges []docEditJSON `json:"documentChanges"`
	} `json:"edit"`
}

type docEditJSON struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version *int32 `json:"version"`
	} `json:"textDocument"`
	Edits []struct {
		Range   rangeJSON `json:"range"`
		NewText string    `json:"newText"`
	} `json:"edits"`
}

// apply returns text with the edits of dc applied, as an editor applies
// them (UTF-16 positions, all relative to the text before the edit).
func (dc docEditJSON) apply(text string) string {
	u, _ := workspace.ParseURI(dc.TextDocument.URI)
	snap := workspace.NewSnapshot(u, "", 0, text)
	// Apply from the end so earlier offsets stay valid.
	for i := len(dc.Edits) - 1; i >= 0; i-- {
		e := dc.Edits[i]
		s := snap.PositionOffset(workspace.Position{Line: e.Range.Start.Line, Character: e.Range.Start.Character}, workspace.UTF16)
		en := snap.PositionOffset(workspace.Position{Line: e.Range.End.Line, Character: e.Range.End.Character}, workspace.UTF16)
		text = text[:s] + e.NewText + text[en:]
	}
	return text
}

// applyWorkspaceEdit applies the WorkspaceEdit of an applyEdit request to
// texts as an editor would, checking versions, and returns the new texts.
func applyWorkspaceEdit(t *testing.T, raw json.RawMessage, texts map[string]string, versions map[string]int32) map[string]string {
	t.Helper()
	var p applyEditRequest
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("applyEdit params: %v", err)
	}
	out := map[string]string{}
	for k, v := range texts {
		out[k] = v
	}
	for _, dc := range p.Edit.DocumentChanges {
		uri := dc.TextDocument.URI
		if v, ok := versions[uri]; ok && (dc.TextDocument.Version == nil || *dc.TextDocument.Version != v) {
			t.Errorf("edit of %s for version %v, want %d", uri, dc.TextDocument.Version, v)
		}
		out[uri] = dc.apply(out[uri])
	}
	return out
}

type rangeJSON struct {
	Start struct{ Line, Character uint32 } `json:"start"`
	End   struct{ Line, Character uint32 } `json:"end"`
}

// TestSecretsNeverReachProvider: an open .env buffer and secret files on
// disk never reach the provider, and no action is offered on them.
func TestSecretsNeverReachProvider(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "Explain", Content: "ok"})
	const secret = "sk-live-THIS-MUST-NOT-LEAK-1234567890"
	os.WriteFile(filepath.Join(js.dir, "id_rsa"), []byte("-----BEGIN KEY-----\n"+secret+"\n"), 0o600)
	env := js.file(".env", "API_TOKEN="+secret+"\n")
	uri := js.file("main.go", "package main\n\n// reads API_TOKEN from .env\nfunc main() {}\n")
	var actions []codeAction
	if err := js.ed.Call(ctxT(t), "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": env}, "range": rng(0, 0, 0, 5), "context": map[string]any{"diagnostics": []any{}},
	}, &actions); err != nil {
		t.Fatal(err)
	}
	if len(actions) != 0 {
		t.Errorf("code actions offered on .env: %v", actions)
	}
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.explain", "arguments": []any{map[string]any{"uri": env, "range": rng(0, 0, 0, 5)}},
	}, nil); err == nil {
		t.Errorf("explain of .env was accepted")
	}
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(3, 0, 3, 14)}, "x")
	js.progressEnd(`"x"`)
	reqs := js.srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no request reached the provider")
	}
	for _, r := range reqs {
		if strings.Contains(string(r.Body), "THIS-MUST-NOT-LEAK") {
			t.Errorf("secret bytes reached the provider")
		}
		if !strings.Contains(string(r.Body), "reads API_TOKEN") {
			t.Errorf("the active file is missing from the prompt")
		}
	}
}

// TestNewJobSupersedesOld: a second job on the same range cancels the
// first.
func TestNewJobSupersedesOld(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "Explain", Content: strings.Repeat("word ", 200), Chunks: 200, IntervalMS: 30})
	uri := js.file("a.go", "package a\n")
	args := map[string]any{"uri": uri, "range": rng(0, 0, 0, 9)}
	js.run("kimi.explain", args, "first")
	js.ed.WaitMethod(ctxT(t), "$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"report"`) })
	js.run("kimi.explain", args, "second")
	if end := js.progressEnd(`"first"`); !strings.Contains(end, "superseded") {
		t.Errorf("first job ended with %q, want superseded", end)
	}
	js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.cancel", "arguments": []any{map[string]any{}}}, nil)
	js.progressEnd(`"second"`)
}

// TestStats: kimi.stats reports the provider's accounting.
func TestStats(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{Match: "Explain", Content: "ok"})
	uri := js.file("a.go", "package a\n\nfunc A() {}\n")
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(2, 0, 2, 5)}, "1")
	js.progressEnd(`"1"`)
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(0, 0, 0, 5)}, "2")
	js.progressEnd(`"2"`)
	var st struct {
		Requests     int     `json:"requests"`
		PromptTokens int     `json:"promptTokens"`
		CachedTokens int     `json:"cachedTokens"`
		HitRatio     float64 `json:"hitRatio"`
	}
	if err := js.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
		t.Fatal(err)
	}
	var sum, cached int
	for _, r := range js.srv.Requests() {
		sum += r.Usage.PromptTokens
		cached += r.Usage.CachedTokens
	}
	if st.Requests != 2 || st.PromptTokens != sum || st.CachedTokens != cached {
		t.Errorf("stats %+v, want 2 requests, %d prompt and %d cached tokens as the provider counted", st, sum, cached)
	}
	if cached == 0 {
		t.Errorf("the second request got no cache hit: the prefix was not stable")
	}
}

func TestMain(m *testing.M) {
	// Keep explanations, statistics (assist.DefaultStatsFile) and the user
	// config out of the real home, and out of the shared temporary
	// directory too: HOME and the XDG directories of the whole test binary
	// point into a directory of its own, removed at the end.
	home, err := os.MkdirTemp("", "kimi-lsp-lsp-test")
	if err != nil {
		panic(err)
	}
	for _, kv := range [][2]string{
		{"HOME", home},
		{"XDG_CONFIG_HOME", filepath.Join(home, ".config")},
		{"XDG_CACHE_HOME", filepath.Join(home, ".cache")},
		{"XDG_STATE_HOME", filepath.Join(home, ".local", "state")},
		{"XDG_DATA_HOME", filepath.Join(home, ".local", "share")},
	} {
		os.Setenv(kv[0], kv[1])
	}
	code := m.Run()
	os.RemoveAll(home)
	os.Exit(code)
}

var _ = context.Background

// TestToolEditsAcrossFiles: the model creates a file and edits a file that
// is not open, with edit tools; the editor gets one applyEdit with a
// CreateFile and version-null edits, and nothing is written behind its back.
func TestToolEditsAcrossFiles(t *testing.T) {
	js := newJobSession(t, nil,
		modeltest.Rule{Match: `action="tests"`, Times: 1, Reasoning: "Add a test and a helper.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "create_file", Arguments: `{"path":"calc_test.go","content":"package calc\n\nimport \"testing\"\n\nfunc TestSub(t *testing.T) {}\n"}`},
			{Name: "replace_text", Arguments: `{"path":"util/util.go","old_text":"const Version = 1","new_text":"const Version = 2"}`},
		}},
		modeltest.Rule{LastRole: "tool", Content: "Added a test."})
	os.MkdirAll(filepath.Join(js.dir, "util"), 0o755)
	utilText := "package util\n\nconst Version = 1\n"
	os.WriteFile(filepath.Join(js.dir, "util", "util.go"), []byte(utilText), 0o644)
	uri := js.file("calc.go", "package calc\n\nfunc Sub(a, b int) int { return a - b }\n")
	var params json.RawMessage
	js.ed.Handle("workspace/applyEdit", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		params = p
		return map[string]any{"applied": true}, nil
	})
	js.run("kimi.tests", map[string]any{"uri": uri, "range": rng(2, 0, 2, 10)}, "t")
	end := js.progressEnd(`"t"`)
	if !strings.Contains(end, "applied to 2 files") {
		t.Fatalf("end message %q", end)
	}
	var p struct {
		Label string `json:"label"`
		Edit  struct {
			DocumentChanges []map[string]any `json:"documentChanges"`
		} `json:"edit"`
	}
	json.Unmarshal(params, &p)
	if p.Label != "Kimi: Write tests" {
		t.Errorf("label %q", p.Label)
	}
	testURI := string(workspace.FileURI(filepath.Join(js.dir, "calc_test.go")))
	utilURI := string(workspace.FileURI(filepath.Join(js.dir, "util", "util.go")))
	var created, createdText, utilEdited bool
	for _, dc := range p.Edit.DocumentChanges {
		if dc["kind"] == "create" && dc["uri"] == testURI {
			created = true
		}
		td, _ := dc["textDocument"].(map[string]any)
		if td == nil {
			continue
		}
		if td["version"] != nil {
			t.Errorf("edit of a file not open carries version %v", td["version"])
		}
		edits, _ := json.Marshal(dc["edits"])
		switch td["uri"] {
		case testURI:
			createdText = strings.Contains(string(edits), "func TestSub")
		case utilURI:
			utilEdited = strings.Contains(string(edits), "const Version = 2")
		}
	}
	if !created || !createdText || !utilEdited {
		t.Errorf("documentChanges %v: create %v, its text %v, util edit %v", p.Edit.DocumentChanges, created, createdText, utilEdited)
	}
	if b, _ := os.ReadFile(filepath.Join(js.dir, "util", "util.go")); string(b) != utilText {
		t.Errorf("util.go was written behind the editor's back")
	}
	if _, err := os.Stat(filepath.Join(js.dir, "calc_test.go")); err == nil {
		t.Errorf("calc_test.go was created behind the editor's back")
	}
}

// TestRewriteAsksForInstruction: without an instruction or a kimi: comment,
// Rewrite asks with window/showMessageRequest and uses the answer; with a
// kimi: comment, it asks nothing.
func TestRewriteAsksForInstruction(t *testing.T) {
	js := newJobSession(t, nil, modeltest.Rule{MatchPrompt: "calc.go", Content: "No change needed."})
	asked := make(chan []string, 2)
	js.ed.Handle("window/showMessageRequest", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		var req struct {
			Actions []struct {
				Title string `json:"title"`
			} `json:"actions"`
		}
		json.Unmarshal(p, &req)
		var titles []string
		for _, a := range req.Actions {
			titles = append(titles, a.Title)
		}
		asked <- titles
		return map[string]any{"title": "Simplify it."}, nil
	})
	uri := js.file("calc.go", "package calc\n\n// kimi: use a switch\nfunc F() {}\n")
	js.run("kimi.rewrite", map[string]any{"uri": uri, "range": rng(3, 0, 3, 11)}, "r1")
	select {
	case titles := <-asked:
		if len(titles) < 2 {
			t.Errorf("choices %q", titles)
		}
	case <-ctxT(t).Done():
		t.Fatal("Rewrite did not ask for an instruction")
	}
	js.progressEnd(`"r1"`)
	if body := string(js.srv.Requests()[0].Body); !strings.Contains(body, "The user asks: Simplify it.") {
		t.Errorf("the chosen instruction did not reach the prompt")
	}
	js.run("kimi.rewrite", map[string]any{"uri": uri, "range": rng(2, 0, 3, 11)}, "r2")
	js.progressEnd(`"r2"`)
	if body := string(js.srv.Requests()[1].Body); !strings.Contains(body, "The user asks: use a switch") {
		t.Errorf("the kimi: comment did not become the instruction")
	}
	select {
	case <-asked:
		t.Errorf("asked although the selection has a kimi: comment")
	default:
	}
}

// helixParams are initialize params as Helix 25.07.1 sends them where it
// matters here: clientInfo "helix", progress declared, showDocument not
// (Helix answers the request since 24.03 but declares it only after
// 25.07).
func helixParams(t *testing.T) map[string]any {
	params := lsptest.DefaultInitializeParams(string(workspace.FileURI(t.TempDir())))
	params["clientInfo"] = map[string]any{"name": "helix", "version": "25.07.1 (a349ad8b)"}
	params["capabilities"].(map[string]any)["window"] = map[string]any{"workDoneProgress": true}
	return params
}

// TestHelixExplanationBeside: Helix, which does not declare showDocument,
// gets the explanation opened with window/showDocument and takeFocus
// false — in Helix a vertical split beside the code, where takeFocus true
// would replace the code view and a showMessage of the whole text would
// cover it — and no showMessage holding the text. An older Helix that
// answers the request with an error gets the text by showMessage.
//
// Eglot gets no takeFocus at all: eglot 1.17 reads a false one as true
// (pop-to-buffer over the code instead of display-buffer beside it).
func TestHelixExplanationBeside(t *testing.T) {
	eglot := func(t *testing.T) map[string]any {
		params := lsptest.DefaultInitializeParams(string(workspace.FileURI(t.TempDir())))
		params["clientInfo"] = map[string]any{"name": "Eglot", "version": "1.17.30"}
		return params
	}
	for _, c := range []struct {
		name    string
		params  func(*testing.T) map[string]any
		answers bool
		focus   string // the takeFocus sent: "false", or "" for none
	}{
		{"helix", helixParams, true, "false"},
		{"older helix", helixParams, false, "false"},
		{"eglot", eglot, true, ""},
	} {
		answers := c.answers
		t.Run(c.name, func(t *testing.T) {
			js := newJobSession(t, c.params(t), modeltest.Rule{Match: "Explain", Content: explainText, Chunks: 6, IntervalMS: 5})
			var mu sync.Mutex
			var shown []string
			js.ed.Handle("window/showDocument", func(p json.RawMessage) (any, *lsptest.ResponseError) {
				mu.Lock()
				shown = append(shown, string(p))
				mu.Unlock()
				if !answers {
					return nil, &lsptest.ResponseError{Code: -32601, Message: "method not found"}
				}
				return map[string]any{"success": true}, nil
			})
			uri := js.file("add.go", "package add\n")
			js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(0, 0, 0, 5)}, nil)
			js.waitNoJobs()
			mu.Lock()
			defer mu.Unlock()
			if len(shown) != 1 {
				t.Fatalf("showDocument requests %v, want one", shown)
			}
			var p struct {
				URI       string          `json:"uri"`
				TakeFocus json.RawMessage `json:"takeFocus"`
			}
			if err := json.Unmarshal([]byte(shown[0]), &p); err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(p.URI, ".md") || string(p.TakeFocus) != c.focus {
				t.Errorf("showDocument %s, want a .md file with takeFocus %q", shown[0], c.focus)
			}
			inMessage := false
			for _, m := range js.ed.Messages() {
				if m.Method == "window/showMessage" && strings.Contains(string(m.Params), "overflow wraps around") {
					inMessage = true
				}
			}
			if inMessage != !answers {
				t.Errorf("explanation in a showMessage: %v, want %v", inMessage, !answers)
			}
		})
	}
}
