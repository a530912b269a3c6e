package assist_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// recorder is a Sink that keeps everything.
type recorder struct {
	mu                        sync.Mutex
	reasoning, content, stats []string
}

func (r *recorder) Reasoning(s string) {
	r.mu.Lock()
	r.reasoning = append(r.reasoning, s)
	r.mu.Unlock()
}
func (r *recorder) Content(s string) { r.mu.Lock(); r.content = append(r.content, s); r.mu.Unlock() }
func (r *recorder) Status(s string)  { r.mu.Lock(); r.stats = append(r.stats, s); r.mu.Unlock() }
func (r *recorder) Round(note string) {
	if note != "" {
		r.Status("round: " + note)
	}
}

// fixture is a workspace directory with one Go file, a stand-in provider
// and an engine pointed at it.
type fixture struct {
	t       *testing.T
	dir     string
	srv     *modeltest.Server
	engine  *assist.Engine
	folders *workspace.Folders
	cfg     config.Config
}

func newFixture(t *testing.T, files map[string]string, rules ...modeltest.Rule) *fixture {
	t.Helper()
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: rules}})
	t.Cleanup(srv.Close)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for name, text := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, _ := config.Default().WithEnv(func(k string) string { return env[k] })
	folders := workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{})
	t.Cleanup(func() { folders.Close() })
	if err := folders.Add(workspace.FileURI(dir), "ws"); err != nil {
		t.Fatal(err)
	}
	folders.Ready(context.Background())
	engine, err := assist.NewEngine(assist.Options{Config: cfg, ExplanationDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dir: dir, srv: srv, engine: engine, folders: folders, cfg: cfg}
}

// task builds a task on file name with the selection [start, end) given by
// two substrings' positions (start of from, end of to).
func (f *fixture) task(action, name, from, to string) assist.Task {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		f.t.Fatal(err)
	}
	text := string(b)
	a, ok := f.cfg.ActionFor(action)
	if !ok {
		f.t.Fatalf("no action %s", action)
	}
	s := strings.Index(text, from)
	e := strings.Index(text, to) + len(to)
	return assist.Task{
		Action:    a,
		Project:   cache.Project{Name: "ws"},
		Active:    cache.Document{Path: name, Language: "go", Text: text},
		Selection: cache.Selection{Start: s, End: e},
		Files:     assist.NewFiles(f.folders, nil),
	}
}

const calc = "package calc\n\n// Sub returns a minus b.\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"

const fixDiff = "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -4,3 +4,3 @@\n func Sub(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n```\nSub now subtracts."

func TestExplainStreamsAndIsKept(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc},
		modeltest.Rule{Match: `action="explain"`, Reasoning: "Looking at Sub.", Content: "Sub adds instead of subtracting.", Chunks: 6, IntervalMS: 5})
	var r recorder
	out, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &r)
	if err != nil {
		t.Fatal(err)
	}
	if out.Text != "Sub adds instead of subtracting." || strings.Join(r.content, "") != out.Text {
		t.Errorf("text %q, streamed %q", out.Text, strings.Join(r.content, ""))
	}
	if len(r.content) < 3 || len(r.reasoning) == 0 {
		t.Errorf("content in %d pieces, reasoning in %d: want the stream, not one block", len(r.content), len(r.reasoning))
	}
	b, err := os.ReadFile(out.File)
	if err != nil || string(b) != out.Text {
		t.Errorf("explanation file %s: %q, %v; want the answer alone (no comment before it)", out.File, b, err)
	}
	// The editor names its tab after the file: by file and range
	// (issue 21 item 19: it was "calc-16c375c11b3a.md").
	if got := filepath.Base(out.File); got != "calc.go L4-6 — explanation.md" {
		t.Errorf("explanation file named %q, want %q", got, "calc.go L4-6 — explanation.md")
	}
	if out.Usage.PromptTokens == 0 || out.Model != "kimi-k3.1-pro-highspeed" {
		t.Errorf("usage %+v model %s", out.Usage, out.Model)
	}
	// Again, unchanged: no model call.
	out2, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &recorder{})
	if err != nil || !out2.Cached || out2.Text != out.Text {
		t.Errorf("second explain: %+v, %v; want the kept answer", out2, err)
	}
	if n := len(f.srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	// A changed file is explained anew.
	tk := f.task(config.ActionExplain, "calc.go", "func Sub", "}")
	tk.Active.Text += "\n// more\n"
	if out3, err := f.engine.Run(context.Background(), tk, &recorder{}); err != nil || out3.Cached {
		t.Errorf("explain of changed text: cached=%v err=%v", out3 != nil && out3.Cached, err)
	}
}

func TestFixFromDiff(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc}, modeltest.Rule{Match: `action="fix"`, Content: fixDiff})
	out, err := f.engine.Run(context.Background(), f.task(config.ActionFix, "calc.go", "func Sub", "}"), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Changes) != 1 || out.Changes[0].After != strings.Replace(calc, "a + b", "a - b", 1) {
		t.Fatalf("changes %+v", out.Changes)
	}
	if out.Changes[0].Path != filepath.Join(f.dir, "calc.go") {
		t.Errorf("path %s", out.Changes[0].Path)
	}
	// The file on disk is untouched: edits go through the editor.
	if b, _ := os.ReadFile(filepath.Join(f.dir, "calc.go")); string(b) != calc {
		t.Errorf("the engine wrote the file")
	}
}

