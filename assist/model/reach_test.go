package model_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// deadPort returns a loopback URL where nothing listens (a port just
// released).
func deadPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// mustSay fails unless every phrase is in the error text, and the text
// holds none of Go's raw transport prefixes.
func mustSay(t *testing.T, err error, phrases ...string) {
	t.Helper()
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, p := range phrases {
		if !strings.Contains(msg, p) {
			t.Errorf("the error does not say %q:\n%s", p, msg)
		}
	}
	for _, raw := range []string{`Post "`, "dial tcp", "the reply stream was cut off"} {
		if strings.Contains(msg, raw) {
			t.Errorf("the error reads %q, Go's raw text or a wrong reason:\n%s", raw, msg)
		}
	}
}

// TestErrorsSayWhatHappenedAndWhatToCheck: each way of not reaching the
// API, against a real loopback server, gives a sentence that says what
// happened and what to check — the endpoint and where baseURL came from —
// instead of a raw Go error (issue 21 item 18).
func TestErrorsSayWhatHappenedAndWhatToCheck(t *testing.T) {
	const from = "KIMI_BASE_URL"
	opts := func(base string) model.Options {
		return model.Options{BaseURL: base, FallbackURL: "none", APIKey: "sk-test-key", BaseURLSource: from, APIKeySource: "editor settings",
			// A connect or TLS handshake on loopback under load 10+ can take
			// seconds: the limit here is not what is tested.
			MaxAttempts: 2, RetryBaseDelay: time.Millisecond, ConnectTimeout: 60 * time.Second}
	}

	t.Run("refused", func(t *testing.T) {
		base := deadPort(t)
		_, err := model.New(opts(base)).Stream(context.Background(), userReq("go"))
		mustSay(t, err, "could not connect to "+base+"/v1/chat/completions", "connection refused", "is the server running", "check baseURL (set by KIMI_BASE_URL)")
		var ce *model.ConnError
		if !errors.As(err, &ce) || ce.Kind != model.ConnRefused || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("not a ConnRefused keeping its cause: %#v", err)
		}
	})

	t.Run("refused, then the fallback too", func(t *testing.T) {
		base, fb := deadPort(t), deadPort(t)
		o := opts(base)
		o.FallbackURL = fb
		_, err := model.New(o).Stream(context.Background(), userReq("go"))
		mustSay(t, err, "could not connect to "+fb+"/v1/chat/completions (the fallback, after "+base+"/v1/chat/completions)", "connection refused")
	})

	t.Run("web page with status 200", func(t *testing.T) {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<!DOCTYPE html>\n<html><head><title>Welcome to nginx!</title></head><body>hello</body></html>\n"))
		}))
		defer hs.Close()
		for _, stream := range []bool{true, false} {
			c := model.New(opts(hs.URL))
			var err error
			if stream {
				_, err = c.Stream(context.Background(), userReq("go"))
			} else {
				_, err = c.Complete(context.Background(), userReq("go"))
			}
			mustSay(t, err, "the endpoint answered a web page, not the API", `"Welcome to nginx!"`, hs.URL, "check baseURL (set by KIMI_BASE_URL)")
			if !errors.Is(err, model.ErrNotAPI) {
				t.Errorf("stream=%v: not ErrNotAPI: %v", stream, err)
			}
		}
	})

	t.Run("plain text with status 200", func(t *testing.T) {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("OK\n"))
		}))
		defer hs.Close()
		s, err := model.New(opts(hs.URL)).Stream(context.Background(), userReq("go"))
		if err == nil {
			_, err = s.Next()
			s.Close()
		}
		mustSay(t, err, "did not answer as the chat-completions API", "text/plain", "check baseURL (set by KIMI_BASE_URL)")
		if !errors.Is(err, model.ErrNotAPI) {
			t.Errorf("not ErrNotAPI: %v", err)
		}
	})

	t.Run("web page with status 404", func(t *testing.T) {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(404)
			w.Write([]byte("<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>" + strings.Repeat("x", 500) + "</body></html>"))
		}))
		defer hs.Close()
		_, err := model.New(opts(hs.URL)).Stream(context.Background(), userReq("go"))
		mustSay(t, err, "HTTP 404", "a web page", `"404 Not Found"`, "no API at this path, or no such model", "check baseURL (set by KIMI_BASE_URL)", "model name")
		if strings.Contains(err.Error(), "<html") || strings.Contains(err.Error(), "xxxx") {
			t.Errorf("the page's markup is in the error: %v", err)
		}
	})

	t.Run("key refused", func(t *testing.T) {
		srv := modeltest.NewServer(modeltest.Config{})
		defer srv.Close()
		_, err := model.New(opts(srv.URL)).Stream(context.Background(), userReq("go"))
		mustSay(t, err, "the provider refused the API key", "HTTP 401", "check the key (set by editor settings)", "KIMI_API_KEY")
		if !errors.Is(err, model.ErrUnauthorized) {
			t.Errorf("not ErrUnauthorized: %v", err)
		}
	})

	t.Run("DNS", func(t *testing.T) {
		_, err := model.New(opts("http://kimi-lsp-test.invalid")).Stream(context.Background(), userReq("go"))
		var dns *net.DNSError
		if errors.Is(err, model.ErrTimeout) {
			t.Logf("this machine's resolver did not answer in time: %v", err)
			return
		}
		if !errors.As(err, &dns) {
			t.Fatalf("not a DNS failure: %v", err)
		}
		if dns.IsTimeout {
			t.Logf("this machine's resolver timed out: %v", err)
			return
		}
		mustSay(t, err, `the host name "kimi-lsp-test.invalid" was not found`, "check baseURL (set by KIMI_BASE_URL) for a typo")
	})

	t.Run("TLS to a plain http server", func(t *testing.T) {
		srv := modeltest.NewServer(modeltest.Config{})
		defer srv.Close()
		base := strings.Replace(srv.URL, "http://", "https://", 1)
		_, err := model.New(opts(base)).Stream(context.Background(), userReq("go"))
		mustSay(t, err, "the TLS (https) handshake failed", "the server answered in plain http, not TLS", "needs an http:// baseURL", "check baseURL (set by KIMI_BASE_URL)")
		if reqs := srv.Requests(); len(reqs) != 0 {
			t.Errorf("%d requests reached the server", len(reqs))
		}
	})

	t.Run("TLS certificate not trusted", func(t *testing.T) {
		hs := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer hs.Close()
		_, err := model.New(opts(hs.URL)).Stream(context.Background(), userReq("go"))
		mustSay(t, err, "the TLS (https) handshake failed", "authority this system does not trust")
	})

	t.Run("never answers within waitTimeout", func(t *testing.T) {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // then the server notices the client hang up
			<-r.Context().Done()
		}))
		defer hs.Close()
		o := opts(hs.URL)
		o.WaitTimeout = 1500 * time.Millisecond
		_, err := model.New(o).Stream(context.Background(), userReq("go"))
		mustSay(t, err, hs.URL, "did not start answering within 1.5s", "check the network, HTTPS_PROXY or baseURL (set by KIMI_BASE_URL)", "waitTimeout")
		if !errors.Is(err, model.ErrTimeout) {
			t.Errorf("not ErrTimeout: %v", err)
		}
	})
}

// TestBriefNamesTheRetryReason: what the "waiting" status line says while
// a call retries is the reason of the failed attempt, not "no reply yet"
// when the connection was refused.
func TestBriefNamesTheRetryReason(t *testing.T) {
	var mu sync.Mutex
	var briefs []string
	ctx := model.WithTrace(context.Background(), &model.Trace{Retry: func(i model.RetryInfo) {
		mu.Lock()
		defer mu.Unlock()
		briefs = append(briefs, model.Brief(i.Err))
	}})
	c := model.New(model.Options{BaseURL: deadPort(t), FallbackURL: "none", MaxAttempts: 3, RetryBaseDelay: time.Millisecond})
	if _, err := c.Stream(ctx, userReq("go")); err == nil {
		t.Fatal("no error")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(briefs) != 2 || briefs[0] != "connection refused" {
		t.Errorf("got %q, want two retries told as connection refused", briefs)
	}
}
