package acp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/lsp/acp"
)

// The agent's tests drive Serve over a pipe with the SDK's own client
// side, against the stand-in provider, in a real folder.

const calcGo = "package calc\n\n// Add returns a+b.\nfunc Add(a, b int) int {\n\treturn a - b\n}\n"

const utilGo = "package calc\n\n// Twice doubles n.\nfunc Twice(n int) int { return Add(n, n) }\n"

// fakeEditor is the ACP client: it keeps what it was sent and answers
// permission questions as told.
type fakeEditor struct {
	allow  bool
	always bool // answer "always" where it is offered

	mu       sync.Mutex
	updates  []sdk.SessionUpdate
	asked    []sdk.RequestPermissionRequest
	onUpdate func(sdk.SessionUpdate)
	ran      []string
	outputs  []sdk.TerminalOutputResponse
	buffers  map[string]string // path → text, the editor's unsaved buffers
	reads    []string
}

var _ sdk.Client = (*fakeEditor)(nil)

func (f *fakeEditor) SessionUpdate(_ context.Context, n sdk.SessionNotification) error {
	f.mu.Lock()
	f.updates = append(f.updates, n.Update)
	on := f.onUpdate
	f.mu.Unlock()
	if on != nil {
		on(n.Update)
	}
	return nil
}

func (f *fakeEditor) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	f.mu.Lock()
	f.asked = append(f.asked, p)
	f.mu.Unlock()
	id := sdk.PermissionOptionId("reject")
	if f.allow {
		id = "allow"
	}
	for _, o := range p.Options {
		if f.always && o.Kind == sdk.PermissionOptionKindAllowAlways {
			id = o.OptionId
		}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: id, Outcome: "selected"}}}, nil
}

// The fake editor's buffers (when it offers fs/*): a read gets the
// buffer, unsaved edits included; a write changes the buffer, not the
// disk.
func (f *fakeEditor) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	text, ok := f.buffers[p.Path]
	if !ok {
		b, err := os.ReadFile(p.Path)
		if err != nil {
			return sdk.ReadTextFileResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
		}
		text = string(b)
	}
	f.reads = append(f.reads, p.Path)
	return sdk.ReadTextFileResponse{Content: text}, nil
}
func (f *fakeEditor) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buffers[p.Path] = p.Content
	return sdk.WriteTextFileResponse{}, nil
}

// The fake editor's terminals run the command as an editor does, with
// os/exec, and keep its output; ran lists the command lines run.
func (f *fakeEditor) CreateTerminal(_ context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	cmd := exec.Command(p.Command, p.Args...)
	if p.Cwd != nil {
		cmd.Dir = *p.Cwd
	}
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		code = 1
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran = append(f.ran, strings.Join(append([]string{p.Command}, p.Args...), " ")+" in "+cmd.Dir)
	id := fmt.Sprintf("term%d", len(f.ran))
	f.outputs = append(f.outputs, sdk.TerminalOutputResponse{Output: string(out), ExitStatus: &sdk.TerminalExitStatus{ExitCode: &code}})
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}
func (f *fakeEditor) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, nil
}
func (f *fakeEditor) TerminalOutput(_ context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int
	fmt.Sscanf(p.TerminalId, "term%d", &n)
	return f.outputs[n-1], nil
}
func (f *fakeEditor) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, nil
}
func (f *fakeEditor) WaitForTerminalExit(_ context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	r, err := f.TerminalOutput(context.Background(), sdk.TerminalOutputRequest{TerminalId: p.TerminalId})
	return sdk.WaitForTerminalExitResponse{ExitCode: r.ExitStatus.ExitCode}, err
}

// toolCalls returns the tool calls the editor was told of, by id, each
// with its last status and every content text.
func (f *fakeEditor) toolCalls() map[string]*toolSeen {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]*toolSeen{}
	for _, u := range f.updates {
		switch {
		case u.ToolCall != nil:
			out[string(u.ToolCall.ToolCallId)] = &toolSeen{title: u.ToolCall.Title, kind: u.ToolCall.Kind, status: u.ToolCall.Status, locations: u.ToolCall.Locations}
		case u.ToolCallUpdate != nil:
			t := out[string(u.ToolCallUpdate.ToolCallId)]
			if t == nil {
				continue
			}
			if u.ToolCallUpdate.Status != nil {
				t.status = *u.ToolCallUpdate.Status
			}
			for _, c := range u.ToolCallUpdate.Content {
				if c.Content != nil && c.Content.Content.Text != nil {
					t.text += c.Content.Content.Text.Text
				}
			}
		}
	}
	return out
}

