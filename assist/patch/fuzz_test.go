package patch_test

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/patch/patchtest"
)

// memFiles is an in-memory patch.Files for fuzzing, where a temporary
// directory per input would be too slow. It confines paths lexically.
type memFiles map[string]string

func (m memFiles) Resolve(name string) (string, error) {
	p := path.Clean("/ws/" + name)
	if path.IsAbs(name) || !strings.HasPrefix(p, "/ws/") || strings.Contains(p, "/.git/") {
		return "", patch.ErrOutside
	}
	return p, nil
}

func (m memFiles) Read(p string) (string, int32, error) {
	t, ok := m[p]
	if !ok {
		return "", patch.NoVersion, fs.ErrNotExist
	}
	return t, 7, nil
}

func seeds(f *testing.F) {
	f.Add(goFile, clean)
	f.Add(goFile, strings.ReplaceAll(clean, "\t", "    "))
	f.Add(goFile, "```diff\n--- a/demo.go\n+++ b/demo.go\n@@\n \ttotal := 0\n\t\tif x {\n+\t\t\tcontinue\n```\n")
	f.Add(strings.ReplaceAll(goFile, "\n", "\r\n"), clean)
	f.Add("\ufeffa\nb", "--- a/demo.go\n+++ b/demo.go\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n\\ No newline at end of file\n")
	f.Add("", "--- /dev/null\n+++ b/demo.go\n@@ -0,0 +1 @@\n+package x\n")
	f.Add("x\n", "diff --git a/demo.go b/new.go\nrename from demo.go\nrename to new.go\n")
	f.Add("{\n}\n{\n}\n", "--- demo.go\n+++ demo.go\n@@\n {\n+x\n }\n")
}

// FuzzParse checks that the parser never panics and that what it returns
// is well formed.
func FuzzParse(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, _ string, diff string) {
		fds, err := patch.Parse(diff, "demo.go")
		if err != nil {
			if fds != nil {
				t.Fatal("error with results")
			}
			return
		}
		for _, fd := range fds {
			for _, h := range fd.Hunks {
				if len(h.Lines) == 0 {
					t.Fatal("empty hunk")
				}
				for _, l := range h.Lines {
					if l.Kind > patch.Unmarked || strings.Contains(l.Text, "\n") {
						t.Fatalf("bad line %+v", l)
					}
				}
			}
		}
	})
}

// FuzzApply checks that applying never panics, never returns changes with
// an error, keeps the BOM and final-newline state of edited files, and that
// an edit of a second file failing leaves the first untouched.
func FuzzApply(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, before, diff string) {
		files := memFiles{"/ws/demo.go": before, "/ws/other.txt": "one\ntwo\n"}
		changes, err := patch.Apply(files, diff, patch.Options{AllowBrokenGo: true})
		if err != nil {
			if changes != nil {
				t.Fatal("changes returned with an error")
			}
			var r *patch.Refusal
			if !errors.As(err, &r) || len(r.Problems) == 0 {
				t.Fatalf("error is not a refusal with problems: %v", err)
			}
			_ = patch.Feedback(err)
		}
		for _, c := range changes {
			if c.Kind != patch.ModifyFile || c.Before == "" || c.After == "" {
				continue
			}
			if strings.HasPrefix(c.Before, "\ufeff") != strings.HasPrefix(c.After, "\ufeff") {
				t.Fatalf("BOM not kept: %q -> %q", c.Before, c.After)
			}
			if strings.HasSuffix(c.Before, "\n") != strings.HasSuffix(c.After, "\n") {
				t.Fatalf("final newline not kept: %q -> %q", c.Before, c.After)
			}
			got, err := patch.ApplyEdits(c.Before, patch.LineEdits(c.Before, c.After))
			if err != nil || got != c.After {
				t.Fatalf("line edits do not reproduce the change")
			}
		}
		// All or nothing across files: add a failing hunk for another file
		// (outside fences, where the parser would not look).
		if strings.Contains(diff, "``") || strings.Contains(diff, "~~~") {
			return
		}
		bad := "--- a/other.txt\n+++ b/other.txt\n@@\n-no such line\n+x\n" + diff
		if ch, err := patch.Apply(files, bad, patch.Options{AllowBrokenGo: true}); err == nil || ch != nil {
			t.Fatalf("a diff with a failing file applied: %v", ch)
		}
	})
}

