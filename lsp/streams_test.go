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
	cs.in.Close()
	select {
	case <-cs.done:
	case <-ctxT(t).Done():
		t.Fatal("Run did not return after the input closed")
	}
	if !tr.Returned() {
		t.Errorf("Run returned before the hung-up stream's request did")
	}
	if completionStreamRunning() {
		t.Errorf("a completion stream's goroutine runs after Run returned")
	}
}

// completionStreamRunning reports whether a goroutine runs a completion
// stream (complete.Completer.fly, as stack traces print it).
func completionStreamRunning() bool { return modeltest.GoroutineIn("complete.(*Completer).fly") }
