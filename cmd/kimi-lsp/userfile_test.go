package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
)

// TestUserFileProblemsReachEditor (#21.10): the user file's problems are
// shown to the editor once, saying what was dropped: the whole file, and
// where a TOML syntax error is.
func TestUserFileProblemsReachEditor(t *testing.T) {
	for _, tc := range []struct {
		name, toml string
		want       []string
	}{
		{"maxConcurrent", "[jobs]\nmaxConcurrent = 0\n", []string{"jobs.maxConcurrent: 0 is out of range", "the whole file was ignored"}},
		{"cacheTTL", "cacheTTL = \"7m\"\n", []string{`cacheTTL: \"7m\" is not one of 5m, 1h`, "the whole file was ignored"}},
		{"syntax", "model = \"kimi-k3\"\ncacheTTL = 5m\n", []string{"invalid TOML at line 2, column", "the whole file was ignored"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t)
			userConfig(t, env, tc.toml)
			p := start(t, env)
			p.ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) { return []any{nil}, nil })
			if _, err := p.ed.Initialize(ctxT(t), nil); err != nil {
				t.Fatal(err)
			}
			m, err := p.ed.WaitMethod(ctxT(t), "window/showMessage", func(p json.RawMessage) bool {
				return strings.Contains(string(p), "config.toml")
			})
			if err != nil {
				t.Fatalf("the editor was not told: %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(m.Params), w) {
					t.Errorf("message %s does not say %q", m.Params, w)
				}
			}
			if strings.Contains(string(m.Params), "for this value") {
				t.Errorf("message %s says only one value was dropped", m.Params)
			}
			// A round trip after it: anything sent before has arrived.
			var r any
			p.ed.Call(ctxT(t), "shutdown", nil, &r)
			n := 0
			for _, msg := range p.ed.Messages() {
				if msg.Method == "window/showMessage" && strings.Contains(string(msg.Params), "config.toml") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("told %d times, want once", n)
			}
			p.ed.Notify("exit", nil)
			p.wait(t)
			if strings.Contains(p.stderr.String(), "for this value") {
				t.Errorf("stderr says only one value was dropped:\n%s", p.stderr)
			}
		})
	}
}

// TestUserFileWatchedByTheServer (issue 33 item 5): the server the command
// starts watches the user file it read: a file written while it runs is
// read again, and its problem is told to the editor as at start.
func TestUserFileWatchedByTheServer(t *testing.T) {
	env := testEnv(t)
	userConfig(t, env, "cacheTTL = \"1h\"\n")
	path := filepath.Join(envFunc(env)("XDG_CONFIG_HOME"), "kimi-lsp", "config.toml")
	p := start(t, env)
	p.ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) { return []any{nil}, nil })
	if _, err := p.ed.Initialize(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("[jobs]\nmaxConcurrent = 0\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := p.ed.WaitMethod(ctxT(t), "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "config.toml")
	})
	if err != nil {
		t.Fatalf("the user file written while the server ran was not read again: %v", err)
	}
	if !strings.Contains(string(m.Params), "jobs.maxConcurrent: 0 is out of range") {
		t.Errorf("message %s does not name the new file's problem", m.Params)
	}
	p.stdin.Close()
	p.wait(t)
}
