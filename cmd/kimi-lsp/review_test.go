package main

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestReviewDiff is #26's check: "kimi-lsp review --diff" in a repository
// with uncommitted changes reviews only the changed hunks (the prompt holds
// the diff, not the unrelated file) and prints FILE:LINE: severity: message.
func TestReviewDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	calc := "package m\n\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n"
	other := "package m\n\n// UnrelatedMarker is not changed.\nfunc UnrelatedMarker() {}\n"
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "calc.go"), []byte(calc), 0o644)
	os.WriteFile(filepath.Join(dir, "other.go"), []byte(other), 0o644)
	gitEnv := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	// The uncommitted change: Sub now adds.
	os.WriteFile(filepath.Join(dir, "calc.go"), []byte(strings.Replace(calc, "a - b", "a + b", 1)), 0o644)

	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "careful senior reviewer", Content: `{"findings":[{"startLine":4,"endLine":4,"severity":"error","message":"Sub adds","explanation":""},` +
			`{"startLine":1,"endLine":1,"severity":"hint","message":"outside the change","explanation":""}]}`}}}})
	defer srv.Close()
	state := t.TempDir()
	env := testEnv(t, "XDG_STATE_HOME="+state, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	t.Chdir(dir)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"review", "--diff"}, nil, &out, &errb, envFunc(env))
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errb.String())
	}
	if got := out.String(); got != "calc.go:4: error: Sub adds\n" {
		t.Fatalf("stdout %q\nstderr %s", got, errb.String())
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want one (one changed file)", len(reqs))
	}
	prompt := string(reqs[0].Prompt)
	if !strings.Contains(prompt, "-\treturn a - b") || !strings.Contains(prompt, "+\treturn a + b") || strings.Contains(prompt, "UnrelatedMarker") {
		t.Fatalf("prompt:\n%s", prompt)
	}
	// Like every request, it is in the record kimi-lsp requests reads.
	out.Reset()
	if code := run(context.Background(), []string{"requests", "--json"}, nil, &out, &errb, envFunc(env)); code != 0 {
		t.Fatalf("requests: exit %d, %s", code, errb.String())
	}
	var recs []spend.Record
	if err := json.Unmarshal(out.Bytes(), &recs); err != nil || len(recs) != 1 || recs[0].PromptTokens == 0 {
		t.Fatalf("requests --json after review --diff printed %s (%v), want the one review request", out.String(), err)
	}
}

// TestReviewFile: "kimi-lsp review FILE:START-END" prints the findings of
// the range, and not one outside it.
func TestReviewFile(t *testing.T) {
	file := cliWorkspace(t)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "careful senior reviewer", Content: "```json\n" + `{"findings":[{"startLine":4,"endLine":4,"severity":"warning","message":"Sub adds","explanation":""},` +
			`{"startLine":1,"endLine":1,"severity":"hint","message":"outside the range","explanation":""}]}` + "\n```"}}}})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"review", file + ":3-5"}, nil, &out, &errb, envFunc(env))
	if code != 0 || out.String() != file+":4: warning: Sub adds\n" {
		t.Fatalf("exit %d, stdout %q\n%s", code, out.String(), errb.String())
	}
}
