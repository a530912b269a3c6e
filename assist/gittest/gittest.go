// Package gittest makes git repositories for tests: plain ones, and
// hostile ones whose configuration or attributes name a program for git to
// run (a trap), each of which leaves a marker file when it runs. It is for
// tests only and runs git with the test's environment; Hermetic points
// HOME and the XDG directories at temporary ones first.
package gittest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Hermetic gives the test (and every git it runs, the code under test's
// included) an empty HOME and XDG directories and no system configuration,
// so that no configuration of the machine's is read or written. It calls
// t.Setenv: the test may not be parallel.
func Hermetic(t testing.TB) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".state"))
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

// Need skips the test when git is not installed.
func Need(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

// Git runs git in dir and fails the test on an error.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Repo writes files into dir (names slash-separated) and commits them as
// HEAD of a new repository; format is the object format ("" for git's
// default, "sha256").
func Repo(t testing.TB, dir string, files map[string]string, format string) {
	t.Helper()
	Need(t)
	write(t, dir, files)
	init := []string{"init", "-q"}
	if format != "" {
		init = append(init, "--object-format="+format)
	}
	Git(t, dir, init...)
	Git(t, dir, "add", ".")
	Git(t, dir, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base")
}

func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Traps are the hostile settings Arm knows, one a repository.
var Traps = []string{"fsmonitor", "textconv", "filter-clean", "filter-process", "hooks", "diff.external", "pager",
	"lazyfetch-ext", "lazyfetch-ssh"}

// hooks are the names of every hook git knows (githooks(5)).
var hooks = []string{"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit", "pre-merge-commit",
	"prepare-commit-msg", "commit-msg", "post-commit", "pre-rebase", "post-checkout", "post-merge", "pre-push",
	"pre-receive", "update", "proc-receive", "post-receive", "post-update", "reference-transaction",
	"push-to-checkout", "pre-auto-gc", "post-rewrite", "sendemail-validate", "fsmonitor-watchman",
	"p4-changelist", "p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit", "post-index-change"}

// Arm sets trap in the committed repository at dir (after Repo: arming
// before the commit would run the programs then). Its programs live in
// marks, outside the repository, and append to Marker(marks) when they
// run; a textconv or filter program passes the text through unchanged. A
// lazyfetch trap removes HEAD's blobs: their files cannot be diffed (the
// review leaves them out), and nothing may be fetched to read them.
func Arm(t testing.TB, dir, trap, marks string) {
	t.Helper()
	marker := Marker(marks)
	mark := filepath.Join(marks, "mark.sh")
	conv := filepath.Join(marks, "conv.sh")
	scripts := map[string]string{
		mark: "#!/bin/sh\necho \"" + trap + " $0 $*\" >> '" + marker + "'\nexit 0\n",
		conv: "#!/bin/sh\necho \"" + trap + " $0 $*\" >> '" + marker + "'\nif [ $# -gt 0 ] && [ -f \"$1\" ]; then cat \"$1\"; else cat; fi\n",
	}
	for p, text := range scripts {
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := func(kv ...string) {
		for i := 0; i < len(kv); i += 2 {
			Git(t, dir, "config", kv[i], kv[i+1])
		}
	}
	attrs := func(line string) { write(t, dir, map[string]string{".gitattributes": line + "\n"}) }
	switch trap {
	case "fsmonitor":
		cfg("core.fsmonitor", mark)
	case "textconv":
		cfg("diff.x.textconv", conv)
		attrs("* diff=x")
	case "filter-clean":
		cfg("filter.x.clean", conv, "filter.x.smudge", conv)
		attrs("* filter=x")
	case "filter-process":
		cfg("filter.x.process", mark, "filter.x.clean", conv, "filter.x.smudge", conv)
		attrs("* filter=x")
	case "hooks":
		hdir := filepath.Join(dir, ".git", "hooks")
		os.MkdirAll(hdir, 0o755)
		for _, h := range hooks {
			if err := os.WriteFile(filepath.Join(hdir, h), []byte(scripts[mark]), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	case "diff.external":
		cfg("diff.external", conv)
	case "pager":
		cfg("core.pager", mark, "pager.diff", mark, "pager.ls-tree", mark, "pager.cat-file", mark, "pager.rev-parse", mark)
	case "lazyfetch-ext", "lazyfetch-ssh":
		// A partial clone whose HEAD blobs are missing: reading one makes
		// git fetch it from the promisor remote, whose URL runs a program
		// (ext::, or ssh through core.sshCommand) on a protocol the
		// repository allows itself.
		url, proto := "ext::"+mark+" %S", "ext"
		if trap == "lazyfetch-ssh" {
			url, proto = "ssh://example.invalid/r.git", "ssh"
			cfg("core.sshCommand", mark)
		}
		cfg("core.repositoryformatversion", "1", "extensions.partialClone", "evil", "remote.evil.url", url,
			"remote.evil.promisor", "true", "protocol."+proto+".allow", "always", "protocol.allow", "always",
			"credential.helper", mark, "core.alternateRefsCommand", mark)
		for _, name := range strings.Fields(Git(t, dir, "ls-tree", "-r", "--format=%(objectname)", "HEAD")) {
			os.Remove(filepath.Join(dir, ".git", "objects", name[:2], name[2:]))
		}
	default:
		t.Fatalf("gittest: no trap %q", trap)
	}
}

// Diffable reports whether a changed file of a repository armed with trap
// can be diffed: not in a lazyfetch one, whose HEAD blobs are gone.
func Diffable(trap string) bool { return !strings.HasPrefix(trap, "lazyfetch") }

// Marker is the file the programs of Arm(…, marks) write to.
func Marker(marks string) string { return filepath.Join(marks, "ran") }

// Ran returns what the trap's programs wrote ("" when none ran).
func Ran(marks string) string {
	b, _ := os.ReadFile(Marker(marks))
	return string(b)
}
