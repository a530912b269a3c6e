package modeltest

import (
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"time"
)

// SlowHangUp is a real HTTP transport (Base) whose hang-ups take a while:
// a request cancelled before its reply began returns only after Delay, as
// over a slow network. It keeps a hung-up stream's goroutine running that
// long, so that an owner which does not wait for its streams returns
// first; Returned reports that a hung-up request has returned.
type SlowHangUp struct {
	Base     http.RoundTripper
	Delay    time.Duration
	returned atomic.Bool
}

// NewSlowHangUp is a SlowHangUp over a clone of the default transport.
func NewSlowHangUp(delay time.Duration) *SlowHangUp {
	return &SlowHangUp{Base: http.DefaultTransport.(*http.Transport).Clone(), Delay: delay}
}

// RoundTrip sends r on Base, sleeping Delay before it returns a hang-up.
func (t *SlowHangUp) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.Base.RoundTrip(r)
	if err != nil && r.Context().Err() != nil {
		time.Sleep(t.Delay)
		t.returned.Store(true)
	}
	return resp, err
}

// Returned reports whether a hung-up request has returned.
func (t *SlowHangUp) Returned() bool { return t.returned.Load() }

// GoroutineIn reports whether a goroutine of this process runs fn (a
// function name as stack traces print it, "complete.(*Completer).fly").
func GoroutineIn(fn string) bool {
	buf := make([]byte, 1<<20)
	return strings.Contains(string(buf[:runtime.Stack(buf, true)]), fn)
}