type toolSeen struct {
	title     string
	kind      sdk.ToolKind
	status    sdk.ToolCallStatus
	locations []sdk.ToolCallLocation
	text      string
}

// said returns the agent's message chunks and thought chunks, joined.
func (f *fakeEditor) said() (message, thought string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, u := range f.updates {
		if c := u.AgentMessageChunk; c != nil && c.Content.Text != nil {
			message += c.Content.Text.Text
		}
		if c := u.AgentThoughtChunk; c != nil && c.Content.Text != nil {
			thought += c.Content.Text.Text
		}
	}
	return message, thought
}

// agentFixture is a running agent, a client connected to it and the
// folder of its session.
type agentFixture struct {
	t      testing.TB
	dir    string
	srv    *modeltest.Server
	ed     *fakeEditor
	conn   *sdk.ClientSideConnection
	ledger *provider.Ledger
	sid    sdk.SessionId
}

type fixtureOpts struct {
	verify      bool
	onNewErrors string
	// files are added to the folder.
	files map[string]string
	// terminal: the client offers terminals; fs: fs/read_text_file and
	// fs/write_text_file.
	terminal, fs bool
	// confirmAbove is budget.confirmAbove (0: the default).
	confirmAbove float64
}

func newAgent(t testing.TB, o fixtureOpts, rules ...modeltest.Rule) *agentFixture {
	t.Helper()
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: rules}})
	t.Cleanup(srv.Close)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	files := map[string]string{"go.mod": "module example.com/calc\n\ngo 1.22\n", "calc.go": calcGo, "util.go": utilGo, ".env": "TOKEN=secret\n"}
	for name, text := range o.files {
		files[name] = text
	}
	for name, text := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, _ := config.Default().WithEnv(func(k string) string { return env[k] })
	cfg.Verify.Enable = config.VerifyOff
	if o.verify {
		cfg.Verify.Enable, cfg.Verify.OnNewErrors = config.VerifyAuto, o.onNewErrors
	}
	if o.confirmAbove > 0 {
		cfg.Budget.ConfirmAbove = o.confirmAbove
	}
	log := slog.New(slog.DiscardHandler)
	ledger := provider.OpenLedger(t.TempDir(), cfg.Budget, log) // the request record in a state directory of the test
	t.Cleanup(func() { ledger.Close() })
	toAgentR, toAgentW := io.Pipe()
	toClientR, toClientW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		acp.Serve(ctx, toAgentR, toClientW, acp.Options{Ledger: ledger, Logger: log, Version: "test", ExplanationDir: t.TempDir(),
			VerifyEnv: []string{"TMPDIR=" + t.TempDir(), "XDG_CACHE_HOME=" + t.TempDir(), "GOTOOLCHAIN=local", "GOFLAGS=-modcacherw", "GOTELEMETRY=off"},
			Config:    func(string) (config.Config, []error) { return cfg, nil }})
	}()
	t.Cleanup(func() {
		cancel()
		toAgentW.Close()
		<-done
		toClientW.Close()
	})
	ed := &fakeEditor{allow: true, buffers: map[string]string{}}
	// SetLogger races with the goroutines NewClientSideConnection starts:
	// their input is held back until it is set, as Serve does (D89).
	open := make(chan struct{})
	conn := sdk.NewClientSideConnection(ed, toAgentW, gated{toClientR, open})
	conn.SetLogger(log)
	close(open)
	f := &agentFixture{t: t, dir: dir, srv: srv, ed: ed, conn: conn, ledger: ledger}
	init, err := conn.Initialize(ctxT(t), sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Terminal: o.terminal, Fs: sdk.FileSystemCapabilities{ReadTextFile: o.fs, WriteTextFile: o.fs}}})
	if err != nil {
		t.Fatal(err)
	}
	if init.ProtocolVersion != 1 || !init.AgentCapabilities.PromptCapabilities.EmbeddedContext || init.AgentCapabilities.LoadSession {
		t.Fatalf("initialize answered %+v", init)
	}
	s, err := conn.NewSession(ctxT(t), sdk.NewSessionRequest{Cwd: dir, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	f.sid = s.SessionId
	return f
}

// gated is r, read from once open is closed.
type gated struct {
	r    io.Reader
	open chan struct{}
}

func (g gated) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (f *agentFixture) prompt(text string) sdk.PromptResponse {
	f.t.Helper()
	resp, err := f.conn.Prompt(ctxT(f.t), sdk.PromptRequest{SessionId: f.sid, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	if err != nil {
		f.t.Fatalf("prompt: %v", err)
	}
	return resp
}

func (f *agentFixture) file(name string) string {
	b, err := os.ReadFile(filepath.Join(f.dir, name))
	if err != nil {
		f.t.Fatal(err)
	}
	return string(b)
}

func call(id, name string, args any) modeltest.ScriptToolCall {
	b, _ := json.Marshal(args)
	return modeltest.ScriptToolCall{ID: id, Name: name, Arguments: string(b)}
}

// editRules: asked to fix Add, the model reads calc.go and util.go, then
// replaces the subtraction, then answers.
func editRules() []modeltest.Rule {
	return []modeltest.Rule{
		{LastRole: "tool", MatchPrompt: "replaced in calc.go", Content: "Add now adds.", Times: 1},
		{LastRole: "tool", MatchPrompt: "util.go: lines", Reasoning: "The sign is wrong.", Times: 1,
			ToolCalls: []modeltest.ScriptToolCall{call("c3", "replace_text", map[string]string{"path": "calc.go", "old_text": "return a - b", "new_text": "return a + b"})}},
		{Match: "fix Add", Reasoning: "Let me read the code.", Times: 1, ToolCalls: []modeltest.ScriptToolCall{
			call("c1", "read_file", map[string]any{"path": "calc.go", "start_line": nil, "end_line": nil}),
			call("c2", "read_file", map[string]any{"path": "util.go", "start_line": nil, "end_line": nil}),
		}},
	}
}

// TestTurnReadsTwoFilesAndEditsWithPermission: one turn reads two files,
// proposes an edit; the permission question carries its diff; allowed, the
// file changes once; every tool call was shown with its kind and file; the
// turn's usage comes back, and the record holds its requests as "agent".
func TestTurnReadsTwoFilesAndEditsWithPermission(t *testing.T) {
	f := newAgent(t, fixtureOpts{}, editRules()...)
	resp := f.prompt("please fix Add")
	if resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", resp.StopReason)
	}
	if got, want := f.file("calc.go"), strings.Replace(calcGo, "a - b", "a + b", 1); got != want {
		t.Errorf("calc.go is %q, want %q", got, want)
	}
	if len(f.ed.asked) != 1 {
		t.Fatalf("%d permission questions, want 1", len(f.ed.asked))
	}
	q := f.ed.asked[0]
	var diff *sdk.ToolCallContentDiff
	for _, c := range q.ToolCall.Content {
		if c.Diff != nil {
			diff = c.Diff
		}
	}
	if diff == nil || diff.Path != filepath.Join(f.dir, "calc.go") || diff.OldText == nil || *diff.OldText != calcGo || !strings.Contains(diff.NewText, "return a + b") {
		t.Fatalf("the permission question's diff is %+v", diff)
	}
	if q.ToolCall.Kind == nil || *q.ToolCall.Kind != sdk.ToolKindEdit {
		t.Errorf("the permission's tool call kind is %v", q.ToolCall.Kind)
	}
	calls := f.ed.toolCalls()
	for id, want := range map[string]sdk.ToolKind{"turn1-c1": sdk.ToolKindRead, "turn1-c2": sdk.ToolKindRead, "turn1-c3": sdk.ToolKindEdit, "turn1-edit": sdk.ToolKindEdit} {
		c := calls[id]
		if c == nil || c.kind != want || c.status != sdk.ToolCallStatusCompleted || len(c.locations) == 0 {
			t.Errorf("tool call %s: %+v, want kind %s, completed, with a location", id, c, want)
		}
	}
	if c := calls["turn1-c1"]; c == nil || c.locations[0].Path != filepath.Join(f.dir, "calc.go") {
		t.Errorf("the read's location is not calc.go: %+v", c)
	}
	msg, thought := f.ed.said()
	if !strings.Contains(msg, "Add now adds.") || !strings.Contains(thought, "The sign is wrong.") {
		t.Errorf("message %q, thought %q", msg, thought)
	}
	if resp.Usage == nil || resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Errorf("usage %+v", resp.Usage)
	}
	recs, err := f.ledger.Records(10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	for _, r := range recs {
		if r.Surface != spend.SurfaceAgent || r.Outcome != spend.OutcomeOK {
			t.Errorf("record %+v", r)
		}
	}
	if names := fileNames(recs[len(recs)-1].Files); !strings.Contains(names, "calc.go") || !strings.Contains(names, "util.go") {
		t.Errorf("the last request's record lists %q, want calc.go and util.go", names)
	}
}

// TestPermissionContentStartsWithTheDiff: the permission question's
// content opens with the diff, the unified diff and the verdict after it.
// CodeCompanion (v19.22.0) looks at the first block only: a text first and
// it asks without showing the change (D105).
func TestPermissionContentStartsWithTheDiff(t *testing.T) {
	f := newAgent(t, fixtureOpts{}, editRules()...)
	f.prompt("please fix Add")
	if len(f.ed.asked) != 1 {
		t.Fatalf("%d permission questions, want 1", len(f.ed.asked))
	}
	content := f.ed.asked[0].ToolCall.Content
	if len(content) < 2 || content[0].Diff == nil || content[0].Diff.Path != filepath.Join(f.dir, "calc.go") {
		t.Fatalf("the permission question's content is %+v, want the diff of calc.go first", content)
	}
	for i, c := range content[1:] {
		if c.Content == nil || c.Content.Content.Text == nil {
			t.Errorf("content[%d] is %+v, want text after the diff", i+1, c)
		}
	}
}

func fileNames(fs []spend.File) string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return strings.Join(out, ",")
}

// TestRejectedEditLeavesTheFile: rejected, the edit writes nothing, and
// the next turn tells the model so, after the first turn's messages kept
// byte for byte.
func TestRejectedEditLeavesTheFile(t *testing.T) {
	f := newAgent(t, fixtureOpts{}, append(editRules(), modeltest.Rule{Match: "again", Content: "Understood."})...)
	f.ed.allow = false
	if resp := f.prompt("please fix Add"); resp.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stop reason %q", resp.StopReason)
	}
	if got := f.file("calc.go"); got != calcGo {
		t.Errorf("calc.go changed: %q", got)
	}
	if c := f.ed.toolCalls()["turn1-edit"]; c == nil || c.status != sdk.ToolCallStatusFailed || !strings.Contains(c.text, "rejected") {
		t.Errorf("the edit's tool call is %+v", c)
	}
	f.prompt("try again")
	reqs := f.srv.Requests()
	last, prev := reqs[len(reqs)-1], reqs[len(reqs)-2]
	if !strings.Contains(string(last.Body), "the user rejected your edit of calc.go") {
		t.Errorf("the next turn does not say the edit was rejected")
	}
	if !sharesMessages(prev.Body, last.Body) {
		t.Errorf("the second turn's request does not start with the first turn's messages")
	}
}

