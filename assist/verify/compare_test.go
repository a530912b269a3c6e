package verify

import (
	"context"
	"slices"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

func diag(line uint32, msg string) wireDiagnostic {
	return wireDiagnostic{Range: wireRange{Start: wirePosition{Line: line}}, Severity: severityError, Message: msg}
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		name          string
		before, after string
		old, now      []wireDiagnostic
		want          []string
	}{
		{"unchanged error", "a\nb\n", "a\nb\n", []wireDiagnostic{diag(1, "e")}, []wireDiagnostic{diag(1, "e")}, nil},
		{"moved down by an insertion above", "a\nb\n", "x\ny\na\nb\n", []wireDiagnostic{diag(1, "e")}, []wireDiagnostic{diag(3, "e")}, nil},
		{"same message on another line is new", "a\nb\nc\n", "a\nb\nc\n", []wireDiagnostic{diag(0, "e")}, []wireDiagnostic{diag(0, "e"), diag(2, "e")}, []string{"e@2"}},
		{"a different message is new", "a\n", "a\n", []wireDiagnostic{diag(0, "e")}, []wireDiagnostic{diag(0, "f")}, []string{"f@0"}},
		{"error on a rewritten line keeps its message", "a\nb\nc\n", "a\nB1\nB2\nc\n", []wireDiagnostic{diag(1, "e")}, []wireDiagnostic{diag(2, "e")}, nil},
		{"warnings never count", "a\n", "a\n", nil, []wireDiagnostic{{Severity: 2, Message: "w"}}, nil},
		{"no severity counts as an error", "a\n", "a\n", nil, []wireDiagnostic{{Message: "s"}}, []string{"s@0"}},
		{"each old error matches once", "a\n", "a\n", []wireDiagnostic{diag(0, "e")}, []wireDiagnostic{diag(0, "e"), diag(0, "e")}, []string{"e@0"}},
		{"deleted line: its error may stay on the line before", "a\nb\nc\n", "a\nc\n", []wireDiagnostic{diag(1, "e")}, []wireDiagnostic{diag(0, "e")}, nil},
		{"fixed error, nothing new", "a\nb\n", "a\nB\n", []wireDiagnostic{diag(1, "e")}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, d := range newErrors(tc.before, tc.after, tc.old, tc.now) {
				got = append(got, d.Message+"@"+string(rune('0'+d.Range.Start.Line)))
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMapLinesPastTheEnd(t *testing.T) {
	m := mapLines("a\nb\n", "z\na\nb\n")
	if lo, hi := m.at(5); lo != 6 || hi != 7 {
		t.Errorf("line 5 of a 3-line text grown by one: got [%d,%d), want [6,7)", lo, hi)
	}
}

// TestCheckPythonImportOfCreatedModule: pyright resolves imports from the
// disk only, so an edit that creates c.py (and pkg/d.py) and imports them
// from b.py got "Import "c" could not be resolved"; it is not the edit's
// error. An import of a module nothing provides still is.
func TestCheckPythonImportOfCreatedModule(t *testing.T) {
	needPyright(t)
	dir := t.TempDir()
	write(t, dir, "b.py", "x = 1\n")
	write(t, dir, "pkg/__init__.py", "")
	v := newVerifier(t, dir, Options{})
	b, c, d := uriOf(dir, "b.py"), uriOf(dir, "c.py"), uriOf(dir, "pkg/d.py")
	after := "from c import foo\nfrom pkg.d import bar\nimport pkg.d\nfrom missing import z\n\nx = foo() + bar()\n"
	r := v.Check(context.Background(), []File{{b, "x = 1\n"}},
		[]File{{b, after}, {c, "def foo() -> int:\n    return 1\n"}, {d, "def bar() -> int:\n    return 2\n"}})
	if !r.Verified {
		t.Fatalf("not verified: %+v", r)
	}
	var got []string
	for _, e := range r.NewErrors {
		got = append(got, e.String())
	}
	if len(got) != 1 || got[0] != `b.py:4: Import "missing" could not be resolved` {
		t.Errorf("new errors %q, want only the import of the missing module", got)
	}
}

func TestImportOfCreated(t *testing.T) {
	from := workspace.FileURI("/w/app/b.py")
	created := []string{"/w/app/c.py", "/w/pkg/d/__init__.py", "/w/src/lib/e.pyi", "/w/app/sub/f.py"}
	roots := []string{"/w"}
	for msg, want := range map[string]bool{
		`Import "c" could not be resolved`:       true,
		`Import "pkg.d" could not be resolved`:   true,
		`Import "lib.e" could not be resolved`:   true,
		`Import ".c" could not be resolved`:      true,
		`Import ".sub.f" could not be resolved`:  true,
		`Import "..c" could not be resolved`:     false, // /w/c.py
		`Import "missing" could not be resolved`: false,
		`Import "." could not be resolved`:       false,
		`"c" is not defined`:                     false,
		`Import "a b" could not be resolved`:     false,
	} {
		if got := importOfCreated(msg, from, created, roots); got != want {
			t.Errorf("%s: %v, want %v", msg, got, want)
		}
	}
	if importOfCreated(`Import "c" could not be resolved`, from, nil, roots) {
		t.Error("nothing created: an import error stays")
	}
}