// FuzzAmbiguous checks that a hunk whose old lines occur twice in the file
// is applied only where its header's line names one of the places where
// they occur (whitespace set aside), within 3 lines, while every other
// lies 20 lines or more away (issue 33 item 22) — and then exactly there —
// whichever of its lines are context or removed; otherwise it is refused.
func FuzzAmbiguous(f *testing.F) {
	f.Add("\ttotal := 0\n\tfor _, x := range xs {\n", "package demo\n", "\n// other\n", "}\n", uint16(2), uint64(1))
	f.Add("x\n", "", "", "", uint16(1), uint64(0))
	f.Add("    return data\n", "def load():\n", "\ndef save():\n", "", uint16(0), uint64(3))
	f.Add("a\n\nb\n", "a\n", "\n", "\n", uint16(7), uint64(6))
	f.Add("\ttotal := 0\n\tfor _, x := range xs {\n", "package demo\n", strings.Repeat("// gap\n", 30), "}\n", uint16(2), uint64(1))
	f.Add("\ttotal := 0\n\tfor _, x := range xs {\n", "package demo\n", strings.Repeat("// gap\n", 30), "}\n", uint16(35), uint64(2))
	f.Fuzz(func(t *testing.T, block, pre, mid, post string, hint uint16, pattern uint64) {
		if block == "" || strings.ContainsAny(block, "\r") || !strings.HasSuffix(block, "\n") {
			return
		}
		for _, s := range []string{pre, mid} {
			if s != "" && !strings.HasSuffix(s, "\n") {
				return
			}
		}
		text := pre + block + mid + block + post
		blines := strings.Split(strings.TrimSuffix(block, "\n"), "\n")
		var diff, repl strings.Builder
		fmt.Fprintf(&diff, "--- a/demo.go\n+++ b/demo.go\n@@ -%d +%d @@\n", hint, hint)
		for i, l := range blines {
			bit := pattern >> (uint(i) % 64) & 1
			if bit == 1 {
				diff.WriteString("-" + l + "\n")
			} else {
				diff.WriteString(" " + l + "\n")
				repl.WriteString(l + "\n")
			}
			if i == 0 {
				diff.WriteString("+added by the edit\n")
				repl.WriteString("added by the edit\n")
			}
		}
		files := memFiles{"/ws/demo.go": text}
		ch, err := patch.Apply(files, diff.String(), patch.Options{AllowBrokenGo: true})
		if err != nil {
			return
		}
		// Where the block's lines occur, whitespace set aside, and which
		// of those the header names.
		tl := strings.SplitAfter(text, "\n")
		named, others := -1, 0
		for s := 0; s+len(blines) <= len(tl); s++ {
			same := true
			for i, l := range blines {
				same = same && strings.TrimSpace(tl[s+i]) == strings.TrimSpace(l)
			}
			if !same {
				continue
			}
			switch d := s - (int(hint) - 1); {
			case d >= -3 && d <= 3 && named < 0:
				named = s
			case d > -20 && d < 20:
				others++
			}
		}
		if hint == 0 || named < 0 || others > 0 {
			t.Fatalf("a hunk whose old lines occur twice was applied without a header naming one far from the others:\n%s\n--- file\n%q\n--- after\n%q", diff.String(), text, ch[0].After)
		}
		want := strings.Join(tl[:named], "") + repl.String() + strings.Join(tl[named+len(blines):], "")
		if ch[0].After != want {
			t.Fatalf("applied elsewhere than at the line its header names (%d):\n%s\n--- file\n%q\n--- after\n%q\n--- want\n%q", named+1, diff.String(), text, ch[0].After, want)
		}
	})
}

// FuzzUnifiedWellFormed checks that the diff kimi-lsp edit prints for an
// applied edit (Unified of each change, named as cmd/kimi-lsp names them)
// is read by go-diff with counts that match the bodies (patchtest.WellFormed,
// the test oracle that was a production cross-check until issue 31). Its
// arguments are FuzzApply's, so FuzzApply's corpus seeds it too.
func FuzzUnifiedWellFormed(f *testing.F) {
	seeds(f)
	f.Fuzz(func(t *testing.T, before, diff string) {
		files := memFiles{"/ws/demo.go": before, "/ws/other.txt": "one\ntwo\n"}
		changes, err := patch.Apply(files, diff, patch.Options{AllowBrokenGo: true})
		if err != nil {
			return
		}
		var out strings.Builder
		for _, c := range changes {
			oldName, newName := "a"+c.Path, "b"+c.Path
			switch c.Kind {
			case patch.CreateFile:
				oldName = patch.DevNull
			case patch.DeleteFile:
				newName = patch.DevNull
			case patch.RenameFile:
				oldName = "a" + c.OldPath
			}
			d := patch.Unified(oldName, newName, c.Before, c.After, 3)
			if d == "" && c.Kind == patch.RenameFile {
				d = "--- " + oldName + "\n+++ " + newName + "\n"
			}
			out.WriteString(d)
		}
		if _, _, err := patchtest.WellFormed(out.String()); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
	})
}
