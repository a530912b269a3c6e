package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// session is an in-process server connected to a fake editor by pipes.
type session struct {
	t      *testing.T
	srv    *Server
	ed     *lsptest.Editor
	in     *io.PipeWriter // editor → server
	exit   chan int       // receives the exit code once
	done   chan struct{}
	logbuf *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// newSession starts a server; setup, if not nil, runs before it serves
// (tests use it to add methods).
func newSession(t *testing.T, setup func(*Server)) *session {
	return newSessionOpts(t, Options{}, setup)
}

// newSessionOpts is newSession with options; Version, Logger,
// ParentPollInterval and ExplanationDir are filled in.
func newSessionOpts(t *testing.T, opts Options, setup func(*Server)) *session {
	t.Helper()
	return newSessionKnobs(t, opts, testKnobs{}, setup)
}

// newSessionKnobs is newSessionOpts with the test knobs set.
func newSessionKnobs(t *testing.T, opts Options, knobs testKnobs, setup func(*Server)) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	logbuf := &syncBuffer{}
	opts.Version = "test"
	opts.Logger = slog.New(slog.NewTextHandler(logbuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts.ParentPollInterval = 20 * time.Millisecond
	if opts.ExplanationDir == "" {
		opts.ExplanationDir = t.TempDir()
	}
	srv, err := newTestServer(inR, outW, inR, opts, knobs)
	if err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(srv)
	}
	s := &session{t: t, srv: srv, ed: lsptest.New(outR, inW), in: inW, exit: make(chan int, 1), done: make(chan struct{}), logbuf: logbuf}
	go func() {
		code := srv.Run(context.Background())
		outW.Close()
		s.exit <- code
		close(s.done)
	}()
	t.Cleanup(func() {
		inW.Close()
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Errorf("server did not stop after its input closed")
		}
		if t.Failed() {
			t.Logf("server log:\n%s", logbuf.String())
		}
	})
	return s
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func (s *session) initialize(params map[string]any) map[string]any {
	s.t.Helper()
	var p any
	if params != nil {
		p = params
	}
	raw, err := s.ed.Initialize(ctxT(s.t), p)
	if err != nil {
		s.t.Fatalf("initialize: %v", err)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		s.t.Fatalf("initialize result: %v", err)
	}
	return out
}

func (s *session) open(uri, text string) {
	s.t.Helper()
	if err := s.ed.Notify("textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text},
	}); err != nil {
		s.t.Fatal(err)
	}
}

// text waits until the server's copy of uri has the given version and
// returns its text.
func (s *session) text(uri string, version int32) string {
	s.t.Helper()
	u, err := workspace.ParseURI(uri)
	if err != nil {
		s.t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if snap, ok := s.srv.docs.Snapshot(u); ok && snap.Version >= version {
			return snap.Text()
		}
		time.Sleep(time.Millisecond)
	}
	s.t.Fatalf("document %s never reached version %d", uri, version)
	return ""
}

