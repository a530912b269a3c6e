package lsp

import (
	"net/http"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestSessionEndWaitsForCompletionStreams ends the session (its input
// closes) while the stand-in holds an inline completion's stream open:
// Run hangs the stream up and returns only after the stream's goroutine
// has ended (its hang-up takes a second here).
func TestSessionEndWaitsForCompletionStreams(t *testing.T) {
	// No stream of an earlier test is still ending.
	waitFor(t, func() bool { return !completionStreamRunning() })
	tr := modeltest.NewSlowHangUp(time.Second)
	cs := newCompSessionOpts(t, Options{HTTPClient: &http.Client{Transport: tr}}, true, nil, modeltest.Rule{DelayMS: 600_000})
	uri, pos := cs.file("main.go", mainGo)
	cs.inline(uri, pos, 1)
	cs.waitArrived(1)
	endWaitsForStream(t, cs, tr, completionStreamRunning, "completion stream")
}

// endWaitsForStream closes cs's input while a stream of what is held open
// at the stand-in (hung up slowly by tr), and checks that Run returns only
// after the stream's request and its goroutine (running) have ended.
func endWaitsForStream(t *testing.T, cs *compSession, tr *modeltest.SlowHangUp, running func() bool, what string) {
	t.Helper()
	cs.in.Close()
	select {
	case <-cs.done:
	case <-ctxT(t).Done():
		t.Fatal("Run did not return after the input closed")
	}
	if !tr.Returned() {
		t.Errorf("Run returned before the hung-up %s's request did", what)
	}
	if running() {
		t.Errorf("a %s's goroutine runs after Run returned", what)
	}
}

// completionStreamRunning reports whether a goroutine runs a completion
// stream (complete.Completer.fly, as stack traces print it).
func completionStreamRunning() bool { return modeltest.GoroutineIn("complete.(*Completer).fly") }

// TestSessionEndWaitsForNextEditStreams: a next-edit stream held open at
// the stand-in when the input ends; Run hangs it up and returns only after
// its goroutine has ended (its hang-up takes a second here).
func TestSessionEndWaitsForNextEditStreams(t *testing.T) {
	waitFor(t, func() bool { return !nextEditStreamRunning() })
	tr := modeltest.NewSlowHangUp(time.Second)
	cs := newCompSessionOpts(t, Options{HTTPClient: &http.Client{Transport: tr}}, true,
		map[string]any{"nextEdit": map[string]any{"debounceMs": 20}}, modeltest.Rule{DelayMS: 600_000})
	uri, _ := cs.file("main.go", scaleGo+"|")
	cs.change(uri, renamedGo+"|")
	cs.waitArrived(1)
	endWaitsForStream(t, cs, tr, nextEditStreamRunning, "next-edit stream")
}

// nextEditStreamRunning reports whether a goroutine runs a next edit's
// pause or stream (complete.NextEdits.fire, as stack traces print it).
func nextEditStreamRunning() bool { return modeltest.GoroutineIn("complete.(*NextEdits).fire") }
