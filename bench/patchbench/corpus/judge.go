package corpus

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/patch/patchtest"
)

// Verdict is how an applier did on a case.
type Verdict string

const (
	// Correct: the files are exactly as expected (applied for APPLY,
	// untouched for REFUSE).
	Correct Verdict = "correct"
	// Wrong: files changed but not as expected; a partial application is
	// wrong, and so is any change for a REFUSE case.
	Wrong Verdict = "wrong"
	// Refused: nothing changed where an APPLY was expected.
	Refused Verdict = "refused"
)

// GOROOT returns the Go root of the go command on PATH.
func GOROOT() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// Materialize writes a case's files into dir.
func Materialize(c Case, dir string) error {
	for _, f := range c.Before {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(f.Text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Snapshot reads every regular file under dir, sorted by path.
func Snapshot(dir string) ([]File, error) {
	var out []File
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out = append(out, File{filepath.ToSlash(rel), string(b)})
		return nil
	})
	sortFiles(out)
	return out, err
}

func sortFiles(fs []File) { sort.Slice(fs, func(i, j int) bool { return fs[i].Path < fs[j].Path }) }

func same(a, b []File) bool {
	a, b = append([]File(nil), a...), append([]File(nil), b...)
	sortFiles(a)
	sortFiles(b)
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Judge compares the files after a run with the case's expectation.
func Judge(c Case, got []File) Verdict {
	if c.Expect == Apply && same(got, c.After) {
		return Correct
	}
	if same(got, c.Before) {
		if c.Expect == Refuse {
			return Correct
		}
		return Refused
	}
	return Wrong
}

// RunOurs runs this repository's applier on a case in a fresh directory
// under tmp and judges the result. The error, if any, is the applier's
// refusal (nil when it applied).
func RunOurs(c Case, tmp string) (Verdict, error, error) {
	dir, err := os.MkdirTemp(tmp, "ours")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(dir)
	if err := Materialize(c, dir); err != nil {
		return "", nil, err
	}
	d, err := patchtest.NewDir(dir)
	if err != nil {
		return "", nil, err
	}
	changes, aerr := patch.Apply(d, c.Diff, patch.Options{})
	if aerr == nil {
		if err := d.Write(changes); err != nil {
			return "", nil, err
		}
	}
	got, err := Snapshot(dir)
	if err != nil {
		return "", nil, err
	}
	return Judge(c, got), aerr, nil
}