// sharesMessages reports whether next's messages start with every
// message of prev, byte for byte.
func sharesMessages(prev, next []byte) bool {
	var a, b struct {
		Messages []json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(prev, &a) != nil || json.Unmarshal(next, &b) != nil || len(b.Messages) <= len(a.Messages) {
		return false
	}
	for i := range a.Messages {
		if string(a.Messages[i]) != string(b.Messages[i]) {
			return false
		}
	}
	return true
}

// TestAskModeRefusesEdits: in the ask mode the edit call is refused and
// nothing is asked or written.
func TestAskModeRefusesEdits(t *testing.T) {
	f := newAgent(t, fixtureOpts{},
		modeltest.Rule{LastRole: "tool", Content: "I would change the sign.", Times: 1},
		modeltest.Rule{Match: "fix Add", Reasoning: "Change the sign.", ToolCalls: []modeltest.ScriptToolCall{call("c1", "replace_text", map[string]string{"path": "calc.go", "old_text": "a - b", "new_text": "a + b"})}})
	if _, err := f.conn.SetSessionMode(ctxT(t), sdk.SetSessionModeRequest{SessionId: f.sid, ModeId: "ask"}); err != nil {
		t.Fatal(err)
	}
	f.prompt("fix Add")
	if got := f.file("calc.go"); got != calcGo || len(f.ed.asked) != 0 {
		t.Errorf("ask mode: calc.go %q, %d questions", got, len(f.ed.asked))
	}
	if c := f.ed.toolCalls()["turn1-c1"]; c == nil || c.status != sdk.ToolCallStatusFailed || !strings.Contains(c.text, "ask mode") {
		t.Errorf("the refused edit's tool call is %+v", c)
	}
	if _, err := f.conn.SetSessionMode(ctxT(t), sdk.SetSessionModeRequest{SessionId: f.sid, ModeId: "yolo"}); err == nil {
		t.Errorf("an unknown mode was accepted")
	}
}

// TestListAndSearchLeaveSecretsOut: list_files and search_files never show
// the secret .env.
func TestListAndSearchLeaveSecretsOut(t *testing.T) {
	f := newAgent(t, fixtureOpts{},
		modeltest.Rule{LastRole: "tool", Content: "Found it.", Times: 1},
		modeltest.Rule{Match: "where", Reasoning: "Look around.", ToolCalls: []modeltest.ScriptToolCall{
			call("l", "list_files", map[string]any{"directory": nil}),
			call("s", "search_files", map[string]any{"query": "TOKEN|Add", "regex": true, "directory": nil})}})
	f.prompt("where is Add?")
	calls := f.ed.toolCalls()
	list, search := calls["turn1-l"], calls["turn1-s"]
	if list == nil || !strings.Contains(list.text, "calc.go") || strings.Contains(list.text, ".env") {
		t.Errorf("list_files: %+v", list)
	}
	if search == nil || !strings.Contains(search.text, "calc.go:4:") || strings.Contains(search.text, "secret") {
		t.Errorf("search_files: %+v", search)
	}
	reqs := f.srv.Requests()
	if body := string(reqs[0].Body); strings.Contains(body, ".env") {
		t.Errorf("the pinned context names the secret file")
	}
}

// answerStarted returns a channel closed at the turn's first agent
// message chunk (the provider stream is then under way).
func (f *agentFixture) answerStarted() <-chan struct{} {
	started := make(chan struct{})
	var once sync.Once
	f.ed.mu.Lock()
	defer f.ed.mu.Unlock()
	f.ed.onUpdate = func(u sdk.SessionUpdate) {
		if u.AgentMessageChunk != nil {
			once.Do(func() { close(started) })
		}
	}
	return started
}

// TestCancelMidStream: session/cancel during the answer hangs up the
// provider stream and ends the turn "cancelled"; the next turn is a valid
// request that keeps the conversation.
func TestCancelMidStream(t *testing.T) {
	f := newAgent(t, fixtureOpts{},
		modeltest.Rule{Match: "slow", Content: strings.Repeat("word ", 400), Chunks: 400, IntervalMS: 20},
		modeltest.Rule{Match: "next", Content: "Fine."})
	started := f.answerStarted()
	go func() {
		<-started
		f.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: f.sid})
	}()
	if resp := f.prompt("a slow answer"); resp.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("stop reason %q, want cancelled", resp.StopReason)
	}
	reqs, err := f.srv.WaitRequests(ctxT(t), 1)
	if err != nil || len(reqs) == 0 || !reqs[0].HungUp {
		t.Fatalf("the provider stream was not hung up: %+v", reqs)
	}
	if resp := f.prompt("next"); resp.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("the turn after a cancel ended %q", resp.StopReason)
	}
	if all := f.srv.Requests(); all[len(all)-1].Status != 200 {
		t.Errorf("the request after the cancel was refused: %d", all[len(all)-1].Status)
	}
}