// TestCorrectionRound: a diff that does not apply goes back to the model
// once with the reason; the corrected diff applies.
func TestCorrectionRound(t *testing.T) {
	bad := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -4,3 +4,3 @@\n func Sub(x, y int) int {\n-\treturn x + y\n+\treturn x - y\n }\n```"
	f := newFixture(t, map[string]string{"calc.go": calc},
		modeltest.Rule{Match: `action="fix"`, Content: bad},
		modeltest.Rule{LastRole: "user", MatchPrompt: "Sub(x, y int)", Content: fixDiff})
	out, err := f.engine.Run(context.Background(), f.task(config.ActionFix, "calc.go", "func Sub", "}"), &recorder{})
	if err != nil {
		t.Fatalf("after the correction: %v", err)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 2 || out.Rounds != 2 {
		t.Fatalf("%d requests, %d rounds; want 2", len(reqs), out.Rounds)
	}
	last := reqs[1].Parsed.Messages[len(reqs[1].Parsed.Messages)-1]
	if !strings.Contains(last.Text(), "calc.go") {
		t.Errorf("the failure sent back does not name the file: %q", last.Text())
	}
	if len(out.Changes) != 1 || !strings.Contains(out.Changes[0].After, "a - b") {
		t.Errorf("changes %+v", out.Changes)
	}
}

// TestRefusedTwice: when the correction does not apply either, nothing is
// changed and the error says why.
func TestRefusedTwice(t *testing.T) {
	bad := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -4,3 +4,3 @@\n func Nope() {\n-\tx()\n+\ty()\n }\n```"
	f := newFixture(t, map[string]string{"calc.go": calc}, modeltest.Rule{MatchPrompt: "calc.go", Content: bad})
	out, err := f.engine.Run(context.Background(), f.task(config.ActionFix, "calc.go", "func Sub", "}"), &recorder{})
	if err == nil || len(out.Changes) != 0 {
		t.Fatalf("err %v, changes %d; want a refusal and no change", err, len(out.Changes))
	}
	if !strings.Contains(err.Error(), "calc.go") {
		t.Errorf("error %q does not name the file", err)
	}
}

// TestToolCallsEdit: the model reads a file with read_file, then edits with
// replace_text; the assistant message goes back whole and every call is
// answered (the stand-in validates both).
func TestToolCallsEdit(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc, "util/util.go": "package util\n\nconst Name = \"old\"\n"},
		modeltest.Rule{Match: `action="rewrite"`, Times: 1, Reasoning: "Need util.go.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "read_file", Arguments: `{"path":"util/util.go","start_line":null,"end_line":null}`}}},
		modeltest.Rule{LastRole: "tool", MatchPrompt: `const Name = "old"`, Times: 1, Reasoning: "Now edit.", ToolCalls: []modeltest.ScriptToolCall{
			{Name: "replace_text", Arguments: `{"path":"util/util.go","old_text":"const Name = \"old\"","new_text":"const Name = \"new\""}`},
			{Name: "no_such_tool", Arguments: `{}`}}},
		modeltest.Rule{LastRole: "tool", Content: "Renamed."})
	tk := f.task(config.ActionRewrite, "calc.go", "func Sub", "}")
	tk.Instruction = "rename"
	out, err := f.engine.Run(context.Background(), tk, &recorder{})
	if err != nil {
		for _, r := range f.srv.Requests() {
			m := r.Parsed.Messages
			t.Logf("request %d rule %d: last %s %q", r.Seq, r.Rule, m[len(m)-1].Role, m[len(m)-1].Text())
		}
		t.Fatal(err)
	}
	if len(out.Changes) != 1 || out.Changes[0].After != "package util\n\nconst Name = \"new\"\n" {
		t.Fatalf("changes %+v", out.Changes)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		if r.Status != 200 {
			t.Errorf("request %d refused by the stand-in: %s", r.Seq, r.Error)
		}
	}
	var unknown bool
	for _, m := range reqs[2].Parsed.Messages {
		if m.Role == "tool" && strings.Contains(m.Text(), "no_such_tool") {
			unknown = true
		}
	}
	if !unknown {
		t.Errorf("the unknown tool got no error result")
	}
}

func TestNoAnswerWhenThinkingUsesBudget(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc}, modeltest.Rule{Match: `action="explain"`, Reasoning: "thinking…", FinishReason: "length"})
	_, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &recorder{})
	if err == nil || !strings.Contains(err.Error(), "maxCompletionTokens") {
		t.Errorf("err %v, want one naming maxCompletionTokens", err)
	}
}