func errCode(err error) int64 {
	var re *lsptest.ResponseError
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

func TestInitializeCapabilities(t *testing.T) {
	s := newSession(t, nil)
	res := s.initialize(nil)
	caps := res["capabilities"].(map[string]any)
	if got := caps["positionEncoding"]; got != "utf-16" {
		t.Errorf("positionEncoding = %v, want utf-16 for a client offering only utf-16", got)
	}
	sync := caps["textDocumentSync"].(map[string]any)
	if sync["change"] != float64(2) || sync["openClose"] != true {
		t.Errorf("textDocumentSync = %v, want incremental (2) with openClose", sync)
	}
	if _, ok := sync["save"]; !ok {
		t.Errorf("textDocumentSync has no save option: %v", sync)
	}
	cmds := caps["executeCommandProvider"].(map[string]any)["commands"].([]any)
	want := []string{"kimi.explain", "kimi.fix", "kimi.rewrite", "kimi.document", "kimi.tests", "kimi.review", "kimi.action", "kimi.cancel", "kimi.stats", "kimi.clearReview", "kimi.requests", "kimi.lastPrompt", "kimi.nextEdit.apply", "kimi.nextEdit.dismiss", "kimi.nextEdit.accepted"}
	if len(cmds) != len(want) {
		t.Errorf("commands = %v, want %v", cmds, want)
	}
	for i, c := range want {
		if i < len(cmds) && cmds[i] != c {
			t.Errorf("commands[%d] = %v, want %s", i, cmds[i], c)
		}
	}
	kinds := caps["codeActionProvider"].(map[string]any)["codeActionKinds"].([]any)
	if len(kinds) == 0 || kinds[0] != "quickfix" {
		t.Errorf("codeActionKinds = %v, want quickfix first", kinds)
	}
	wf := caps["workspace"].(map[string]any)["workspaceFolders"].(map[string]any)
	if wf["supported"] != true || wf["changeNotifications"] != true {
		t.Errorf("workspaceFolders = %v", wf)
	}
	info := res["serverInfo"].(map[string]any)
	if info["name"] != "kimi-lsp" || info["version"] != "test" {
		t.Errorf("serverInfo = %v", info)
	}
}

func TestPositionEncodingNegotiation(t *testing.T) {
	for _, tc := range []struct {
		offered []string
		want    string
	}{
		{nil, "utf-16"},
		{[]string{"utf-16"}, "utf-16"},
		// The other servers of the buffer answer UTF-16 (D87): Neovim
		// 0.12 offers all three, UTF-8 first; Helix UTF-8, UTF-32, UTF-16.
		{[]string{"utf-8", "utf-16", "utf-32"}, "utf-16"},
		{[]string{"utf-8", "utf-32", "utf-16"}, "utf-16"},
		{[]string{"utf-16", "utf-8"}, "utf-16"},
		{[]string{"utf-8"}, "utf-8"},
		{[]string{"utf-32", "utf-8"}, "utf-8"},
		{[]string{"utf-32"}, "utf-16"},
	} {
		t.Run(fmt.Sprint(tc.offered), func(t *testing.T) {
			s := newSession(t, nil)
			p := lsptest.DefaultInitializeParams("")
			p["capabilities"].(map[string]any)["general"] = map[string]any{"positionEncodings": tc.offered}
			res := s.initialize(p)
			if got := res["capabilities"].(map[string]any)["positionEncoding"]; got != tc.want {
				t.Errorf("positionEncoding = %v, want %s", got, tc.want)
			}
			// The negotiated encoding is the one used to read positions:
			// insert after the emoji of "é😀x".
			uri := "file:///tmp/enc.go"
			s.open(uri, "é😀x")
			char := 3 // utf-16: é(1) + 😀(2)
			if tc.want == "utf-8" {
				char = 6 // é(2) + 😀(4)
			}
			s.ed.Notify("textDocument/didChange", map[string]any{
				"textDocument":   map[string]any{"uri": uri, "version": 2},
				"contentChanges": []any{map[string]any{"range": rng(0, char, 0, char), "text": "|"}},
			})
			if got := s.text(uri, 2); got != "é😀|x" {
				t.Errorf("after insert at character %d: %q, want %q", char, got, "é😀|x")
			}
		})
	}
}

func rng(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{
		"start": map[string]any{"line": l1, "character": c1},
		"end":   map[string]any{"line": l2, "character": c2},
	}
}

func TestLifecycleCodes(t *testing.T) {
	s := newSession(t, nil)
	ctx := ctxT(t)
	if err := s.ed.Call(ctx, "textDocument/codeAction", map[string]any{}, nil); errCode(err) != -32002 {
		t.Errorf("request before initialize: %v, want code -32002", err)
	}
	s.initialize(nil)
	if err := s.ed.Call(ctx, "initialize", lsptest.DefaultInitializeParams(""), nil); errCode(err) != -32600 {
		t.Errorf("second initialize: %v, want code -32600", err)
	}
	if err := s.ed.Call(ctx, "no/suchMethod", map[string]any{}, nil); errCode(err) != -32601 {
		t.Errorf("unknown method: %v, want code -32601", err)
	}
	if err := s.ed.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := s.ed.Call(ctx, "no/suchMethod", map[string]any{}, nil); errCode(err) != -32600 {
		t.Errorf("request after shutdown: %v, want code -32600", err)
	}
	s.ed.Notify("exit", nil)
	select {
	case code := <-s.exit:
		if code != 0 {
			t.Errorf("shutdown+exit: exit code %d, want 0", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not exit")
	}
}

func TestExitWithoutShutdown(t *testing.T) {
	s := newSession(t, nil)
	s.initialize(nil)
	s.ed.Notify("exit", nil)
	select {
	case code := <-s.exit:
		if code != 1 {
			t.Errorf("exit without shutdown: exit code %d, want 1", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not exit")
	}
}

func TestEOFEndsCleanly(t *testing.T) {
	s := newSession(t, nil)
	s.initialize(nil)
	s.in.Close()
	select {
	case code := <-s.exit:
		if code != 0 {
			t.Errorf("EOF: exit code %d, want 0", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not exit on EOF")
	}
}

// slowMethod adds "test/slow", which blocks until cancelled or released,
// and reports when it started.
func slowMethod(started chan<- string, release <-chan struct{}) func(*Server) {
	return func(s *Server) {
		s.requests["test/slow"] = func(s *Server, ctx context.Context, req *request) (any, error) {
			var name string
			json.Unmarshal(req.params, &name)
			started <- name
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
				return "released", nil
			}
		}
	}
}

// TestCancelRequestIDs holds docs/protocol-pitfalls.md, "Numeric cancel ids
// never cancel" and "Request ids beyond int32": numeric ids (what VS Code and
// Neovim send), string ids and ids beyond int32 all cancel, and the reply is
// RequestCancelled with the id exactly as sent.
func TestCancelRequestIDs(t *testing.T) {
	for _, id := range []string{`7`, `"abc"`, `4294967296`, `9007199254740991`} {
		t.Run(id, func(t *testing.T) {
			started := make(chan string, 1)
			s := newSession(t, slowMethod(started, make(chan struct{})))
			s.initialize(nil)
			ch, err := s.ed.Send(json.RawMessage(id), "test/slow", "x")
			if err != nil {
				t.Fatal(err)
			}
			<-started
			s.ed.Notify("$/cancelRequest", map[string]any{"id": json.RawMessage(id)})
			m, err := lsptest.Await(ctxT(t), ch)
			if err != nil {
				t.Fatalf("no reply to cancelled request: %v", err)
			}
			if m.Error == nil || m.Error.Code != -32800 {
				t.Errorf("reply = %+v, want error -32800", m)
			}
			if string(m.ID) != id {
				t.Errorf("reply id = %s, want %s", m.ID, id)
			}
		})
	}
}

// TestBigIDs holds docs/protocol-pitfalls.md, "Request ids beyond int32": a
// request id above 2^31 is answered, not dropped with the whole message.
func TestBigIDs(t *testing.T) {
	s := newSession(t, nil)
	s.initialize(nil)
	for _, id := range []string{`2147483648`, `-2147483649`, `12345678901234`, `3.0`} {
		ch, err := s.ed.Send(json.RawMessage(id), "no/such", nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := lsptest.Await(ctxT(t), ch)
		if err != nil {
			t.Fatalf("id %s: %v", id, err)
		}
		if string(m.ID) != id || m.Error == nil || m.Error.Code != -32601 {
			t.Errorf("id %s: reply %s %+v, want the same id and -32601", id, m.ID, m.Error)
		}
	}
}

// TestSlowRequestDoesNotBlock holds docs/protocol-pitfalls.md, "The library's
// async handler runs one request at a time": while one request is running,
// notifications are applied and other requests (including shutdown) are
// answered.
func TestSlowRequestDoesNotBlock(t *testing.T) {
	started := make(chan string, 4)
	release := make(chan struct{})
	s := newSession(t, slowMethod(started, release))
	s.initialize(nil)
	ctx := ctxT(t)
	slow, err := s.ed.Send(s.ed.NextID(), "test/slow", "a")
	if err != nil {
		t.Fatal(err)
	}
	<-started
	uri := "file:///tmp/a.go"
	s.open(uri, "package a\n")
	s.ed.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"range": rng(1, 0, 1, 0), "text": "var x = 1\n"}},
	})
	if got := s.text(uri, 2); got != "package a\nvar x = 1\n" {
		t.Errorf("text after didChange = %q", got)
	}
	// A second slow request starts while the first still runs.
	second, _ := s.ed.Send(s.ed.NextID(), "test/slow", "b")
	select {
	case name := <-started:
		if name != "b" {
			t.Errorf("started %q, want b", name)
		}
	case <-ctx.Done():
		t.Fatal("second request waited for the first")
	}
	if err := s.ed.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Fatalf("shutdown while a request runs: %v", err)
	}
	// shutdown cancels what is running: both slow requests are answered.
	for _, ch := range []<-chan *lsptest.Message{slow, second} {
		if _, err := lsptest.Await(ctx, ch); err != nil {
			t.Errorf("slow request not answered after shutdown: %v", err)
		}
	}
	close(release)
}

// TestHandlerPanicAndErrors holds docs/protocol-pitfalls.md, "A handler error
// ends the connection" and "Plain errors go out with code 0": a panicking
// handler is answered with InternalError and the connection keeps working,
// and error codes and messages reach the client intact, for different error
// types in a row.
func TestHandlerPanicAndErrors(t *testing.T) {
	s := newSession(t, func(s *Server) {
		s.requests["test/panic"] = func(*Server, context.Context, *request) (any, error) {
			panic("boom")
		}
		s.requests["test/plain"] = func(*Server, context.Context, *request) (any, error) {
			return nil, errors.New("plain failure")
		}
		s.requests["test/coded"] = func(*Server, context.Context, *request) (any, error) {
			return nil, fmt.Errorf("wrapped: %w", rpcError(-32099, "coded failure"))
		}
		s.notifications["test/panicNote"] = func(*Server, context.Context, json.RawMessage) error {
			panic("boom in notification")
		}
	})
	s.initialize(nil)
	ctx := ctxT(t)
	s.ed.Notify("test/panicNote", nil)
	for _, tc := range []struct {
		method string
		code   int64
		msg    string
	}{
		{"test/panic", -32603, "boom"},
		{"test/plain", -32603, "plain failure"},
		{"test/coded", -32099, "coded failure"},
		{"test/panic", -32603, "boom"},
	} {
		err := s.ed.Call(ctx, tc.method, nil, nil)
		var re *lsptest.ResponseError
		if !errors.As(err, &re) || re.Code != tc.code || !strings.Contains(re.Message, tc.msg) {
			t.Errorf("%s: %v, want code %d containing %q", tc.method, err, tc.code, tc.msg)
		}
	}
	if err := s.ed.Call(ctx, "shutdown", nil, nil); err != nil {
		t.Errorf("connection broken after handler failures: %v", err)
	}
}

// TestFullTextChange holds docs/protocol-pitfalls.md, "A full-text change is
// read as an insert": a didChange without a range replaces the whole text.
func TestFullTextChange(t *testing.T) {
	s := newSession(t, nil)
	s.initialize(nil)
	uri := "file:///tmp/full.go"
	s.open(uri, "old text\nline 2\n")
	s.ed.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": 2},
		"contentChanges": []any{map[string]any{"text": "new text\n"}},
	})
	if got := s.text(uri, 2); got != "new text\n" {
		t.Errorf("after full change: %q, want %q", got, "new text\n")
	}
}