// TestSessionFolderMustBeOpenable: session/new refuses a relative path, a
// file, the filesystem root, a missing folder and one inside .git.
func TestSessionFolderMustBeOpenable(t *testing.T) {
	f := newAgent(t, fixtureOpts{})
	if err := os.MkdirAll(filepath.Join(f.dir, ".git", "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, cwd := range []string{"relative/dir", filepath.Join(f.dir, "calc.go"), "/", filepath.Join(f.dir, "missing"), filepath.Join(f.dir, ".git", "hooks")} {
		if _, err := f.conn.NewSession(ctxT(t), sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}}); err == nil {
			t.Errorf("session/new accepted %q", cwd)
		}
	}
}

// TestVerifiedEditIsRepairedOnce: the edit breaks the build; gopls says
// so, the model repairs it once in the same turn, and the permission
// question carries the repaired diff and gopls's verdict.
func TestVerifiedEditIsRepairedOnce(t *testing.T) {
	if _, err := exec.LookPath("gopls"); err != nil {
		t.Fatal("gopls not found on PATH: install it with go install golang.org/x/tools/gopls@v0.23.0 (.ci/run does)")
	}
	f := newAgent(t, fixtureOpts{verify: true, onNewErrors: config.OnNewErrorsRepair},
		modeltest.Rule{LastRole: "tool", MatchPrompt: "return a + b", Content: "Repaired.", Times: 1},
		modeltest.Rule{Match: "reports a new error it brings", Reasoning: "c is undefined.", ToolCalls: []modeltest.ScriptToolCall{
			call("r", "replace_text", map[string]string{"path": "calc.go", "old_text": "return a + c", "new_text": "return a + b"})}},
		modeltest.Rule{LastRole: "tool", Content: "Done.", Times: 1},
		modeltest.Rule{Match: "fix Add", Reasoning: "Fix the sign.", ToolCalls: []modeltest.ScriptToolCall{
			call("e", "replace_text", map[string]string{"path": "calc.go", "old_text": "return a - b", "new_text": "return a + c"})}})
	f.prompt("fix Add")
	if got, want := f.file("calc.go"), strings.Replace(calcGo, "a - b", "a + b", 1); got != want {
		t.Fatalf("calc.go is %q, want the repaired edit", got)
	}
	if len(f.ed.asked) != 1 {
		t.Fatalf("%d permission questions", len(f.ed.asked))
	}
	var text string
	for _, c := range f.ed.asked[0].ToolCall.Content {
		if c.Content != nil && c.Content.Content.Text != nil {
			text += c.Content.Content.Text.Text
		}
	}
	if !strings.Contains(text, "verified by gopls: no new errors after repair") {
		t.Errorf("the question does not carry gopls's verdict: %q", text)
	}
	recs, _ := f.ledger.Records(10)
	var repairs int
	for _, r := range recs {
		if r.Surface == spend.SurfaceRepair {
			repairs++
		}
	}
	if repairs == 0 {
		t.Errorf("no request recorded as the repair: %+v", recs)
	}
	// The repair round is said once, as a thought (assist.Sink.Round).
	if _, thought := f.ed.said(); strings.Count(thought, "repairing: gopls found") != 1 {
		t.Errorf("the repair's note in the thoughts: %q", thought)
	}
}

