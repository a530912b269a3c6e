package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestEditVerified: kimi-lsp edit verifies with gopls as the server does:
// an edit that breaks the build is repaired once (the second request
// quotes gopls), and the verification line is printed; --write writes the
// repaired edit. An edit still broken after the repair is not written.
func TestEditVerified(t *testing.T) {
	if _, err := exec.LookPath("gopls"); err != nil {
		t.Fatal("gopls not found on PATH: install it with go install golang.org/x/tools/gopls@v0.23.0 (.ci/run does)")
	}
	diff := func(from, to string) string {
		return "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -3,3 +3,3 @@\n func Sub(a, b int) int {\n-\treturn " + from + "\n+\treturn " + to + "\n }\n```"
	}
	for _, tc := range []struct {
		name, repair, line string
		code               int
		written            string
	}{
		{"repaired", diff("a - c", "a - b"), "kimi-lsp: verified by gopls: no new errors after repair\n", 0, "return a - b"},
		{"still broken", "I cannot fix it.", "kimi-lsp: verified by gopls: 1 new error after repair: undefined: c\n", 1, "return a + b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := goModule(t)
			srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
				{Match: "reports a new error it brings", Content: tc.repair},
				{Match: `action="rewrite"`, Content: diff("a + b", "a - c")},
			}}})
			defer srv.Close()
			env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
			r := runBinary(t, env, dir, "edit", "calc.go:3-5", "-m", "make it subtract", "--write")
			if r.code != tc.code || !strings.Contains(r.stderr, tc.line) {
				t.Errorf("exit %d, stderr %q; want %d and %q", r.code, r.stderr, tc.code, tc.line)
			}
			reqs := srv.Requests()
			if len(reqs) != 2 || !strings.Contains(string(reqs[1].Body), "undefined: c") {
				t.Fatalf("%d requests; want 2, the second quoting gopls", len(reqs))
			}
			if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); !strings.Contains(string(b), tc.written) {
				t.Errorf("calc.go:\n%s\nwant %q", b, tc.written)
			}
		})
	}
}

// TestHelperNeverGetsTheKey: the helper language server kimi-lsp starts
// does not inherit KIMI_API_KEY nor KIMI_BASE_URL (a helper may run the
// workspace's code: its environment is an allow-list, D66); what it
// needs of the environment (HOME) it gets, and its stderr reaches the
// log.
func TestHelperNeverGetsTheKey(t *testing.T) {
	dir := goModule(t)
	script := filepath.Join(t.TempDir(), "env-server")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho \"key=${KIMI_API_KEY:-none} url=${KIMI_BASE_URL:-none} home=${HOME:+set}\" >&2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="rewrite"`, Content: "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -3,3 +3,3 @@\n func Sub(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n```"},
	}}})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	userConfig(t, env, "[verify.servers]\ngo = \""+script+"\"\n")
	logFile := filepath.Join(t.TempDir(), "log")
	r := runBinary(t, env, dir, "edit", "calc.go:3-5", "-m", "subtract", "--log-level", "debug", "--log-file", logFile)
	if r.code != 0 || !strings.Contains(r.stderr, "not verified (env-server failed") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	b, _ := os.ReadFile(logFile)
	if !strings.Contains(string(b), "key=none url=none home=set") {
		t.Errorf("the helper got the key (or its stderr is not in the log):\n%s", b)
	}
}
