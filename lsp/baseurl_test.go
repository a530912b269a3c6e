package lsp

import (
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// countingTransport counts the requests that would leave the machine, to
// any host (the default endpoint, its fallback, the stand-in), and refuses
// them.
type countingTransport struct{ n atomic.Int32 }

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return nil, errors.New("test: no request may leave")
}

// TestInvalidBaseURLFailsClosed (#21.1): an invalid baseURL from the
// environment (the command's Config), initializationOptions,
// workspace/configuration or a pushed didChangeConfiguration is said to
// the editor once when it arrives, an action fails with a message naming
// the value and its source, and no request leaves for any host.
func TestInvalidBaseURLFailsClosed(t *testing.T) {
	const bad = "127.0.0.1:8011"
	key := map[string]string{"KIMI_API_KEY": "sk-test-0123456789abcdef"}
	keyCfg, _ := config.Default().WithEnv(func(k string) string { return key[k] })
	cases := []struct {
		name, source string
		start        func(t *testing.T) *badURLRun
	}{
		{"environment", "KIMI_BASE_URL", func(t *testing.T) *badURLRun {
			env := map[string]string{"KIMI_API_KEY": key["KIMI_API_KEY"], "KIMI_BASE_URL": bad}
			cfg, errs := config.Default().WithEnv(func(k string) string { return env[k] })
			return badURLSession(t, Options{Config: cfg, ConfigProblems: errs}, nil, nil)
		}},
		{"initializationOptions", "editor initializationOptions", func(t *testing.T) *badURLRun {
			return badURLSession(t, Options{Config: keyCfg}, map[string]any{"kimi": map[string]any{"baseURL": bad}}, nil)
		}},
		{"workspace/configuration", "editor settings", func(t *testing.T) *badURLRun {
			js := badURLSession(t, Options{Config: keyCfg}, nil, nil)
			js.settings(map[string]any{"baseURL": bad}, func(s *Server) bool { return s.config().BaseURLError() != nil })
			return js
		}},
		{"didChangeConfiguration", "editor settings", func(t *testing.T) *badURLRun {
			js := badURLSession(t, Options{Config: keyCfg}, nil, func(p map[string]any) {
				delete(p["capabilities"].(map[string]any)["workspace"].(map[string]any), "configuration")
			})
			js.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"kimi": map[string]any{"baseURL": bad}}})
			return js
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			js := tc.start(t)
			told, err := js.ed.WaitMethod(ctxT(t), "window/showMessage", func(p json.RawMessage) bool {
				return strings.Contains(string(p), `\"`+bad+`\"`) && strings.Contains(string(p), tc.source)
			})
			if err != nil {
				t.Fatalf("the editor was not told about the bad baseURL: %v", err)
			}
			main := js.file("main.go", "package main\n\nfunc main() {}\n")
			js.run("kimi.explain", map[string]any{"uri": main, "range": rng(2, 0, 2, 14)}, "x")
			end := js.progressEnd(`"x"`)
			if !strings.Contains(end, `"`+bad+`"`) || !strings.Contains(end, tc.source) || !strings.Contains(end, "nothing was sent") {
				t.Errorf("the action's outcome %q does not name the value and its source", end)
			}
			if n := js.http.n.Load(); n != 0 {
				t.Errorf("%d requests left for some host; want none", n)
			}
			if n := len(js.srv.Requests()); n != 0 {
				t.Errorf("%d requests reached the stand-in; want none", n)
			}
			shown := 0
			for _, m := range js.ed.Messages() {
				if m.Method == "window/showMessage" && strings.Contains(string(m.Params), `\"`+bad+`\"`) {
					shown++
				}
			}
			if shown != 1 {
				t.Errorf("the bad value was announced %d times, want once (%v)", shown, told)
			}
		})
	}
}

// badURLRun is a jobSession whose model requests go to a counting
// transport.
type badURLRun struct {
	*jobSession
	http *countingTransport
}

// badURLSession is a jobSession with opts (a counting transport added)
// and initialization options init; edit, if set, changes the initialize
// params.
func badURLSession(t *testing.T, opts Options, init map[string]any, edit func(map[string]any)) *badURLRun {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ct := &countingTransport{}
	opts.HTTPClient = &http.Client{Transport: ct}
	js := &badURLRun{jobSession: &jobSession{dir: dir, srv: standIn(t), docs: map[string]string{}}, http: ct}
	js.session = newSessionOpts(t, opts, nil)
	js.ed.Handle("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.ResponseError) { return nil, nil })
	js.ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) { return []any{nil}, nil })
	params := lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))
	if init != nil {
		params["initializationOptions"] = init
	}
	if edit != nil {
		edit(params)
	}
	js.initialize(params)
	return js
}