// commandRules: the model runs `go vet ./...`, then answers.
func commandRules() []modeltest.Rule {
	return []modeltest.Rule{
		{LastRole: "tool", Reasoning: "Vet answered.", Content: "Vet is done."},
		{Match: "vet", Reasoning: "Run vet.", ToolCalls: []modeltest.ScriptToolCall{call("v", "run_command", map[string]any{"program": "go", "args": []string{"vet", "./..."}})}},
	}
}

// TestCommandRunsInTheEditorsTerminalWhenAllowed: run_command asks each
// time, unless the user chose "always" for that command line; it runs in
// the editor's terminal, in the session's folder, and its result reaches
// the model.
func TestCommandRunsInTheEditorsTerminalWhenAllowed(t *testing.T) {
	f := newAgent(t, fixtureOpts{terminal: true}, commandRules()...)
	f.ed.always = true
	f.prompt("please vet")
	f.prompt("vet again")
	if len(f.ed.asked) != 1 {
		t.Errorf("%d permission questions, want 1 (always was chosen the first time)", len(f.ed.asked))
	}
	if want := "go vet ./... in " + f.dir; len(f.ed.ran) != 2 || f.ed.ran[0] != want {
		t.Errorf("ran %q, want twice %q", f.ed.ran, want)
	}
	if c := f.ed.toolCalls()["turn1-v"]; c == nil || c.kind != sdk.ToolKindExecute || c.status != sdk.ToolCallStatusCompleted || !strings.Contains(c.text, "exited with status 0") {
		t.Errorf("the command's tool call: %+v", c)
	}
	reqs := f.srv.Requests()
	if !strings.Contains(string(reqs[1].Body), "exited with status 0") {
		t.Errorf("the command's result did not reach the model")
	}
}

