package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// These tests check issue 11's items 4 and 6: the read loop never waits on
// the disk or the editor, and configuration applies in order.

// bigFolder makes a temporary folder of dirs directories of files Go files
// each (400×100: its first scan takes about a second natively, longer under
// the race detector). The files are hard links to one file, which is many
// times faster to make than as many files on a busy disk; a scan sees
// regular files all the same.
func bigFolder(t *testing.T, dirs, files int) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(t.TempDir(), "f.go")
	if err := os.WriteFile(src, []byte("package p\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for d := 0; d < dirs; d++ {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := 0; f < files; f++ {
			if err := os.Link(src, filepath.Join(dir, fmt.Sprintf("f%03d.go", f))); err != nil {
				t.Fatal(err)
			}
		}
	}
	return root
}

// waitLog waits until the server's log holds text.
func (s *session) waitLog(text string) {
	s.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.logbuf.String(), text) {
		if time.Now().After(deadline) {
			s.t.Fatalf("the server never logged %q", text)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// TestExitMidScan: exit while the first scan of a 40,000-file folder runs
// stops the scan and ends the session at once (the figure, tens of
// milliseconds, is in bench/README.md; the bound here is generous).
func TestExitMidScan(t *testing.T) {
	dir := bigFolder(t, 400, 100)
	s := newSession(t, nil)
	s.initialize(lsptest.DefaultInitializeParams(string(workspace.FileURI(dir))))
	s.waitLog("workspace folder added")
	if err := s.ed.Call(ctxT(t), "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.ed.Notify("exit", nil)
	select {
	case code := <-s.exit:
		if code != 0 {
			t.Errorf("exit code %d, want 0", code)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("exit during a scan did not end the session")
	}
	t.Logf("exit → Run returned: %v", time.Since(start))
	if !strings.Contains(s.logbuf.String(), "scan stopped") {
		t.Errorf("the scan was not stopped: exit waited for it to finish")
	}
}

// TestFolderRemovalMidScan: removing a folder whose first scan runs does
// not hold the requests that follow; the scan is stopped in the background.
func TestFolderRemovalMidScan(t *testing.T) {
	dir := bigFolder(t, 400, 100)
	other := t.TempDir()
	s := newSession(t, nil)
	s.initialize(lsptest.DefaultInitializeParams(string(workspace.FileURI(dir))))
	uri := string(workspace.FileURI(filepath.Join(other, "a.go")))
	s.open(uri, "package a\n\nfunc A() {}\n")
	s.waitLog("workspace folder added")
	s.ed.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added":   []any{},
		"removed": []any{map[string]any{"uri": string(workspace.FileURI(dir)), "name": "root"}},
	}})
	start := time.Now()
	acts := s.codeActions(uri, nil, nil)
	took := time.Since(start)
	t.Logf("codeAction right after the removal: %v, %d actions", took, len(acts))
	if len(acts) == 0 {
		t.Errorf("no code actions")
	}
	if took > 2*time.Second {
		t.Errorf("codeAction took %v after a folder removal: it waited for the scan", took)
	}
	if got := s.srv.folders.List(); len(got) != 0 {
		t.Errorf("folders after the removal: %v", got)
	}
	s.waitLog("scan stopped")
}

// TestNoRequestBeforeInitializeReply: a server→client request made before
// the initialize reply waits for it (LSP forbids requests before it).
func TestNoRequestBeforeInitializeReply(t *testing.T) {
	s := newSession(t, nil)
	errc := make(chan error, 1)
	go func() {
		errc <- s.srv.call(context.Background(), "client/registerCapability", &registrationParams{}, nil)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if m, err := s.ed.Wait(ctx, func(*lsptest.Message) bool { return true }); err == nil {
		t.Fatalf("the server sent %q before initialize", m.Method)
	}
	s.initialize(nil)
	if err := <-errc; err != nil {
		t.Fatalf("registerCapability after initialize: %v", err)
	}
	reply, request := -1, -1
	for i, m := range s.ed.Messages() {
		switch {
		case m.IsResponse() && string(m.ID) == "1" && reply < 0:
			reply = i
		case m.Method == "client/registerCapability":
			request = i
		}
	}
	if reply < 0 || request < reply {
		t.Errorf("initialize reply at %d, registerCapability at %d: the request went first", reply, request)
	}
}

// TestEditorNeverAnswers: a server→client request the editor never answers
// ends after its timeout, and in any case when the session ends.
func TestEditorNeverAnswers(t *testing.T) {
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	never := func(json.RawMessage) (any, *lsptest.ResponseError) {
		<-block
		return nil, nil
	}

	s := newSessionOpts(t, Options{ClientTimeout: 100 * time.Millisecond}, nil)
	s.ed.Handle("kimi/never", never)
	s.initialize(nil)
	start := time.Now()
	err := s.srv.call(context.Background(), "kimi/never", nil, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("unanswered request: %v, want a deadline error", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a 100 ms timeout took %v", d)
	}

	// Without a timeout in sight (a user question), exit ends the wait.
	s2 := newSession(t, nil)
	s2.ed.Handle("window/showMessageRequest", never)
	s2.initialize(nil)
	errc := make(chan error, 1)
	go func() {
		errc <- s2.srv.call(context.Background(), "window/showMessageRequest", map[string]string{"message": "?"}, nil)
	}()
	if _, err := s2.ed.WaitMethod(ctxT(t), "window/showMessageRequest", nil); err != nil {
		t.Fatal(err)
	}
	s2.ed.Notify("exit", nil)
	select {
	case <-s2.exit:
	case <-time.After(5 * time.Second):
		t.Fatal("exit hung on a request the editor never answered")
	}
	select {
	case err := <-errc:
		if err == nil {
			t.Errorf("the unanswered request reported success")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the unanswered request still waits after the session ended")
	}
}

// TestConfigUpdatesApplyInOrder: concurrent updates leave the engine, the
// folders and OnConfig on the newest configuration. OnConfig sleeps a
// little to let updates overtake each other.
func TestConfigUpdatesApplyInOrder(t *testing.T) {
	var mu sync.Mutex
	var seen config.Config
	s := newSessionOpts(t, Options{OnConfig: func(c config.Config) {
		time.Sleep(time.Duration(rand.IntN(2000)) * time.Microsecond)
		mu.Lock()
		seen = c
		mu.Unlock()
	}}, nil)
	s.initialize(nil)
	for round := 0; round < 5; round++ {
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				raw := json.RawMessage(fmt.Sprintf(`{"kimi":{"context":{"maxFileSize":%d}}}`, 100000+100*round+i))
				s.srv.updateConfig(context.Background(), "test", func(c config.Config) (config.Config, []error) {
					return c.WithEditor(raw)
				})
			}()
		}
		wg.Wait()
		want := s.srv.config().Context.MaxFileSize
		if want < 100000+100*int64(round) || want >= 100000+100*int64(round)+16 {
			t.Fatalf("round %d: maxFileSize %d is none of this round's values: the updates were not applied", round, want)
		}
		mu.Lock()
		got := seen.Context.MaxFileSize
		mu.Unlock()
		if got != want {
			t.Errorf("round %d: OnConfig saw maxFileSize %d last, the configuration has %d", round, got, want)
		}
		if got := s.srv.engine.Config().Context.MaxFileSize; got != want {
			t.Errorf("round %d: the engine has maxFileSize %d, the configuration %d", round, got, want)
		}
		if got := s.srv.folders.Options().MaxFileSize; got != want {
			t.Errorf("round %d: the folders have maxFileSize %d, the configuration %d", round, got, want)
		}
	}
}

// TestPulledSettingsNewestWins: when the editor answers an earlier
// workspace/configuration after a later one, the later answer stays.
func TestPulledSettingsNewestWins(t *testing.T) {
	s := newSession(t, nil)
	var pulls atomic.Int32
	release := make(chan struct{})
	var releaseOnce sync.Once
	s.ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) {
		switch pulls.Add(1) {
		case 1: // at initialized
			return []any{map[string]any{"model": "first"}}, nil
		case 2: // answered late, with what the editor had then
			select {
			case <-release:
			case <-time.After(300 * time.Millisecond):
			}
			return []any{map[string]any{"model": "old"}}, nil
		default:
			releaseOnce.Do(func() { close(release) })
			return []any{map[string]any{"model": "new"}}, nil
		}
	})
	s.initialize(nil)
	waitFor(t, func() bool { return s.srv.config().Model == "first" })
	s.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": nil})
	s.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": nil})
	waitFor(t, func() bool { return pulls.Load() >= 3 })
	waitFor(t, func() bool { return !s.srv.settings.pullInFlight() })
	if err := s.srv.serial.Wait(ctxT(t), s.srv.serial.Mark()); err != nil {
		t.Fatal(err)
	}
	if got := s.srv.config().Model; got != "new" {
		t.Errorf("model %q after the editor answered the later pull first, want the later answer %q", got, "new")
	}
	if got := s.srv.engine.Config().Model; got != "new" {
		t.Errorf("the engine has model %q, want %q", got, "new")
	}
}

