package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// cliWorkspace writes a Go module with calc.go and returns calc.go's path.
func cliWorkspace(t *testing.T) string {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	file := filepath.Join(dir, "calc.go")
	os.WriteFile(file, []byte("package m\n\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"), 0o644)
	return file
}

// userConfig writes the user config file of the environment env.
func userConfig(t *testing.T, env []string, toml string) {
	dir := filepath.Join(envFunc(env)("XDG_CONFIG_HOME"), "kimi-lsp")
	os.MkdirAll(dir, 0o700)
	if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(toml), 0o600); err != nil {
		t.Fatal(err)
	}
}

// doctorAgainstStandIn runs "kimi-lsp doctor" against a fresh stand-in
// with its key and URL, then env (later entries win), and returns the
// stand-in, the exit code and stdout.
func doctorAgainstStandIn(t *testing.T, env ...string) (*modeltest.Server, int, string) {
	t.Helper()
	srv := modeltest.NewServer(modeltest.Config{})
	t.Cleanup(srv.Close)
	vars := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	list := testEnv(t)
	for k, v := range vars {
		list = append(list, k+"="+v)
	}
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"doctor"}, nil, &out, &errb, envFunc(list))
	return srv, code, out.String()
}

// TestExplainCutOffExitsNonZero (issue 13 item 1): the part that streamed
// is printed, stderr says it was cut off and why, the exit code is 1.
func TestExplainCutOffExitsNonZero(t *testing.T) {
	file := cliWorkspace(t)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="explain"`, Content: "Sub returns the su", FinishReason: "length"}}}})
	defer srv.Close()
	env := envFunc(testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL))
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"explain", file + ":3-5"}, nil, &out, &errb, env)
	if code != 1 || out.String() != "Sub returns the su\n" || !strings.Contains(errb.String(), "cut off") || !strings.Contains(errb.String(), "maxCompletionTokens (8192 tokens") {
		t.Errorf("code %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestKimiK3ThroughTheCLI (issue 13 item 5): explain and edit on kimi-k3
// work with the default efforts (max is sent).
func TestKimiK3ThroughTheCLI(t *testing.T) {
	file := cliWorkspace(t)
	diff := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -3,3 +3,3 @@\n func Sub(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n```"
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="explain"`, Content: "Sub adds."},
		{Match: `action="fix"`, Content: diff}}}})
	defer srv.Close()
	envList := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	userConfig(t, envList, "model = \"kimi-k3\"\nfastModel = \"kimi-k3\"\n")
	env := envFunc(envList)
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"explain", file + ":3-5"}, nil, &out, &errb, env); code != 0 {
		t.Errorf("explain on kimi-k3: code %d, %s", code, errb.String())
	}
	errb.Reset()
	if code := run(context.Background(), []string{"edit", "--action", "fix", file + ":3-5"}, nil, &out, &errb, env); code != 0 {
		t.Errorf("fix on kimi-k3: code %d, %s", code, errb.String())
	}
	for _, r := range srv.Requests() {
		if r.Parsed == nil || r.Parsed.Model != "kimi-k3" || *r.Parsed.ReasoningEffort != "max" {
			t.Errorf("request %d: status %d %s", r.Seq, r.Status, r.Error)
		}
	}
}

// TestWaitingShownOnTheTerminal (issue 15 item 6): the real binary, its
// stderr a terminal (script(1) gives it one), against a provider that never
// answers: a "waiting" line appears, and the command ends at waitTimeout
// with a sentence naming it.
func TestWaitingShownOnTheTerminal(t *testing.T) {
	if _, err := exec.LookPath("script"); err != nil {
		t.Fatal("script(1) from util-linux (Debian: bsdutils) is needed for a terminal")
	}
	file := cliWorkspace(t)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{DelayMS: 600_000}}})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	userConfig(t, env, "waitTimeout = \"5s\"\n")
	cmd := exec.Command("script", "-q", "-e", "-c", binary+" explain "+file+":3-5", "/dev/null")
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	text := string(b)
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("exit: %v", err)
	}
	if !strings.Contains(text, "waiting for kimi-k3.1-pro-highspeed to start answering") ||
		!strings.Contains(text, "did not start answering within 5s") {
		t.Errorf("terminal output:\n%q", text)
	}
}
