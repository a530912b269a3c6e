//go:build linux

package lsp

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/watch"
	"github.com/kimi-lsp/kimi-lsp/workspace/watch/watchtest"
)

const watchLimitChildEnv = "KIMI_LSP_WATCH_LIMIT_CHILD"

// TestWatchLimitEditorRegistration hits the real inotify watch limit (in a
// child process inside a user namespace, where the limit can be lowered to
// 8 without touching the machine's) so that the folder's scan asks the
// editor to watch files (client/registerCapability) from inside the scan.
// See TestWatchLimitChild for what is checked.
func TestWatchLimitEditorRegistration(t *testing.T) {
	t.Logf("child:\n%s", watchtest.RunChild(t, "TestWatchLimitChild", watchLimitChildEnv, "1"))
}

// TestWatchLimitChild runs in TestWatchLimitEditorRegistration's child:
//   - silent: the editor never answers registerCapability; the request goes
//     out after the initialize reply, requests are answered meanwhile, and
//     exit ends the session at once;
//   - refused: the editor answers with an error; the folder falls back to
//     periodic rescans;
//   - timeout: the editor never answers and the request times out; the
//     folder falls back to periodic rescans.
func TestWatchLimitChild(t *testing.T) {
	if os.Getenv(watchLimitChildEnv) == "" {
		t.Skip("runs only as TestWatchLimitEditorRegistration's child process")
	}
	watchtest.LowerWatchLimit(t, 8)
	folder := func(t *testing.T) string {
		dir, err := filepath.EvalSymlinks(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20; i++ {
			p := filepath.Join(dir, fmt.Sprintf("d%02d", i), "f.go")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte("package d\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	params := func(dir string) map[string]any {
		p := lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))
		p["capabilities"].(map[string]any)["workspace"].(map[string]any)["didChangeWatchedFiles"] = map[string]any{"dynamicRegistration": true}
		return p
	}
	mode := func(s *session) watch.Mode {
		st := s.srv.folders.WatchStats()
		if len(st) != 1 {
			return -1
		}
		return st[0].Stats.Mode
	}

	t.Run("silent", func(t *testing.T) {
		dir := folder(t)
		block := make(chan struct{})
		t.Cleanup(func() { close(block) })
		s := newSession(t, nil)
		s.ed.Handle("client/registerCapability", func(json.RawMessage) (any, *lsptest.ResponseError) {
			<-block
			return nil, nil
		})
		s.initialize(params(dir))
		if _, err := s.ed.WaitMethod(ctxT(t), "client/registerCapability", nil); err != nil {
			t.Fatal(err)
		}
		reply, request := -1, -1
		for i, m := range s.ed.Messages() {
			switch {
			case m.IsResponse() && string(m.ID) == "1" && reply < 0:
				reply = i
			case m.Method == "client/registerCapability" && request < 0:
				request = i
			}
		}
		if request < reply {
			t.Errorf("registerCapability (message %d) went out before the initialize reply (message %d)", request, reply)
		}
		uri := string(workspace.FileURI(filepath.Join(dir, "d01", "f.go")))
		s.open(uri, "package d\n")
		if acts := s.codeActions(uri, nil, nil); len(acts) == 0 {
			t.Errorf("no code actions while the registration is pending")
		}
		// The folder records its mode once the registration is sent, which
		// under load may be after the editor has seen the request.
		waitFor(t, func() bool { return mode(s) == watch.ModeClient })
		s.ed.Notify("exit", nil)
		select {
		case <-s.exit:
		case <-time.After(5 * time.Second):
			t.Fatal("exit hung on the unanswered registerCapability")
		}
	})

	t.Run("refused", func(t *testing.T) {
		dir := folder(t)
		s := newSession(t, nil)
		s.ed.Handle("client/registerCapability", func(json.RawMessage) (any, *lsptest.ResponseError) {
			return nil, &lsptest.ResponseError{Code: -32601, Message: "no dynamic registration here"}
		})
		s.initialize(params(dir))
		waitFor(t, func() bool { return mode(s) == watch.ModePoll })
	})

	t.Run("timeout", func(t *testing.T) {
		dir := folder(t)
		block := make(chan struct{})
		t.Cleanup(func() { close(block) })
		s := newSessionOpts(t, Options{ClientTimeout: 200 * time.Millisecond}, nil)
		s.ed.Handle("client/registerCapability", func(json.RawMessage) (any, *lsptest.ResponseError) {
			<-block
			return nil, nil
		})
		s.initialize(params(dir))
		waitFor(t, func() bool { return mode(s) == watch.ModePoll })
	})
}