func TestMalformedInput(t *testing.T) {
	s := newSession(t, nil)
	s.initialize(nil)
	ctx := ctxT(t)
	uri := "file:///tmp/keep.go"
	s.open(uri, "keep me\n")
	s.text(uri, 1)

	isNullIDError := func(code int64) func(*lsptest.Message) bool {
		return func(m *lsptest.Message) bool {
			return m.IsResponse() && string(m.ID) == "null" && m.Error != nil && m.Error.Code == code
		}
	}
	// Bad JSON inside a well-formed frame: a parse error with id null.
	s.ed.WriteFrame([]byte(`{"jsonrpc":"2.0","id":`))
	if _, err := s.ed.Wait(ctx, isNullIDError(-32700)); err != nil {
		t.Fatalf("no parse error reply for bad JSON: %v", err)
	}
	// A frame without Content-Length: the server resynchronises on the
	// next frame.
	s.ed.WriteRaw([]byte("Content-Type: application/json\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}"))
	if _, err := s.ed.Wait(ctx, isNullIDError(-32700)); err != nil {
		t.Fatalf("no error reply for a frame without Content-Length: %v", err)
	}
	// A valid message with an id but not a request: invalid request,
	// addressed to that id.
	s.ed.WriteFrame([]byte(`{"jsonrpc":"1.0","id":99,"method":"shutdown"}`))
	if _, err := s.ed.Wait(ctx, func(m *lsptest.Message) bool {
		return string(m.ID) == "99" && m.Error != nil && m.Error.Code == -32600
	}); err != nil {
		t.Fatalf("no invalid-request reply for a bad version: %v", err)
	}
	// (Wrong parameter types in a request: TestInvalidParamsBeforeInitialize.)
	// Notifications with wrong types are logged and dropped.
	s.ed.Notify("textDocument/didChange", map[string]any{"textDocument": "nope"})
	s.ed.Notify("textDocument/didOpen", []int{1, 2})
	// The server still works and kept the document.
	if err := s.ed.Call(ctx, "no/such", nil, nil); errCode(err) != -32601 {
		t.Errorf("after malformed input: %v, want -32601", err)
	}
	if got := s.text(uri, 1); got != "keep me\n" {
		t.Errorf("document lost or changed: %q", got)
	}
}

