package assist_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestLanderOnDisk: the command line's landing (Lander.Disk) puts each
// change on the file as it is on disk when the plan is made: as computed,
// on top of a change made since apart from the edit, or refused when that
// change touches the edited lines; the stamp it keeps makes the writer
// refuse a file changed after the plan.
func TestLanderOnDisk(t *testing.T) {
	const before = "package calc\n\nfunc Add(a, b int) int {\n\treturn a + b\n}\n"
	after := strings.Replace(before, "a + b", "a - b", 1)
	tests := []struct {
		name, disk string
		kind       assist.LandingKind
		want       string // the text planned; "" when refused
		err        string
	}{
		{name: "unchanged", disk: before, kind: assist.LandApplied, want: after},
		{name: "changed apart", disk: before + "\n// Added by the user.\n", kind: assist.LandOnTop, want: after + "\n// Added by the user.\n"},
		{name: "changed on the edited line", disk: strings.Replace(before, "a + b", "b + a", 1), err: "calc.go changed on disk while the model ran"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "calc.go")
			if err := os.WriteFile(file, []byte(tc.disk), 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := workspace.NewWriter(dir, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			real, _ := filepath.EvalSymlinks(file)
			l := &assist.Lander{Disk: w}
			plan, err := l.Plan(context.Background(), []patch.FileChange{{Path: real, Kind: patch.ModifyFile, Before: before, After: after, Version: patch.NoVersion}}, "", nil)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("got %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer plan.End()
			sum := plan.Summary()
			if len(plan.Files) != 1 || sum.Kind != tc.kind {
				t.Fatalf("files %d, summary %+v; want one file, kind %d", len(plan.Files), sum, tc.kind)
			}
			if tc.kind == assist.LandOnTop && (len(sum.Rebased) != 1 || sum.Rebased[0] != "calc.go") {
				t.Errorf("rebased %q, want [calc.go]", sum.Rebased)
			}
			f := plan.Files[0]
			text, err := f.NewText()
			if err != nil || text != tc.want {
				t.Fatalf("planned %q (%v), want %q", text, err, tc.want)
			}
			// A change after the plan: the stamp makes the write refuse.
			if err := os.WriteFile(file, []byte(tc.disk+"// later\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			tx := w.Begin()
			defer tx.Abort()
			err = tx.Replace(real, f.Stamp, []byte(text))
			if err == nil {
				err = tx.Commit()
			}
			if err == nil {
				t.Fatal("a file changed after the plan was overwritten")
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	other := errors.New("boom")
	tests := []struct {
		out    *assist.Outcome
		err    error
		kind   assist.LandingKind
		reason string
	}{
		{&assist.Outcome{}, nil, assist.LandApplied, ""},
		{&assist.Outcome{Text: "  The code is already correct.\n"}, assist.ErrNoChange, assist.LandNoChange, "The code is already correct."},
		{&assist.Outcome{Text: " \n"}, assist.ErrNoChange, assist.LandRefused, ""},
		{nil, assist.ErrNoChange, assist.LandRefused, ""},
		{&assist.Outcome{Text: "answer"}, other, assist.LandRefused, ""},
	}
	for i, tc := range tests {
		got := assist.Summarize(tc.out, tc.err)
		if got.Kind != tc.kind || got.Reason != tc.reason {
			t.Errorf("%d: got %+v, want kind %d reason %q", i, got, tc.kind, tc.reason)
		}
		if tc.err != nil && !errors.Is(got.Err, tc.err) {
			t.Errorf("%d: Err %v, want %v", i, got.Err, tc.err)
		}
	}
}
