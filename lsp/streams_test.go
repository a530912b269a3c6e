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
	cs.in.Close()
	select {
	case <-cs.done:
	case <-ctxT(t).Done():
		t.Fatal("Run did not return after the input closed")
	}
	if !tr.Returned() {
		t.Errorf("Run returned before the hung-up next-edit stream's request did")
	}
	if nextEditStreamRunning() {
		t.Errorf("a next-edit goroutine runs after Run returned")
	}
}

// nextEditStreamRunning reports whether a goroutine runs a next edit's
// pause or stream (complete.NextEdits.fire, as stack traces print it).
func nextEditStreamRunning() bool { return modeltest.GoroutineIn("complete.(*NextEdits).fire") }