func TestInvalidParamsBeforeInitialize(t *testing.T) {
	s := newSession(t, nil)
	err := s.ed.Call(ctxT(t), "initialize", map[string]any{"processId": "not a number", "capabilities": 3}, nil)
	if errCode(err) != -32602 {
		t.Errorf("initialize with wrong types: %v, want -32602", err)
	}
	// The server accepts a correct initialize afterwards.
	s.initialize(nil)
}

func TestParentDeathEndsSession(t *testing.T) {
	s := newSession(t, nil)
	p := lsptest.DefaultInitializeParams("")
	p["processId"] = 2147483000 // no such process
	s.initialize(p)
	select {
	case code := <-s.exit:
		if code != 1 {
			t.Errorf("parent death: exit code %d, want 1", code)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("server did not notice the dead editor process")
	}
}

func TestWorkspaceFolders(t *testing.T) {
	one, two := t.TempDir(), t.TempDir()
	s := newSession(t, nil)
	s.initialize(lsptest.DefaultInitializeParams(string(workspace.FileURI(one))))
	s.ed.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added":   []any{map[string]any{"uri": string(workspace.FileURI(two)), "name": "two"}},
		"removed": []any{map[string]any{"uri": string(workspace.FileURI(one)), "name": "one"}},
	}})
	deadline := time.Now().Add(30 * time.Second)
	var got []string
	for time.Now().Before(deadline) {
		got = got[:0]
		for _, f := range s.srv.folders.List() {
			got = append(got, f.Path)
		}
		if fmt.Sprint(got) == fmt.Sprint([]string{two}) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Errorf("folders = %v, want [%s]", got, two)
}

