package complete

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestCloseWaitsForStreams holds a completion stream open at the stand-in
// and closes the services: Close hangs it up and returns only after the
// stream's goroutine has ended (its hang-up takes a second here); after
// it, no stream starts.
func TestCloseWaitsForStreams(t *testing.T) {
	// No stream of an earlier test is still ending.
	waitFor(t, func() bool { return !modeltest.GoroutineIn("complete.(*Completer).fly") })
	f := newFixture(t, "", modeltest.Rule{DelayMS: 600_000})
	tr := modeltest.NewSlowHangUp(time.Second)
	svc := NewServices(ServicesOptions{HTTPClient: &http.Client{Transport: tr}})
	f.c = New(Options{Config: f.config, Services: svc})
	ch := f.background(context.Background(), f.set(src, Invoked))
	f.waitArrived(1)
	svc.Close()
	if !tr.Returned() {
		t.Errorf("Close returned before the hung-up stream's request did")
	}
	if modeltest.GoroutineIn("complete.(*Completer).fly") {
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
