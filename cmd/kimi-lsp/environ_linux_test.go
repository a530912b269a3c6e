package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestHelperCannotReadTheKeyFromItsParent (#30.5): a helper configured in
// the user file dumps its environment and its parent's
// (/proc/PPID/environ, which shows the environment kimi-lsp was started
// with): neither holds the key or another credential, though kimi-lsp
// still sends the key to the provider. The test runs as root in CI, which
// non-dumpable alone does not stop: the values are gone from the block.
func TestHelperCannotReadTheKeyFromItsParent(t *testing.T) {
	dir := goModule(t)
	out := t.TempDir()
	script := filepath.Join(t.TempDir(), "env-server")
	body := "#!/bin/sh\nenv > " + out + "/env\ntr '\\000' '\\n' < /proc/$PPID/environ > " + out + "/parent\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="rewrite"`, Content: "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -3,3 +3,3 @@\n func Sub(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n```"},
	}}})
	defer srv.Close()
	const aws, gh = "aws-secret-0123456789abcdef", "ghp_0123456789abcdefghij"
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL, "AWS_SECRET_ACCESS_KEY="+aws, "GITHUB_TOKEN="+gh)
	userConfig(t, env, "[verify.servers]\ngo = \""+script+"\"\n")
	r := runBinary(t, env, dir, "edit", "calc.go:3-5", "-m", "subtract")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	if len(srv.Requests()) == 0 {
		t.Fatal("the stand-in got no request: the key was lost on the way")
	}
	for _, name := range []string{"env", "parent"} {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			t.Fatalf("the helper did not run: %v", err)
		}
		if name == "parent" && !strings.Contains(string(b), "HOME=") {
			t.Fatalf("the helper could not read its parent's environment at all (%q): the test proves nothing", b)
		}
		for _, secret := range []string{srv.Key, aws, gh} {
			if strings.Contains(string(b), secret) {
				t.Errorf("the helper's %s holds a credential %q:\n%s", name, secret[:8], b)
			}
		}
	}
}
