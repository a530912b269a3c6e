package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/gittest"
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

// TestReviewDiffRunsNoRepositoryProgram (#30.4): kimi-lsp review --diff in
// a repository whose configuration or attributes name a program for git
// to run (gittest.Traps) runs none of them, and still sends the changed
// file's diff to the model and prints its finding (in a partial clone
// missing the file's HEAD blob: says why it was not reviewed).
func TestReviewDiffRunsNoRepositoryProgram(t *testing.T) {
	calc := "package m\n\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n"
	for _, trap := range gittest.Traps {
		t.Run(trap, func(t *testing.T) {
			gittest.Hermetic(t)
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			marks := t.TempDir()
			gittest.Repo(t, dir, map[string]string{"go.mod": "module example.com/m\n", "calc.go": calc}, "")
			gittest.Arm(t, dir, trap, marks)
			os.WriteFile(filepath.Join(dir, "calc.go"), []byte(strings.Replace(calc, "a - b", "a + b", 1)), 0o644)
			srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
				{Match: "careful senior reviewer", Content: `{"findings":[{"startLine":4,"endLine":4,"severity":"error","message":"Sub adds","explanation":""}]}`}}}})
			defer srv.Close()
			env := testEnv(t, "XDG_STATE_HOME="+t.TempDir(), "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
			t.Chdir(dir)
			var out, errb bytes.Buffer
			code := run(context.Background(), []string{"review", "--diff"}, nil, &out, &errb, envFunc(env))
			if ran := gittest.Ran(marks); ran != "" {
				t.Fatalf("the repository's program ran:\n%s", ran)
			}
			reqs := srv.Requests()
			if !gittest.Diffable(trap) {
				if code != 0 || len(reqs) != 0 || !strings.Contains(errb.String(), "not reviewed: calc.go (HEAD's copy could not be read)") {
					t.Fatalf("exit %d, %d requests\nstderr %s", code, len(reqs), errb.String())
				}
				return
			}
			if code != 0 || out.String() != "calc.go:4: error: Sub adds\n" || len(reqs) != 1 || !strings.Contains(string(reqs[0].Prompt), "+\treturn a + b") {
				t.Fatalf("exit %d, stdout %q, %d requests\nstderr %s", code, out.String(), len(reqs), errb.String())
			}
		})
	}
}

// TestReviewDiffBudgetSpentSaysOnce (#30.7): kimi-lsp review --diff past
// a spent budget sends every changed file's request (the command line
// does not ask) and says so once for the review — it warned once per file.
func TestReviewDiffBudgetSpentSaysOnce(t *testing.T) {
	gittest.Hermetic(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	files := map[string]string{"go.mod": "module example.com/m\n"}
	for _, n := range []string{"a", "b", "c", "d"} {
		files[n+".go"] = "package m\n\nfunc F" + n + "() int {\n\treturn 1\n}\n"
	}
	gittest.Repo(t, dir, files, "")
	for _, n := range []string{"a", "b", "c", "d"} {
		os.WriteFile(filepath.Join(dir, n+".go"), []byte(strings.Replace(files[n+".go"], "return 1", "return 2", 1)), 0o644)
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "careful senior reviewer", Content: `{"findings":[]}`}}}})
	defer srv.Close()
	env := testEnv(t, "XDG_STATE_HOME="+t.TempDir(), "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	dear := `{ input = 1000, cachedRead = 1000, write5m = 1000, write1h = 1000 }`
	userConfig(t, env, "[budget]\nhourly = 0.01\nconfirmAbove = 1000\n[prices]\n\"kimi-k3.1-pro\" = "+dear+"\n\"kimi-k3.1-pro-highspeed\" = "+dear+"\n")
	t.Chdir(dir)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"review", "--diff"}, nil, &out, &errb, envFunc(env))
	// At most once: the first file spends the budget; the clock hour
	// turning during the test could leave none spent.
	if n := strings.Count(errb.String(), "sent anyway"); code != 0 || len(srv.Requests()) != 4 || n > 1 {
		t.Fatalf("exit %d, %d requests, %d warnings\nstderr %s", code, len(srv.Requests()), n, errb.String())
	}
}

// TestReviewDiffSkipsWordedAsServer (#30.7): a changed file over the size
// cap and a changed submodule are left out of kimi-lsp review --diff with
// the server's words (assist.ChangedFiles words both), and the review
// goes on — it said "select less" for the file and failed with "name a
// file in it" for the submodule.
func TestReviewDiffSkipsWordedAsServer(t *testing.T) {
	gittest.Hermetic(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	calc := "package m\n\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n"
	sub := filepath.Join(dir, "sub")
	os.MkdirAll(sub, 0o755)
	gittest.Repo(t, sub, map[string]string{"s.txt": "one\n"}, "")
	gittest.Repo(t, dir, map[string]string{"go.mod": "module example.com/m\n", "calc.go": calc, "big.txt": "small\n"}, "")
	os.WriteFile(filepath.Join(sub, "s.txt"), []byte("two\n"), 0o644)
	gittest.Git(t, sub, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-am", "next")
	os.WriteFile(filepath.Join(dir, "big.txt"), bytes.Repeat([]byte("x\n"), 7<<19), 0o644) // 7 MiB
	os.WriteFile(filepath.Join(dir, "calc.go"), []byte(strings.Replace(calc, "a - b", "a + b", 1)), 0o644)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "careful senior reviewer", Content: `{"findings":[{"startLine":4,"endLine":4,"severity":"error","message":"Sub adds","explanation":""}]}`}}}})
	defer srv.Close()
	env := testEnv(t, "XDG_STATE_HOME="+t.TempDir(), "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	t.Chdir(dir)
	var out, errb bytes.Buffer
	code := run(context.Background(), []string{"review", "--diff"}, nil, &out, &errb, envFunc(env))
	stderr := errb.String()
	if code != 0 || out.String() != "calc.go:4: error: Sub adds\n" || len(srv.Requests()) != 1 ||
		!strings.Contains(stderr, "not reviewed: big.txt (7.0 MiB, over the size cap of 1.0 MiB: raise context.maxFileSize to review it)") ||
		!strings.Contains(stderr, "not reviewed: sub (a submodule: review it in its own folder)") ||
		strings.Contains(stderr, "select less") || strings.Contains(stderr, "name a file in it") {
		t.Fatalf("exit %d, stdout %q, %d requests\nstderr %s", code, out.String(), len(srv.Requests()), stderr)
	}
}
