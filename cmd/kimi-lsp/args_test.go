package main

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// The tests in this file run the real binary, as a newcomer would: the
// command line of issue #15 (flags after the file, help, ranges past the
// end, the reason for no change, version, a terminal on stdin).

// result is one finished run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// runBinary runs kimi-lsp with args in dir (the test's working directory
// when ""), the environment env and an empty stdin.
func runBinary(t *testing.T, env []string, dir string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Env = env
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("kimi-lsp %q: %v", args, err)
	}
	return result{out.String(), errb.String(), cmd.ProcessState.ExitCode()}
}

// goModule writes a small Go module with calc.go and returns its directory.
func goModule(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.26\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "calc.go"), []byte("package m\n\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"), 0o644)
	return dir
}

// TestFlagsAfterTheFile: README's own form, flags after the file, works
// for explain and edit, in every order, and "--" ends the flags.
func TestFlagsAfterTheFile(t *testing.T) {
	dir := goModule(t)
	diff := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -3,3 +3,3 @@\n func Sub(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n```"
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="explain"`, Content: "Sub adds."},
		{Match: `action="rewrite"`, Content: diff},
	}}})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	for _, args := range [][]string{
		{"explain", "calc.go:3-5", "-m", "why does it add?"},
		{"explain", "-m", "why does it add?", "calc.go:3-5"},
		{"explain", "calc.go:3-5", "--m=why does it add?", "--log-level", "error"},
		{"explain", "--log-level=error", "calc.go:3-5", "-m", "why does it add?"},
	} {
		before := len(srv.Requests())
		r := runBinary(t, env, dir, args...)
		if r.code != 0 || r.stdout != "Sub adds.\n" {
			t.Errorf("kimi-lsp %q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
			continue
		}
		reqs := srv.Requests()
		if len(reqs) != before+1 || !strings.Contains(string(reqs[len(reqs)-1].Body), "why does it add?") {
			t.Errorf("kimi-lsp %q: the question did not reach the model", args)
		}
	}
	for _, args := range [][]string{
		{"edit", "calc.go:3-5", "-m", "make it subtract"},
		{"edit", "calc.go:3-5", "--action", "rewrite", "-m", "make it subtract"},
		{"edit", "-m", "make it subtract", "calc.go:3-5"},
	} {
		r := runBinary(t, env, dir, args...)
		if r.code != 0 || !strings.Contains(r.stdout, "+\treturn a - b") {
			t.Errorf("kimi-lsp %q: exit %d, stdout %q, stderr %q", args, r.code, r.stdout, r.stderr)
		}
	}
	// --model picks the model of one run, as a local server needs.
	r := runBinary(t, env, dir, "explain", "calc.go:3-5", "--model", "kimi-k3.1-pro")
	if reqs := srv.Requests(); r.code != 0 || !strings.Contains(string(reqs[len(reqs)-1].Body), `"model":"kimi-k3.1-pro"`) {
		t.Errorf("explain --model kimi-k3.1-pro: exit %d, stderr %q, the request did not name the model", r.code, r.stderr)
	}
	r = runBinary(t, env, dir, "edit", "calc.go:3-5", "-m", "make it subtract", "--write")
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); r.code != 0 || !strings.Contains(string(b), "a - b") {
		t.Errorf("edit FILE -m … --write: exit %d, stderr %q, file:\n%s", r.code, r.stderr, b)
	}
	// After "--" a flag-looking word is an argument: here a second file.
	r = runBinary(t, env, dir, "explain", "calc.go", "--", "-m")
	if r.code != 2 || !strings.Contains(r.stderr, `got 2 arguments ["calc.go" "-m"]`) {
		t.Errorf(`explain calc.go -- -m: exit %d, stderr %q; want a usage error naming both arguments`, r.code, r.stderr)
	}
}