// TestRejectedCommandDoesNotRun: rejected, nothing runs; without
// terminals, or in the ask mode, run_command is refused without a
// question.
func TestRejectedCommandDoesNotRun(t *testing.T) {
	f := newAgent(t, fixtureOpts{terminal: true}, commandRules()...)
	f.ed.allow = false
	f.prompt("please vet")
	if len(f.ed.ran) != 0 || len(f.ed.asked) != 1 {
		t.Errorf("rejected: ran %q after %d questions", f.ed.ran, len(f.ed.asked))
	}
	if _, err := f.conn.SetSessionMode(ctxT(t), sdk.SetSessionModeRequest{SessionId: f.sid, ModeId: "ask"}); err != nil {
		t.Fatal(err)
	}
	f.ed.allow = true
	f.prompt("vet in ask mode")
	if len(f.ed.ran) != 0 || len(f.ed.asked) != 1 {
		t.Errorf("ask mode: ran %q after %d questions", f.ed.ran, len(f.ed.asked))
	}
	plain := newAgent(t, fixtureOpts{}, commandRules()...)
	plain.prompt("please vet")
	body := string(plain.srv.Requests()[0].Body)
	if strings.Contains(body, `"run_command"`) {
		t.Errorf("run_command is offered to a client without terminals")
	}
}

