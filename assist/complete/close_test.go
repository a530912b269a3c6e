package complete

import (
	"context"
	"errors"
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
// that long, so that a Close that did not wait for it returns first.
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

// goroutineIn reports whether a goroutine is running fn (a function name
// as stack traces print it).
func goroutineIn(fn string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
}

// TestCloseWaitsForStreams holds a completion stream open at the stand-in
// and closes the services: Close hangs it up and returns only after the
// stream's goroutine has ended (its hang-up takes a second here); after
// it, no stream starts.
func TestCloseWaitsForStreams(t *testing.T) {
	// No stream of an earlier test is still ending.
	waitFor(t, func() bool { return !goroutineIn("complete.(*Completer).fly") })
	f := newFixture(t, "", modeltest.Rule{DelayMS: 600_000})
	tr := &slowHangUp{base: http.DefaultTransport.(*http.Transport).Clone(), delay: time.Second}
	svc := NewServices(ServicesOptions{HTTPClient: &http.Client{Transport: tr}})
	f.c = New(Options{Config: f.config, Services: svc})
	ch := f.background(context.Background(), f.set(src, Invoked))
	f.waitArrived(1)
	svc.Close()
	if !tr.returned.Load() {
		t.Errorf("Close returned before the hung-up stream's request did")
	}
	if goroutineIn("complete.(*Completer).fly") {
		t.Errorf("a completion stream's goroutine runs after Close returned")
	}
	if a := <-ch; a.s != nil || a.err == nil {
		t.Errorf("the completion held open: %+v, %v; want an error", a.s, a.err)
	}
	s, err := f.c.Complete(ctxT(t), f.set(strings.Replace(src, "Pri|", "Prin|", 1), Invoked))
	if s != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("a completion after Close: %+v, %v; want context.Canceled", s, err)
	}
	if n := len(f.srv.Requests()); n > 1 {
		t.Errorf("%d requests reached the stand-in, want the one held open", n)
	}
}
