package assist_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/gittest"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// changesRecorder is a ChangesSink that keeps what a review of changes
// delivered.
type changesRecorder struct {
	recorder
	mu          sync.Mutex
	reviewed    map[string][]assist.Finding
	notReviewed []string
}

func (c *changesRecorder) Reviewed(d assist.FileDiff, out *assist.Outcome) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.reviewed == nil {
		c.reviewed = map[string][]assist.Finding{}
	}
	c.reviewed[filepath.Base(d.Path)] = out.Findings
}

func (c *changesRecorder) NotReviewed(reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notReviewed = append(c.notReviewed, reason)
}

// changesFixture is a git work tree with a.go and b.go changed (line 4
// of each), in a workspace with a nested folder and a folder outside git,
// and a stand-in that finds a problem on line 4 and one on line 1.
func changesFixture(t *testing.T) (dir, plain string, folders *workspace.Folders, cfg config.Config, srv *modeltest.Server) {
	gittest.Hermetic(t)
	gittest.Need(t)
	dir, _ = filepath.EvalSymlinks(t.TempDir())
	plain, _ = filepath.EvalSymlinks(t.TempDir())
	src := func(n string) string { return "package m\n\nfunc " + n + "() int {\n\treturn 1\n}\n" }
	gittest.Repo(t, dir, map[string]string{"go.mod": "module example.com/m\n", "a.go": src("A"), "sub/b.go": src("B")}, "")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte(strings.Replace(src("A"), "return 1", "return 2", 1)), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "b.go"), []byte(strings.Replace(src("B"), "return 1", "return 2", 1)), 0o644)
	os.WriteFile(filepath.Join(plain, "p.go"), []byte("package p\n"), 0o644)
	srv = modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Match: "careful senior reviewer",
		Content: `{"findings":[{"startLine":4,"endLine":4,"severity":"error","message":"returns 2","explanation":""},` +
			`{"startLine":1,"endLine":1,"severity":"hint","message":"unchanged line","explanation":""}]}`}}}})
	t.Cleanup(srv.Close)
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, _ = config.Default().WithEnv(func(k string) string { return env[k] })
	folders = workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{})
	t.Cleanup(func() { folders.Close() })
	for name, d := range map[string]string{"ws": dir, "sub": filepath.Join(dir, "sub"), "plain": plain} {
		if err := folders.Add(workspace.FileURI(d), name); err != nil {
			t.Fatal(err)
		}
	}
	folders.Ready(context.Background())
	return dir, plain, folders, cfg, srv
}