func TestNoKey(t *testing.T) {
	// The default endpoint and no key: the engine fails before any request,
	// which a transport that counts (and refuses) them shows without a
	// clock.
	var requests atomic.Int32
	refuse := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		requests.Add(1)
		return nil, errors.New("no network in this test")
	})
	engine, err := assist.NewEngine(assist.Options{Config: config.Default(), ExplanationDir: t.TempDir(), HTTPClient: &http.Client{Transport: refuse}})
	if err != nil {
		t.Fatal(err)
	}
	a, _ := config.Default().ActionFor(config.ActionExplain)
	_, err = engine.Run(context.Background(), assist.Task{Action: a, Active: cache.Document{Path: "a.go", Text: "package a\n"}}, &recorder{})
	if !errors.Is(err, config.ErrNoAPIKey) || !strings.Contains(err.Error(), "KIMI_API_KEY") {
		t.Errorf("err %v, want ErrNoAPIKey naming KIMI_API_KEY", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("%d requests sent without a key; want none", n)
	}
}

// roundTripFunc is an http.RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestCancelStopsStream: cancelling the context returns at once and the
// provider sees the hang-up.
func TestCancelStopsStream(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc}, modeltest.Rule{Match: `action="explain"`, Content: strings.Repeat("x ", 500), Chunks: 500, IntervalMS: 20})
	ctx, cancel := context.WithCancel(context.Background())
	r := &recorder{}
	done := make(chan error, 1)
	go func() {
		_, err := f.engine.Run(ctx, f.task(config.ActionExplain, "calc.go", "func Sub", "}"), r)
		done <- err
	}()
	for {
		r.mu.Lock()
		n := len(r.content)
		r.mu.Unlock()
		if n > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		// A bound, not a speed check: that Run stopped the stream is
		// the provider's hung_up below.
		t.Fatal("Run did not return after cancel")
	}
	reqs, _ := f.srv.WaitRequests(context.Background(), 1)
	if !reqs[0].HungUp {
		t.Errorf("the provider did not see the hang-up")
	}
}

// TestSamePrefixAcrossActions: explain, fix and a user action send the same
// bytes up to the request block (the cache contract).
func TestSamePrefixAcrossActions(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc}, modeltest.Rule{MatchPrompt: "calc.go", Content: "OK"})
	for _, a := range []string{config.ActionExplain, config.ActionDocument, config.ActionTests} {
		f.engine.Run(context.Background(), f.task(a, "calc.go", "func Sub", "}"), &recorder{})
	}
	reqs := f.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	// Document and tests use the same model; their prompts differ only in
	// the last message.
	a, b := reqs[1].Parsed.Messages, reqs[2].Parsed.Messages
	if len(a) != len(b) {
		t.Fatalf("message counts differ: %d, %d", len(a), len(b))
	}
	for i := 0; i < len(a)-1; i++ {
		if a[i].Text() != b[i].Text() {
			t.Errorf("message %d differs between actions", i)
		}
	}
	if reqs[2].Usage.CachedTokens == 0 {
		t.Errorf("the second edit action got no cached tokens")
	}
}

func TestRewriteInstruction(t *testing.T) {
	for _, tc := range []struct {
		sel, want string
		ok        bool
	}{
		{"// kimi: use a map\nfor {}", "use a map", true},
		{"  # kimi:  make it async  \nx", "make it async", true},
		{"/* kimi: inline this */", "inline this", true},
		{"<!-- kimi: use flexbox -->", "use flexbox", true},
		{"-- kimi: join instead", "join instead", true},
		{"x := 1 // kimi: not at line start", "", false},
		{"// kimi:", "", false},
		{"// kimi is great", "", false},
	} {
		got, ok := assist.RewriteInstruction(tc.sel)
		if got != tc.want || ok != tc.ok {
			t.Errorf("RewriteInstruction(%q) = %q, %v; want %q, %v", tc.sel, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSystemIsConstant guards the cache contract: the system text has no
// per-request parts.
func TestSystemIsConstant(t *testing.T) {
	for _, bad := range []string{time.Now().Format("2006"), os.TempDir(), "{{"} {
		if strings.Contains(assist.System, bad) {
			t.Errorf("system text contains %q", bad)
		}
	}
}

// TestFixDiffNamesDocumentFromAnotherRoot: a reply diff whose header names
// the active document by a path relative to another root, which no
// workspace file matches but by its name, edits the action's own document
// (issue 21.23).
func TestFixDiffNamesDocumentFromAnotherRoot(t *testing.T) {
	diff := strings.ReplaceAll(fixDiff, "calc.go", "myrepo/lib/calc.go")
	f := newFixture(t, map[string]string{"internal/calc/calc.go": calc, "other/calc.go": calc}, modeltest.Rule{Match: `action="fix"`, Content: diff})
	out, err := f.engine.Run(context.Background(), f.task(config.ActionFix, "internal/calc/calc.go", "func Sub", "}"), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Changes) != 1 || out.Changes[0].Path != filepath.Join(f.dir, "internal", "calc", "calc.go") ||
		out.Changes[0].After != strings.Replace(calc, "a + b", "a - b", 1) {
		t.Fatalf("changes %+v; want the edit of internal/calc/calc.go", out.Changes)
	}
}
