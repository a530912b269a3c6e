package workspace

import (
	"errors"
	"testing"
)

// TestParseURI holds the URI cases go.lsp.dev/uri gets wrong
// (docs/protocol-pitfalls.md, "go.lsp.dev/uri"): an escaped space is the
// same file as a plain one, non-file schemes stay values whose Path is an
// error (never a panic, never a file under the working directory), and
// malformed input is an error.
func TestParseURI(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		wantErr  bool
	}{
		{in: "file:///a%20b/c.go", want: "file:///a%20b/c.go"},
		{in: "file:///a b/c.go", want: "file:///a%20b/c.go"},
		{in: "file:///a/./b/../c.go", want: "file:///a/c.go"},
		{in: "file://localhost/a/c.go", want: "file:///a/c.go"},
		{in: "FILE:///a/c.go", want: "file:///a/c.go"},
		{in: "untitled:Untitled-1", want: "untitled:Untitled-1"},
		{in: "Untitled:x", want: "untitled:x"},
		{in: "vscode-notebook-cell:/a.ipynb#W0", want: "vscode-notebook-cell:/a.ipynb#W0"},
		{in: "", wantErr: true},
		{in: "no-scheme", wantErr: true},
		{in: ":x", wantErr: true},
		{in: "fi le:///x", wantErr: true},
		{in: "file://remote/x", wantErr: true},
		{in: "file:", wantErr: true},
		{in: "file:%zz", wantErr: true},
	} {
		got, err := ParseURI(tc.in)
		if tc.wantErr {
			if err == nil {
				t.Errorf("ParseURI(%q) = %q, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("ParseURI(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	if p, err := URI("file:///a%20b/c.go").Path(); err != nil || p != "/a b/c.go" {
		t.Errorf("Path of an escaped file URI = %q, %v; want /a b/c.go", p, err)
	}
	for _, u := range []URI{"untitled:x", "vscode-notebook-cell:/a.ipynb#W0"} {
		if p, err := u.Path(); !errors.Is(err, ErrNotFile) {
			t.Errorf("%s.Path() = %q, %v; want ErrNotFile", u, p, err)
		}
	}
}
