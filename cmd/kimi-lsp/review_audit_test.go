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

// TestReviewDiffSymlinkToSecret: kimi-lsp review --diff never sends a
// secret file's text, also when a changed file is a link to it.
func TestReviewDiffSymlinkToSecret(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("some notes\n"), 0o644)
	gitEnv := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, ".env"), []byte("SECRET_TOKEN=hunter2-never-sent\n"), 0o644)
	os.Remove(filepath.Join(dir, "notes.txt"))
	if err := os.Symlink(".env", filepath.Join(dir, "notes.txt")); err != nil {
		t.Skip(err)
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "careful senior reviewer", Content: `{"findings":[]}`}}}})
	defer srv.Close()
	env := testEnv(t, "XDG_STATE_HOME="+t.TempDir(), "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	t.Chdir(dir)
	var out, errb bytes.Buffer
	run(context.Background(), []string{"review", "--diff"}, nil, &out, &errb, envFunc(env))
	for _, r := range srv.Requests() {
		if strings.Contains(string(r.Body), "hunter2") {
			t.Fatalf("the secret file's text was sent:\n%s\nstderr %s", r.Prompt, errb.String())
		}
	}
}
