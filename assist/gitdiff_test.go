package assist_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/gittest"
)

const trapCalc = "package m\n\nfunc Sub(a, b int) int {\n\treturn a - b\n}\n"

// TestChangedFilesRunsNoRepositoryProgram (#30.4): a review of changes in
// a repository whose .git/config or .gitattributes names a program for git
// to run (core.fsmonitor, a textconv driver, a clean/smudge filter, a
// process filter, every hook, diff.external, a pager, a partial clone's
// promisor remote reached through ext:: or core.sshCommand) runs none of
// them, and still finds the changed file with its diff (or, its HEAD blob
// missing in the partial clone, says so). With git diff (before #30.4)
// the fsmonitor, textconv, filter and promisor-remote programs ran.
func TestChangedFilesRunsNoRepositoryProgram(t *testing.T) {
	for _, trap := range gittest.Traps {
		t.Run(trap, func(t *testing.T) {
			gittest.Hermetic(t)
			dir, _ := filepath.EvalSymlinks(t.TempDir())
			marks := t.TempDir()
			gittest.Repo(t, dir, map[string]string{"calc.go": trapCalc, "other.go": "package m\n"}, "")
			gittest.Arm(t, dir, trap, marks)
			os.WriteFile(filepath.Join(dir, "calc.go"), []byte(strings.Replace(trapCalc, "a - b", "a + b", 1)), 0o644)
			files, skipped, err := assist.ChangedFiles(context.Background(), nil, dir)
			if ran := gittest.Ran(marks); ran != "" {
				t.Fatalf("the repository's program ran:\n%s", ran)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !gittest.Diffable(trap) {
				if len(files) != 0 || len(skipped) != 1 || skipped[0] != "calc.go (HEAD's copy could not be read)" {
					t.Fatalf("files %+v, skipped %v", files, skipped)
				}
				return
			}
			if len(files) != 1 || files[0].Path != filepath.Join(dir, "calc.go") || !strings.Contains(files[0].Diff, "-\treturn a - b\n+\treturn a + b\n") ||
				len(skipped) != 0 || files[0].Lines[0] != [2]int{4, 4} {
				t.Fatalf("files %+v, skipped %v", files, skipped)
			}
		})
	}
}

// TestChangedFilesSHA256: a repository of sha256 objects is read as well
// (blob ids of 64 hex digits).
func TestChangedFilesSHA256(t *testing.T) {
	gittest.Hermetic(t)
	gittest.Need(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	probe := t.TempDir()
	if err := runIn(probe, "git", "init", "-q", "--object-format=sha256"); err != nil {
		t.Skipf("git cannot make a sha256 repository here: %v", err)
	}
	gittest.Repo(t, dir, map[string]string{"calc.go": trapCalc, "same.go": "package m\n"}, "sha256")
	os.WriteFile(filepath.Join(dir, "calc.go"), []byte(strings.Replace(trapCalc, "a - b", "a + b", 1)), 0o644)
	files, skipped, err := assist.ChangedFiles(context.Background(), nil, dir)
	if err != nil || len(files) != 1 || len(skipped) != 0 || !strings.Contains(files[0].Diff, "+\treturn a + b") {
		t.Fatalf("files %+v, skipped %v, %v", files, skipped, err)
	}
}

// TestChangedFilesKinds: untracked files are not reviewed (git diff HEAD
// never showed them), deletions and unchanged files are not listed, a
// file whose checkout only wrote CRLF line ends is unchanged, a changed
// binary file, link or over-size file is left out with the reason, and
// the listed file's Text is what its diff was made from. A folder below
// the work tree lists only its own files.
func TestChangedFilesKinds(t *testing.T) {
	gittest.Hermetic(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	big := strings.Repeat("x\n", 600<<10)
	gittest.Repo(t, dir, map[string]string{"calc.go": trapCalc, "gone.go": "package m\n", "crlf.txt": "a\nb\n",
		"bin.dat": "a\x00b", "big.txt": "small\n", "sub/in.go": "package sub\n", "link": "target"}, "")
	os.Remove(filepath.Join(dir, "link"))
	if err := os.Symlink("calc.go", filepath.Join(dir, "link")); err != nil {
		t.Skip(err)
	}
	os.WriteFile(filepath.Join(dir, "calc.go"), []byte(strings.Replace(trapCalc, "a - b", "a + b", 1)), 0o644)
	os.Remove(filepath.Join(dir, "gone.go"))
	os.WriteFile(filepath.Join(dir, "crlf.txt"), []byte("a\r\nb\r\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "bin.dat"), []byte("a\x00c"), 0o644)
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(big), 0o644)
	os.WriteFile(filepath.Join(dir, "new.go"), []byte("package m\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub/in.go"), []byte("package sub\n\nvar X = 1\n"), 0o644)
	files, skipped, err := assist.ChangedFiles(context.Background(), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 || files[0].Path != filepath.Join(dir, "calc.go") || files[1].Path != filepath.Join(dir, "sub", "in.go") ||
		files[0].Text != strings.Replace(trapCalc, "a - b", "a + b", 1) {
		t.Fatalf("files %+v", files)
	}
	want := []string{"big.txt (1.2 MiB, over the size cap of 1.0 MiB: raise context.maxFileSize to review it)", "link (now a symbolic link: not reviewed)", "bin.dat (binary)"}
	if strings.Join(skipped, "\n") != strings.Join(want, "\n") {
		t.Fatalf("skipped\n%s\nwant\n%s", strings.Join(skipped, "\n"), strings.Join(want, "\n"))
	}
	files, skipped, err = assist.ChangedFiles(context.Background(), nil, filepath.Join(dir, "sub"))
	if err != nil || len(files) != 1 || files[0].Path != filepath.Join(dir, "sub", "in.go") || len(skipped) != 0 {
		t.Fatalf("in sub: files %+v, skipped %v, %v", files, skipped, err)
	}
}

func runIn(dir, name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	return cmd.Run()
}

// TestChangedFilesForeignWorkTree (#30.4): a repository whose
// core.worktree names another directory (a home directory, say) is not
// read: its files there are neither hashed nor diffed nor sent.
func TestChangedFilesForeignWorkTree(t *testing.T) {
	gittest.Hermetic(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	other, _ := filepath.EvalSymlinks(t.TempDir())
	gittest.Repo(t, dir, map[string]string{"notes.txt": "old\n"}, "")
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("private text elsewhere\n"), 0o644)
	gittest.Git(t, dir, "config", "core.worktree", other)
	files, _, err := assist.ChangedFiles(context.Background(), nil, dir)
	if !errors.Is(err, assist.ErrNotGit) || !strings.Contains(err.Error(), "core.worktree") || len(files) != 0 {
		t.Fatalf("files %+v, %v", files, err)
	}
}

// TestChangedFilesSubmodules: a submodule at the commit HEAD records, or
// not checked out (an empty directory), is not changed; one at another
// commit is left out with the reason.
func TestChangedFilesSubmodules(t *testing.T) {
	gittest.Hermetic(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for _, s := range []string{"same", "moved", "empty"} {
		os.MkdirAll(filepath.Join(dir, s), 0o755)
		gittest.Repo(t, filepath.Join(dir, s), map[string]string{"s.txt": "one\n"}, "")
	}
	gittest.Repo(t, dir, map[string]string{"calc.go": trapCalc}, "")
	os.WriteFile(filepath.Join(dir, "moved", "s.txt"), []byte("two\n"), 0o644)
	gittest.Git(t, filepath.Join(dir, "moved"), "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-am", "next")
	os.RemoveAll(filepath.Join(dir, "empty"))
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	files, skipped, err := assist.ChangedFiles(context.Background(), nil, dir)
	if err != nil || len(files) != 0 || strings.Join(skipped, "|") != "moved (a submodule: review it in its own folder)" {
		t.Fatalf("files %+v, skipped %v, %v", files, skipped, err)
	}
}