// TestConnectionPoolSurvivesConfigChange: a configuration change that keeps
// the endpoint keeps the HTTP connections: two explanations with a change
// between them use one TCP connection to the stand-in.
func TestConnectionPoolSurvivesConfigChange(t *testing.T) {
	params := lsptest.DefaultInitializeParams("")
	params["capabilities"].(map[string]any)["workspace"].(map[string]any)["configuration"] = false
	js := newJobSession(t, params, modeltest.Rule{Match: "Explain", Content: explainText})
	uri := js.file("a.go", "package a\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n")
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}, "t1")
	js.progressEnd(`"t1"`)
	js.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"kimi": map[string]any{"cacheTTL": "1h", "model": "kimi-k3"}}})
	waitFor(t, func() bool { return js.srv.Connections() == 1 && js.session.srv.engine.Config().CacheTTL == "1h" })
	js.run("kimi.explain", map[string]any{"uri": uri, "range": rng(6, 0, 8, 1)}, "t2")
	js.progressEnd(`"t2"`)
	if n := len(js.srv.Requests()); n != 2 {
		t.Fatalf("%d model requests, want 2", n)
	}
	if n := js.srv.Connections(); n != 1 {
		t.Errorf("%d TCP connections for 2 requests with a configuration change between them, want 1 (the pool was dropped)", n)
	}
}