// TestWarningsReachEditor: warnings are also sent as window/logMessage,
// with the API key redacted.
func TestWarningsReachEditor(t *testing.T) {
	const key = "sk-warn-test-SECRET-123456"
	s := newSessionOpts(t, Options{Redact: func(text string) string { return strings.ReplaceAll(text, key, "[REDACTED]") }}, nil)
	s.initialize(nil)
	s.srv.log.Warn("something odd", "detail", "uses "+key)
	m, err := s.ed.WaitMethod(ctxT(t), "window/logMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "something odd") })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(m.Params), "SECRET") || !strings.Contains(string(m.Params), "[REDACTED]") || !strings.Contains(string(m.Params), `"type":2`) {
		t.Errorf("logMessage %s: want a warning with the key redacted", m.Params)
	}
	s.srv.log.Info("routine")
	s.srv.log.Error("broken", "err", errors.New("boom"))
	if _, err := s.ed.WaitMethod(ctxT(t), "window/logMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "broken err=boom") }); err != nil {
		t.Fatal(err)
	}
	for _, m := range s.ed.Messages() {
		if strings.Contains(string(m.Params), "routine") {
			t.Errorf("an info record was sent to the editor")
		}
	}
}

// TestLogToEditor (issue 33 item 10): with Options.LogToEditor, every
// enabled record reaches the editor as window/logMessage with its level's
// type: information as Info (3), debug as Log (4), warnings and errors as
// before; the records of the start, logged before the initialize reply,
// are sent after it, not dropped.
func TestLogToEditor(t *testing.T) {
	s := newSessionOpts(t, Options{LogToEditor: true}, nil)
	s.initialize(nil)
	for _, want := range []struct{ text, typ string }{
		{"kimi-lsp starting version=test", `"type":3`},
		{"initialized client=", `"type":3`},
	} {
		if _, err := s.ed.WaitMethod(ctxT(t), "window/logMessage", func(p json.RawMessage) bool {
			return strings.Contains(string(p), want.text) && strings.Contains(string(p), want.typ)
		}); err != nil {
			t.Errorf("%q with %s: %v", want.text, want.typ, err)
		}
	}
	s.srv.log.Debug("detail")
	s.srv.log.Warn("odd")
	for _, want := range []struct{ text, typ string }{{`"kimi-lsp: detail"`, `"type":4`}, {`"kimi-lsp: odd"`, `"type":2`}} {
		if _, err := s.ed.WaitMethod(ctxT(t), "window/logMessage", func(p json.RawMessage) bool {
			return strings.Contains(string(p), want.text) && strings.Contains(string(p), want.typ)
		}); err != nil {
			t.Errorf("no logMessage %s: %v", want, err)
		}
	}
}
