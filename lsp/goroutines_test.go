package lsp

import (
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSessionGoroutinePanicIsReported: a panic in a long-lived goroutine
// of the session (the one that forwards warnings to the editor) is logged
// with its stack and loses the one message it was sending: the goroutine
// goes on (the next warning reaches the editor) and the process with it.
func TestSessionGoroutinePanicIsReported(t *testing.T) {
	var once sync.Once
	s := newSessionKnobs(t, Options{}, testKnobs{hook: func(point string, arg any) {
		if point == "logMessage" && strings.Contains(arg.(string), "first warning") {
			once.Do(func() { panic("test hook: logMessage") })
		}
	}}, nil)
	s.initialize(nil)
	s.srv.log.Warn("first warning")
	s.srv.log.Warn("second warning")
	if _, err := s.ed.WaitMethod(ctxT(t), "window/logMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "second warning") }); err != nil {
		t.Fatalf("the warning after the panic did not reach the editor: %v", err)
	}
	if l := s.logbuf.String(); !strings.Contains(l, "panic in the session's goroutine") || !strings.Contains(l, "test hook: logMessage") || !strings.Contains(l, "goroutine=\"forward logs\"") {
		t.Errorf("the panic is not in the log:\n%s", l)
	}
}

// TestRunWaitsForSessionGoroutines: when Run returns, the session's
// goroutines — requests, the log forwarder, the review sender, the
// editor-process watcher — have ended: the number of goroutines is back
// to what it was before the server was made.
func TestRunWaitsForSessionGoroutines(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Run("session", func(t *testing.T) {
		s := newSession(t, nil)
		s.initialize(map[string]any{"processId": 1})
		var out any
		if err := s.ed.Call(ctxT(t), "shutdown", nil, &out); err != nil {
			t.Fatal(err)
		}
		s.ed.Notify("exit", nil)
		select {
		case <-s.done:
		case <-time.After(30 * time.Second):
			t.Fatal("the server did not exit")
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got := runtime.NumGoroutine(); got > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after the session, %d before:\n%s", got, before, buf[:runtime.Stack(buf, true)])
	}
}
