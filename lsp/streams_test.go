package lsp

import (
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// slowHangUp is a real HTTP transport whose hang-ups take a while: a
// request cancelled before its reply began returns only after delay, as
// over a slow network. It keeps a hung-up stream's goroutine running for
// that long, so that a session end that did not wait for it returns first.
type slowHangUp struct {
	base     http.RoundTripper
	delay    time.Duration
	returned atomic.Bool // a hung-up request has returned
}

func (t *slowHangUp) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil && r.Context().Err() != nil {
		time.Sleep(t.delay)
		t.returned.Store(true)
	}
	return resp, err
}

// TestSessionEndWaitsForCompletionStreams ends the session (its input
// closes) while the stand-in holds an inline completion's stream open:
// Run hangs the stream up and returns only after the stream's goroutine
// has ended (its hang-up takes a second here).
func TestSessionEndWaitsForCompletionStreams(t *testing.T) {
	// No stream of an earlier test is still ending.
	waitFor(t, func() bool { return !completionStreamRunning() })
	tr := &slowHangUp{base: http.DefaultTransport.(*http.Transport).Clone(), delay: time.Second}
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
	if !tr.returned.Load() {
		t.Errorf("Run returned before the hung-up stream's request did")
	}
	if completionStreamRunning() {
		t.Errorf("a completion stream's goroutine runs after Run returned")
	}
}

// completionStreamRunning reports whether a goroutine runs a completion
// stream (complete.Completer.fly, as stack traces print it).
func completionStreamRunning() bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), "complete.(*Completer).fly")
}
