package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestTrustLetsTheWorkspaceTypeScriptRun (#30.1, #30.2): a repository
// shipping node_modules/typescript/lib/tsserver.js (which writes a
// marker, then runs the real one): kimi-lsp edit in the untrusted folder
// verifies with typescript-language-server's own TypeScript and the
// marker is never written; after kimi-lsp trust, the workspace's
// TypeScript is used, as the user's editor would use it.
func TestTrustLetsTheWorkspaceTypeScriptRun(t *testing.T) {
	tsls, err := exec.LookPath("typescript-language-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("typescript-language-server not found on PATH: .ci/run installs it")
		}
		t.Skip("typescript-language-server not found on PATH (npm install -g typescript-language-server@5.3.0 typescript@5.9.3)")
	}
	real := ""
	if p, err := filepath.EvalSymlinks(tsls); err == nil {
		for d := filepath.Dir(p); d != filepath.Dir(d) && real == ""; d = filepath.Dir(d) {
			for _, c := range []string{filepath.Join(d, "node_modules", "typescript", "lib", "tsserver.js"), filepath.Join(d, "typescript", "lib", "tsserver.js")} {
				if _, err := os.Stat(c); err == nil {
					real = c
					break
				}
			}
		}
	}
	if real == "" {
		t.Fatalf("no TypeScript beside %s (npm install -g typescript@5.9.3)", tsls)
	}
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	write := func(rel, text string) {
		p := filepath.Join(dir, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".git/HEAD", "ref: refs/heads/main\n")
	write("node_modules/typescript/package.json", `{"name": "typescript", "version": "5.9.3"}`)
	write("node_modules/typescript/lib/tsserver.js", "require('fs').appendFileSync("+strconv.Quote(marker)+", 'ran\\n');\nrequire("+strconv.Quote(real)+");\n")
	// An error before and after (see assist/verify's TypeScript tests).
	write("calc.ts", "export const x: number = 'one';\nexport function sub(a: number, b: number): number {\n  return a + b;\n}\n")
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="rewrite"`, Content: "```diff\n--- a/calc.ts\n+++ b/calc.ts\n@@ -2,3 +2,3 @@\n export function sub(a: number, b: number): number {\n-  return a + b;\n+  return a - b;\n }\n```"},
	}}})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	r := runBinary(t, env, dir, "edit", "calc.ts:2-4", "-m", "subtract")
	if r.code != 0 || !strings.Contains(r.stderr, "verified by typescript-language-server (untrusted folder") {
		t.Fatalf("untrusted: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("untrusted: the repository's tsserver.js ran")
	}
	if r := runBinary(t, env, dir, "trust"); r.code != 0 {
		t.Fatalf("trust: exit %d, %q", r.code, r.stderr)
	}
	r = runBinary(t, env, dir, "edit", "calc.ts:2-4", "-m", "subtract")
	if r.code != 0 || !strings.Contains(r.stderr, "verified by typescript-language-server: ") {
		t.Fatalf("trusted: exit %d, stderr %q", r.code, r.stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error("trusted: the workspace's TypeScript was not used")
	}
}
