package model_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// The proxy settings of net/http are read once per process, so each case
// runs the test binary again with its own environment; the child makes one
// request and prints its outcome.
func TestMain(m *testing.M) {
	if base := os.Getenv("MODELTEST_PROXY_CHILD_BASE"); base != "" {
		c := model.New(model.Options{BaseURL: base, FallbackURL: "none", APIKey: os.Getenv("MODELTEST_PROXY_CHILD_KEY"),
			MaxAttempts: 1, ConnectTimeout: 2 * time.Second})
		resp, err := c.Complete(context.Background(), userReq("via proxy"))
		if err != nil {
			fmt.Println("ERROR", err)
		} else {
			fmt.Println("OK", resp.Message.Content)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// recordingProxy is a forward proxy: plain HTTP requests in absolute form go
// to target; CONNECT is refused. It records what it was asked for.
type recordingProxy struct {
	mu   sync.Mutex
	seen []string
	fwd  *httputil.ReverseProxy
}

func (p *recordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.seen = append(p.seen, r.Method+" "+r.Host)
	p.mu.Unlock()
	if r.Method == http.MethodConnect {
		http.Error(w, "no tunnels here", http.StatusForbidden)
		return
	}
	p.fwd.ServeHTTP(w, r)
}

func (p *recordingProxy) requests() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

func TestProxyFromEnvironment(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the test binary again")
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Content: "proxied"}}})
	defer srv.Close()
	target, _ := url.Parse(srv.URL)
	proxy := &recordingProxy{fwd: httputil.NewSingleHostReverseProxy(target)}
	ps := httptest.NewServer(proxy)
	defer ps.Close()

	child := func(base string, env ...string) string {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), "MODELTEST_PROXY_CHILD_BASE="+base, "MODELTEST_PROXY_CHILD_KEY="+srv.Key,
			"HTTP_PROXY=", "HTTPS_PROXY=", "NO_PROXY=", "http_proxy=", "https_proxy=", "no_proxy=")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return strings.TrimSpace(string(out))
	}

	// HTTP_PROXY: the request for an unresolvable host goes through the proxy.
	out := child("http://kimi-provider.test", "HTTP_PROXY="+ps.URL)
	if out != "OK proxied" {
		t.Errorf("through HTTP_PROXY: %s", out)
	}
	if got := proxy.requests(); len(got) != 1 || got[0] != "POST kimi-provider.test" {
		t.Errorf("proxy saw %q", got)
	}

	// HTTPS_PROXY: the default provider is reached by a CONNECT tunnel (which
	// this proxy refuses, so nothing leaves the machine).
	out = child("https://direct.evolink.ai", "HTTPS_PROXY="+ps.URL)
	if !strings.HasPrefix(out, "ERROR") {
		t.Errorf("through a refusing HTTPS proxy: %s", out)
	}
	if got := proxy.requests(); len(got) != 2 || got[1] != "CONNECT direct.evolink.ai:443" {
		t.Errorf("proxy saw %q", got)
	}

	// NO_PROXY: the host is dialled directly (and does not resolve).
	out = child("http://kimi-provider.test", "HTTP_PROXY="+ps.URL, "NO_PROXY=kimi-provider.test")
	if !strings.HasPrefix(out, "ERROR") {
		t.Errorf("with NO_PROXY: %s", out)
	}
	if got := proxy.requests(); len(got) != 2 {
		t.Errorf("proxy used despite NO_PROXY: %q", got)
	}
}