// TestReviewChangesOneLoop: the one review of changes reviews each changed
// file of every folder once (a nested folder's file is not reviewed
// again), keeps the findings on the changed lines, says why a folder
// outside git is not reviewed, and totals it all.
func TestReviewChangesOneLoop(t *testing.T) {
	dir, plain, folders, cfg, srv := changesFixture(t)
	engine, err := assist.NewEngine(assist.Options{Config: cfg, ExplanationDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	to := &changesRecorder{}
	dirs := []assist.ReviewDir{{Name: "ws", Path: dir}, {Name: "sub", Path: filepath.Join(dir, "sub")}, {Name: "plain", Path: plain}}
	tot, err := engine.ReviewChanges(context.Background(), assist.ChangesReview{Folders: folders, Dirs: dirs, Config: cfg, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want one per changed file", n)
	}
	for _, name := range []string{"a.go", "b.go"} {
		if f := to.reviewed[name]; len(f) != 1 || f[0].StartLine != 4 || f[0].Message != "returns 2" {
			t.Errorf("%s: findings %+v, want the one on the changed line", name, f)
		}
	}
	want := "folder plain (not a git work tree with a commit (git ls-tree HEAD failed))"
	if len(to.notReviewed) != 1 || to.notReviewed[0] != want {
		t.Errorf("not reviewed %q, want %q", to.notReviewed, want)
	}
	if tot.Listed != 2 || tot.Files != 2 || tot.Findings != 2 || tot.Failed != 1 || tot.NotSent != "" {
		t.Errorf("totals %+v", tot)
	}
	// The line-1 finding of each file is on no line the change affects:
	// left out, and counted (#33 item 14).
	if got := tot.Summary(); got != "2 findings in 2 changed files (2 left out: invalid, on lines the changes do not affect, or over review.maxFindings); not reviewed: "+want {
		t.Errorf("summary %q", got)
	}
	var reviewing int
	for _, s := range to.stats {
		if strings.HasPrefix(s, "reviewing ") {
			reviewing++
		}
	}
	if reviewing != 2 {
		t.Errorf("statuses %q, want one \"reviewing\" a file", to.stats)
	}
}

// TestReviewChangesStopsAtNotSent: the user is asked once for the whole
// review, and "Cancel" stops it there: nothing is sent, no file after it
// is asked about.
func TestReviewChangesStopsAtNotSent(t *testing.T) {
	dir, _, folders, cfg, srv := changesFixture(t)
	cfg.Budget.ConfirmAbove = 1e-9 // every request asks
	rec, err := spend.Open(filepath.Join(t.TempDir(), "kimi-lsp"), spend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lg := provider.NewLedger(rec, cfg.Budget, nil)
	defer lg.Close()
	var asked int
	engine, err := assist.NewEngine(assist.Options{Config: cfg, ExplanationDir: t.TempDir(), Ledger: lg,
		Confirm: func(context.Context, string) bool { asked++; return false }})
	if err != nil {
		t.Fatal(err)
	}
	to := &changesRecorder{}
	tot, err := engine.ReviewChanges(context.Background(), assist.ChangesReview{Folders: folders, Dirs: []assist.ReviewDir{{Name: "ws", Path: dir}}, Config: cfg, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if asked != 1 || len(srv.Requests()) != 0 || tot.NotSent != "ws/a.go" || tot.Files != 0 || len(to.reviewed) != 0 {
		t.Fatalf("asked %d times, %d requests, totals %+v", asked, len(srv.Requests()), tot)
	}
	if got := tot.Summary(); got != "0 findings in 0 changed files; not sent from ws/a.go on: nothing more left the machine" {
		t.Errorf("summary %q", got)
	}
}

// TestChangesSummary: the end of a review of changes says the findings not
// read of over-size answers (the command line said it per file, the
// server not at all) and lists five reasons, then how many more.
func TestChangesSummary(t *testing.T) {
	tot := assist.ChangesTotals{Files: 1, Findings: 1, Cut: 3, NotReviewed: []string{"a", "b", "c", "d", "e", "f", "g"}}
	want := "1 finding in 1 changed file (" + assist.CutNote(3) + "); not reviewed: a, b, c, d, e and 2 more"
	if got := tot.Summary(); got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
}

// TestReviewChangesKeepsWhatTheChangeBreaks (#33 item 14): a finding
// outside the changed lines is kept when its line uses a name the change
// renamed (the compile error a renamed parameter causes further down),
// and one on a line the change does not affect is left out and counted.
func TestReviewChangesKeepsWhatTheChangeBreaks(t *testing.T) {
	gittest.Hermetic(t)
	gittest.Need(t)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	before := "package m\n\n// Discount takes percent off.\nfunc Discount(sum, percent int) int {\n\tif sum < 0 {\n\t\treturn 0\n\t}\n\treturn sum - sum*percent/100\n}\n"
	gittest.Repo(t, dir, map[string]string{"go.mod": "module example.com/m\n", "d.go": before}, "")
	after := strings.Replace(before, "sum, percent int", "sum, pct int", 1)
	os.WriteFile(filepath.Join(dir, "d.go"), []byte(after), 0o644)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Match: "careful senior reviewer",
		Content: `{"findings":[{"startLine":4,"endLine":4,"severity":"warning","message":"pct is a terse name","explanation":""},` +
			`{"startLine":8,"endLine":8,"severity":"error","message":"undefined: percent","explanation":""},` +
			`{"startLine":5,"endLine":5,"severity":"hint","message":"an unrelated line","explanation":""}]}`}}}})
	defer srv.Close()
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, _ := config.Default().WithEnv(func(k string) string { return env[k] })
	folders := workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{})
	defer folders.Close()
	if err := folders.Add(workspace.FileURI(dir), "ws"); err != nil {
		t.Fatal(err)
	}
	folders.Ready(context.Background())
	engine, err := assist.NewEngine(assist.Options{Config: cfg, ExplanationDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	to := &changesRecorder{}
	tot, err := engine.ReviewChanges(context.Background(), assist.ChangesReview{Folders: folders,
		Dirs: []assist.ReviewDir{{Name: "ws", Path: dir}}, Config: cfg, To: to})
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for _, f := range to.reviewed["d.go"] {
		lines = append(lines, f.StartLine)
	}
	if len(lines) != 2 || lines[0] != 4 || lines[1] != 8 {
		t.Errorf("kept the findings on lines %v, want 4 (changed) and 8 (uses the renamed percent)", lines)
	}
	if tot.LeftOut != 1 || !strings.Contains(tot.Summary(), "(1 left out: invalid, on lines the changes do not affect") {
		t.Errorf("totals %+v, summary %q: want the unrelated finding counted as left out", tot, tot.Summary())
	}
}

func TestChangedNames(t *testing.T) {
	diff := "--- a/d.go\n+++ b/d.go\n@@ -4,1 +4,1 @@\n-func Discount(sum, percent int) int {\n+func Discount(sum, pct int) int {\n return x\n"
	if got := strings.Join(assist.ChangedNames(diff), " "); got != "pct percent" {
		t.Errorf("ChangedNames = %q, want the renamed pair only", got)
	}
}