// TestEditorBuffersAreReadAndWritten: where the client offers fs/*, the
// model reads the editor's unsaved buffer and the allowed edit lands in
// it, not on disk.
func TestEditorBuffersAreReadAndWritten(t *testing.T) {
	f := newAgent(t, fixtureOpts{fs: true},
		modeltest.Rule{LastRole: "tool", MatchPrompt: "replaced in calc.go", Content: "Done.", Times: 1},
		modeltest.Rule{LastRole: "tool", MatchPrompt: "unsaved", Reasoning: "Fix it.", Times: 1, ToolCalls: []modeltest.ScriptToolCall{
			call("e", "replace_text", map[string]string{"path": "calc.go", "old_text": "return a - b // unsaved", "new_text": "return a + b"})}},
		modeltest.Rule{Match: "fix Add", Reasoning: "Read it.", ToolCalls: []modeltest.ScriptToolCall{
			call("r", "read_file", map[string]any{"path": "calc.go", "start_line": nil, "end_line": nil})}})
	path := filepath.Join(f.dir, "calc.go")
	unsaved := strings.Replace(calcGo, "return a - b", "return a - b // unsaved", 1)
	f.ed.mu.Lock()
	f.ed.buffers[path] = unsaved
	f.ed.mu.Unlock()
	f.prompt("fix Add")
	f.ed.mu.Lock()
	buf := f.ed.buffers[path]
	f.ed.mu.Unlock()
	if want := strings.Replace(calcGo, "return a - b", "return a + b", 1); buf != want {
		t.Errorf("the editor's buffer is %q, want %q", buf, want)
	}
	if got := f.file("calc.go"); got != calcGo {
		t.Errorf("the disk changed: %q", got)
	}
}

// TestCloseSessionCancelsItsTurn: session/close during a stream ends the
// turn "cancelled" and hangs up the provider (the SDK does not cancel on
// close; CloseSession does, D89); the session is gone after it.
func TestCloseSessionCancelsItsTurn(t *testing.T) {
	f := newAgent(t, fixtureOpts{}, modeltest.Rule{Match: "slow", Content: strings.Repeat("word ", 400), Chunks: 400, IntervalMS: 20})
	started := f.answerStarted()
	closed := make(chan error, 1)
	go func() {
		<-started
		_, err := f.conn.CloseSession(context.Background(), sdk.CloseSessionRequest{SessionId: f.sid})
		closed <- err
	}()
	if resp := f.prompt("a slow answer"); resp.StopReason != sdk.StopReasonCancelled {
		t.Fatalf("stop reason %q, want cancelled", resp.StopReason)
	}
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if reqs, err := f.srv.WaitRequests(ctxT(t), 1); err != nil || !reqs[0].HungUp {
		t.Errorf("the provider stream was not hung up")
	}
	if _, err := f.conn.Prompt(ctxT(t), sdk.PromptRequest{SessionId: f.sid, Prompt: []sdk.ContentBlock{sdk.TextBlock("more")}}); err == nil {
		t.Errorf("a closed session took a prompt")
	}
}