// TestHelp: one help text, from the real flags, on stdout with exit 0,
// however it is asked for.
func TestHelp(t *testing.T) {
	env := testEnv(t)
	full := runBinary(t, env, "", "--help")
	if full.code != 0 || full.stderr != "" {
		t.Fatalf("kimi-lsp --help: exit %d, stderr %q", full.code, full.stderr)
	}
	for _, args := range [][]string{{"-h"}, {"help"}, {"-help"}, {"--stdio", "--help"}} {
		if r := runBinary(t, env, "", args...); r.code != 0 || r.stdout != full.stdout || r.stderr != "" {
			t.Errorf("kimi-lsp %q: exit %d, stderr %q, and not the same text as --help", args, r.code, r.stderr)
		}
	}
	for _, c := range commands {
		if !strings.Contains(full.stdout, "\n  kimi-lsp "+strings.TrimPrefix(synopsis(c), "kimi-lsp ")+"\n") {
			t.Errorf("the help does not list %q", synopsis(c))
		}
		flagsOf(c).VisitAll(func(f *flag.Flag) {
			if !strings.Contains(full.stdout, "-"+f.Name+" ") && !strings.Contains(full.stdout, "-"+f.Name+"\n") {
				t.Errorf("the help does not list %s's flag -%s", c.name, f.Name)
			}
		})
	}
	// What the first help got wrong.
	for _, want := range []string{"--offline", "-m question", "-m instruction", "--action NAME", "--timeout duration", "(default 15s)", "--write", "--log-level LEVEL"} {
		if !strings.Contains(full.stdout, want) {
			t.Errorf("the help lacks %q", want)
		}
	}
	if strings.Contains(full.stdout, "10s") {
		t.Errorf("the help still says 10s")
	}
	for _, c := range commands {
		one := runBinary(t, env, "", "help", c.name)
		if one.code != 0 || !strings.HasPrefix(one.stdout, "Usage: "+synopsis(c)+"\n") {
			t.Errorf("kimi-lsp help %s: exit %d, stdout %q", c.name, one.code, one.stdout)
		}
		if c.name == "help" || c.name == "serve" {
			continue // "-h" after no command (serve) asks for the whole help
		}
		if r := runBinary(t, env, "", c.name, "--help"); r.code != 0 || r.stdout != one.stdout {
			t.Errorf("kimi-lsp %s --help: exit %d, stdout %q; want the text of \"help %s\"", c.name, r.code, r.stdout, c.name)
		}
	}
	if r := runBinary(t, env, "", "help", "frobnicate"); r.code != 2 || !strings.Contains(r.stderr, "explain") {
		t.Errorf("help frobnicate: exit %d, stderr %q; want 2 and the list of commands", r.code, r.stderr)
	}
}

// TestRangePastTheEnd: a range past the end of the file is refused with the
// file's line count, and nothing reaches the provider.
func TestRangePastTheEnd(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 575; i++ {
		fmt.Fprintf(&b, "// line %d\n", i)
	}
	os.WriteFile(filepath.Join(dir, "cookie.go"), []byte(b.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "empty.go"), nil, 0o644)
	srv := modeltest.NewServer(modeltest.Config{})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "cookie.go:600-700"}, "cookie.go:600-700 is past the end of cookie.go, which has 575 lines"},
		{[]string{"explain", "cookie.go:576"}, "cookie.go:576 is past the end of cookie.go, which has 575 lines"},
		{[]string{"edit", "cookie.go:570-700", "-m", "x"}, "cookie.go:570-700 ends past the end of cookie.go, which has 575 lines (cookie.go:570-575 is the rest of the file)"},
		{[]string{"explain", "empty.go:1"}, "which has 0 lines"},
		{[]string{"explain", "missing.go:1-2"}, "missing.go: no such file"},
	} {
		r := runBinary(t, env, dir, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("kimi-lsp %q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests reached the provider; want none", n)
	}
	if r := runBinary(t, env, dir, "explain", "cookie.go:570-575"); r.code != 0 {
		t.Errorf("the last lines of the file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestEditNoChangeShowsTheReason: an edit that ends without a change shows
// the model's answer, which says why.
func TestEditNoChangeShowsTheReason(t *testing.T) {
	dir := goModule(t)
	const reason = "Sub already does what the instruction asks; there is nothing to change."
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Content: reason}}}})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	r := runBinary(t, env, dir, "edit", "calc.go:3-5", "-m", "make it add")
	if r.code != 1 || !strings.Contains(r.stderr, "no change") || !strings.Contains(r.stderr, reason) {
		t.Errorf("edit with no change: exit %d, stderr %q; want 1 and the model's reason", r.code, r.stderr)
	}
	if r.stdout != "" {
		t.Errorf("stdout %q: it carries diffs only", r.stdout)
	}
}

