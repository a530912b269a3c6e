package complete

import (
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
)

type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("test: no request may leave")
}

// TestInvalidBaseURLNoCompletionRequest (#21.1): with an invalid baseURL a
// completion fails with the reason, and nothing is sent to any host.
func TestInvalidBaseURLNoCompletionRequest(t *testing.T) {
	f := newFixture(t, "")
	bad, _ := f.config().WithEnv(func(k string) string {
		return map[string]string{"KIMI_API_KEY": "sk-test-0123456789abcdef", "KIMI_BASE_URL": "127.0.0.1:8011"}[k]
	})
	ct := &countingTransport{}
	c := New(Options{Config: func() config.Config { return bad }, HTTPClient: &http.Client{Transport: ct}})
	s, err := c.Complete(ctxT(t), f.set(src, Invoked))
	if s != nil || !errors.Is(err, config.ErrInvalidBaseURL) || !strings.Contains(err.Error(), "KIMI_BASE_URL") {
		t.Errorf("got %+v, %v; want the invalid baseURL", s, err)
	}
	if n := ct.n.Load(); n != 0 {
		t.Errorf("%d requests left; want none", n)
	}
}