// TestCreatedFileLandsOnDisk: the editor offers fs/* but no delete and no
// empty write, so an edit that creates a file lands through the confined
// writer, whole, and not through fs/write_text_file (D92).
func TestCreatedFileLandsOnDisk(t *testing.T) {
	f := newAgent(t, fixtureOpts{fs: true},
		modeltest.Rule{LastRole: "tool", Content: "Created.", Times: 1},
		modeltest.Rule{Match: "add Sub", Reasoning: "A new file.", ToolCalls: []modeltest.ScriptToolCall{
			call("c", "create_file", map[string]string{"path": "sub.go", "content": "package calc\n\nfunc Sub(a, b int) int { return a - b }\n"})}})
	f.prompt("add Sub")
	if got := f.file("sub.go"); !strings.Contains(got, "func Sub") {
		t.Errorf("sub.go is %q", got)
	}
	f.ed.mu.Lock()
	defer f.ed.mu.Unlock()
	if len(f.ed.buffers) != 0 {
		t.Errorf("the editor was asked to write %v", f.ed.buffers)
	}
}

// TestBudgetQuestionThroughPermission: a request estimated above
// budget.confirmAbove is put to the user through session/request_permission;
// refused, nothing is sent and the turn ends "refusal", saying why.
func TestBudgetQuestionThroughPermission(t *testing.T) {
	f := newAgent(t, fixtureOpts{confirmAbove: 1e-9}, modeltest.Rule{Content: "Hello."})
	f.ed.allow = false
	if resp := f.prompt("hello"); resp.StopReason != sdk.StopReasonRefusal {
		t.Fatalf("stop reason %q, want refusal", resp.StopReason)
	}
	if n := len(f.srv.Requests()); n != 0 || len(f.ed.asked) != 1 {
		t.Errorf("%d requests sent after %d questions, want none after 1", n, len(f.ed.asked))
	}
	if msg, _ := f.ed.said(); !strings.Contains(msg, "not sent") {
		t.Errorf("the refusal is not said: %q", msg)
	}
	f.ed.allow = true
	if resp := f.prompt("hello again"); resp.StopReason != sdk.StopReasonEndTurn || len(f.srv.Requests()) != 1 {
		t.Errorf("allowed: stop %q, %d requests", resp.StopReason, len(f.srv.Requests()))
	}
}

// TestKeyStruckFromTheAgentsOwnTools: a file holding the API key, found
// by search_files, reaches neither the editor nor the provider with the
// key in it.
func TestKeyStruckFromTheAgentsOwnTools(t *testing.T) {
	srvKey := modeltest.DefaultKey
	f := newAgent(t, fixtureOpts{files: map[string]string{"notes.txt": "token = " + srvKey + "\n"}},
		modeltest.Rule{LastRole: "tool", Content: "Found it.", Times: 1},
		modeltest.Rule{Match: "token", Reasoning: "Search.", ToolCalls: []modeltest.ScriptToolCall{
			call("s", "search_files", map[string]any{"query": "token", "regex": nil, "directory": nil})}})
	if f.srv.Key != srvKey {
		t.Fatalf("the stand-in's key is %q", f.srv.Key)
	}
	f.prompt("where is the token?")
	c := f.ed.toolCalls()["turn1-s"]
	if c == nil || !strings.Contains(c.text, "notes.txt:1:") || strings.Contains(c.text, srvKey) {
		t.Errorf("the search's tool call: %+v", c)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 2 || strings.Contains(string(reqs[1].Body), srvKey) || !strings.Contains(string(reqs[1].Body), "[REDACTED]") {
		t.Errorf("the search result went to the provider with the key, or not at all")
	}
}