// TestVersionNamesTheBuild: "kimi-lsp version" says what the build
// recorded (the module version and VCS revision when there are any, the Go
// toolchain always) and, for a build that recorded neither, how to get them.
func TestVersionNamesTheBuild(t *testing.T) {
	r := runBinary(t, testEnv(t), "", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "kimi-lsp ") {
		t.Fatalf("kimi-lsp version: exit %d, stdout %q", r.code, r.stdout)
	}
	bi, err := buildinfo.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	var revision string
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			revision = s.Value
		}
	}
	if !strings.Contains(r.stdout, bi.GoVersion) {
		t.Errorf("version %q does not name the toolchain %q", r.stdout, bi.GoVersion)
	}
	switch {
	case bi.Main.Version != "(devel)" && !strings.HasPrefix(r.stdout, "kimi-lsp "+bi.Main.Version):
		t.Errorf("version %q does not start with the module version %q", r.stdout, bi.Main.Version)
	case revision != "" && !strings.Contains(r.stdout, revision[:12]):
		t.Errorf("version %q does not name the revision %q", r.stdout, revision)
	case bi.Main.Version == "(devel)" && revision == "" && !strings.Contains(r.stdout, "-buildvcs"):
		t.Errorf("version %q does not say why it knows no version", r.stdout)
	}
}

func TestDescribeBuild(t *testing.T) {
	vcs := []debug.BuildSetting{{Key: "vcs.revision", Value: "0e08bdbd2d07ed46ba8b960327f6b563b5e589f7"}, {Key: "vcs.time", Value: "2026-12-01T11:19:08Z"}}
	dirty := append(vcs[:2:2], debug.BuildSetting{Key: "vcs.modified", Value: "true"})
	for _, tc := range []struct {
		main     string
		settings []debug.BuildSetting
		short    string
		long     string
	}{
		{"v1.2.3", nil, "v1.2.3", "v1.2.3 (go1.26.8)"},
		{"v0.0.0-20261201111908-0e08bdbd2d07", vcs, "v0.0.0-20261201111908-0e08bdbd2d07 (0e08bdbd2d07)",
			"v0.0.0-20261201111908-0e08bdbd2d07 (0e08bdbd2d07 of 2026-12-01T11:19:08Z, go1.26.8)"},
		{"(devel)", dirty, "devel (0e08bdbd2d07+dirty)", "devel (0e08bdbd2d07+dirty of 2026-12-01T11:19:08Z, go1.26.8)"},
		{"(devel)", nil, "devel", "devel (go1.26.8)\nThis build recorded neither"},
	} {
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: tc.main}, Settings: tc.settings}
		if got := describeBuild(bi, false); got != tc.short {
			t.Errorf("describeBuild(%s, short) = %q, want %q", tc.main, got, tc.short)
		}
		if got := describeBuild(bi, true); !strings.HasPrefix(got, tc.long) {
			t.Errorf("describeBuild(%s, long) = %q, want it to start with %q", tc.main, got, tc.long)
		}
	}
}

// TestPromptNamesTheLanguages: the project block of the prompt names the
// workspace's languages; a Go module says go, not "".
func TestPromptNamesTheLanguages(t *testing.T) {
	dir := goModule(t)
	srv := modeltest.NewServer(modeltest.Config{})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	if r := runBinary(t, env, dir, "explain", "calc.go:3-5"); r.code != 0 {
		t.Fatalf("explain: exit %d, stderr %q", r.code, r.stderr)
	}
	body := string(srv.Requests()[0].Body)
	if !strings.Contains(body, `languages=\"go\"`) {
		i := strings.Index(body, "<project")
		t.Errorf("the prompt's project block does not say languages=\"go\": %.120s", body[max(i, 0):])
	}
}
