package complete

import (
	"strings"
	"sync"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestNextEditNextTo: a change on the line before or after a suggestion
// drops it, like one inside it; a change two lines away re-places it.
func TestNextEditNextTo(t *testing.T) {
	const base = "a\nb\nc\nd\ne\nf\n"
	for _, tc := range []struct {
		name, text string
		kept       bool
		start      int
	}{
		{"line after", "a\nb\nc\nD\ne\nf\n", false, 0},
		{"line before", "a\nB\nc\nd\ne\nf\n", false, 0},
		{"inside", "a\nb\nX\nd\ne\nf\n", false, 0},
		{"two lines above", "A\nb\nc\nd\ne\nf\n", true, 4},
		{"a line added at the top", "z\na\nb\nc\nd\ne\nf\n", true, 6},
		{"two lines below", "a\nb\nc\nd\nE\nf\n", true, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := NewNextEdits(NextOptions{Config: func() config.Config {
				c := config.Default()
				c.NextEdit.Enable = false // no request: only the placing
				return c
			}})
			n.mu.Lock()
			d := n.docLocked("k")
			d.sug, d.base = placed(1, 1, base, []patch.Edit{{Start: 4, End: 6, NewText: "C\n"}}, "", 1), base
			n.mu.Unlock()
			n.Edited(NextRequest{Key: "k", Doc: workspace.NewSnapshot("file:///k", "", 2, tc.text), Prev: workspace.NewSnapshot("file:///k", "", 1, base)})
			s := n.Current("k")
			if (s != nil) != tc.kept {
				t.Fatalf("kept = %v, want %v", s != nil, tc.kept)
			}
			if s != nil && (s.Start != tc.start || s.Version != 2 || s.NewText != "C\n") {
				t.Errorf("re-placed at %d (version %d, %q), want %d", s.Start, s.Version, s.NewText, tc.start)
			}
			if st := n.Stats(); !tc.kept && st.Stale != 1 {
				t.Errorf("stale = %d, want 1", st.Stale)
			}
		})
	}
}

// TestNextFromAnswer: the checks of an answer.
func TestNextFromAnswer(t *testing.T) {
	const text = "package p\n\nfunc f(k int) int {\n\tx := factor\n\treturn x\n}\n"
	typed := [][2]int{{2, 2}}
	cfg := config.Default()
	ok := "--- a/p.go\n+++ b/p.go\n@@ -3,3 +3,3 @@\n func f(k int) int {\n-\tx := factor\n+\tx := k\n \treturn x\n"
	s, why := nextFromAnswer(ok, "p.go", text, typed, cfg, "")
	if s == nil || s.Summary != "`factor` → `k`" || s.Lines != 1 {
		t.Fatalf("good answer: %+v, %q", s, why)
	}
	for name, answer := range map[string]string{
		"typed line":   "--- a/p.go\n+++ b/p.go\n@@ -3,2 +3,2 @@\n-func f(k int) int {\n+func f(factor int) int {\n \tx := factor\n",
		"other file":   "--- a/q.go\n+++ b/q.go\n@@ -1 +1 @@\n-package q\n+package r\n",
		"broken go":    "--- a/p.go\n+++ b/p.go\n@@ -4,1 +4,1 @@\n-\tx := factor\n+\tx := (\n",
		"writes a key": "--- a/p.go\n+++ b/p.go\n@@ -4,1 +4,1 @@\n-\tx := factor\n+\tx := \"sk-secret-key\"\n",
	} {
		if s, why := nextFromAnswer(answer, "p.go", text, typed, cfg, "sk-secret-key"); s != nil || why == "" {
			t.Errorf("%s: shown %+v (%q)", name, s, why)
		}
	}
	if s, why := nextFromAnswer("  \n", "p.go", text, typed, cfg, ""); s != nil || why != "" {
		t.Errorf("empty answer: %+v %q", s, why)
	}
}

// TestNextEditAppliedPiecewise: an editor that applies the suggestion one
// edit per didChange gets it accepted, not dropped.
func TestNextEditAppliedPiecewise(t *testing.T) {
	const base = "a\nb\nc\nd\ne\nf\n"
	n := NewNextEdits(NextOptions{Config: func() config.Config {
		c := config.Default()
		c.NextEdit.Enable = false
		return c
	}})
	n.mu.Lock()
	d := n.docLocked("k")
	d.sug, d.base = placed(1, 1, base, []patch.Edit{{Start: 2, End: 4, NewText: "B\n"}, {Start: 8, End: 10, NewText: "E\n"}}, "", 2), base
	n.mu.Unlock()
	prev := workspace.NewSnapshot("file:///k", "", 1, base)
	for i, text := range []string{"a\nb\nc\nd\nE\nf\n", "a\nB\nc\nd\nE\nf\n"} {
		snap := workspace.NewSnapshot("file:///k", "", int32(i+2), text)
		n.Edited(NextRequest{Key: "k", Doc: snap, Prev: prev})
		prev = snap
	}
	if st := n.Stats(); st.Accepted != 1 || st.Stale != 0 {
		t.Errorf("stats %+v, want 1 accepted", st)
	}
}

// TestNextEditNotWhileBusy: no request while an edit of ours to the
// document is in flight when the pause ends, nor when the budget says no;
// the next edit after that asks as usual. (An edit made while ours is in
// flight is ours, and starts no pause: TestNextEditNotAfterJobEdit in lsp.)
func TestNextEditNotWhileBusy(t *testing.T) {
	f := newFixture(t, `{"nextEdit": {"debounceMs": 0}}`, modeltest.Rule{Content: ""})
	asked := make(chan string, 8)
	var mu sync.Mutex
	// busy answers in turn: the first edit is the user's, and one of ours
	// is in flight when its pause ends; then none.
	busy, allow := []bool{false, true, false}, true
	n := NewNextEdits(NextOptions{Config: f.config, Services: f.svc,
		Busy: func(string) bool {
			mu.Lock()
			defer mu.Unlock()
			asked <- "busy"
			b := busy[0]
			if len(busy) > 1 {
				busy = busy[1:]
			}
			return b
		},
		Allow: func() bool {
			mu.Lock()
			defer mu.Unlock()
			asked <- "allow"
			return allow
		},
	})
	prev := workspace.NewSnapshot(f.uri, "go", 1, "package p\n")
	edit := func(v int32, text string) {
		snap := workspace.NewSnapshot(f.uri, "go", v, text)
		n.Edited(NextRequest{Key: string(f.uri), Path: "p.go", Doc: snap, Prev: prev})
		prev = snap
	}
	edit(2, "package p\n\nvar busyEdit = 1\n")
	<-asked // busy, as the edit comes in: no
	if got := <-asked; got != "busy" {
		t.Fatalf("asked %s when the pause ended, want busy", got)
	}
	mu.Lock()
	allow = false
	mu.Unlock()
	edit(3, "package p\n\nvar overBudget = 1\n")
	<-asked // busy, as the edit comes in
	<-asked // busy, when the pause ends
	if got := <-asked; got != "allow" {
		t.Fatalf("asked %s, want the budget", got)
	}
	mu.Lock()
	allow = true
	mu.Unlock()
	edit(4, "package p\n\nvar asked = 1\n")
	f.waitArrived(1)
	waitFor(t, func() bool { return n.Stats().Empty == 1 })
	reqs := f.srv.Requests()
	if len(reqs) != 1 || !strings.Contains(string(reqs[0].Body), "asked") || strings.Contains(string(reqs[0].Body), "busyEdit") || strings.Contains(string(reqs[0].Body), "overBudget") {
		t.Fatalf("%d requests, want exactly the one after the busy and over-budget edits", len(reqs))
	}
	if st := n.Stats(); st.Requested != 1 {
		t.Errorf("requested = %d, want 1", st.Requested)
	}
}

// TestNextFromAnswerBareHunks: an answer of "@@" hunks without a file
// header is a diff of the active file, checked as a headed one; hunks both
// with and without a header are refused.
func TestNextFromAnswerBareHunks(t *testing.T) {
	const text = "package p\n\nfunc f(k int) int {\n\tx := factor\n\treturn x\n}\n"
	typed := [][2]int{{2, 2}}
	cfg := config.Default()
	cfg.NextEdit.MaxLines = 2
	hunk := "@@ -3,3 +3,3 @@\n func f(k int) int {\n-\tx := factor\n+\tx := k\n \treturn x\n"
	for name, answer := range map[string]string{
		"numbered":   hunk,
		"numberless": "@@\n-\tx := factor\n+\tx := k\n",
		"fenced":     "```diff\n" + hunk + "```\n",
		"two fences": "```diff\n@@\n-\tx := factor\n+\tx := k\n```\n\n```diff\n@@\n-\treturn x\n+\treturn x + 1\n```\n",
	} {
		s, why := nextFromAnswer(answer, "p.go", text, typed, cfg, "")
		if s == nil || !strings.HasPrefix(s.Summary, "`factor` → `k`") && s.Lines != 2 {
			t.Errorf("%s: not shown (%q): %+v", name, why, s)
		}
	}
	for name, answer := range map[string]string{
		"typed line":     "@@\n-func f(k int) int {\n+func f(factor int) int {\n",
		"does not apply": "@@\n-\tx := ratio\n+\tx := k\n",
		"too many lines": "@@\n-\tx := factor\n-\treturn x\n+\tx := k\n+\ty := x\n+\treturn y\n",
		"broken go":      "@@\n-\tx := factor\n+\tx := (\n",
		"writes a key":   "@@\n-\tx := factor\n+\tx := \"sk-secret-key\"\n",
		"then a header":  hunk + "--- a/p.go\n+++ b/p.go\n@@\n-\treturn x\n+\treturn x + 1\n",
		"mixed fences":   "```diff\n" + hunk + "```\n\n```diff\n--- a/q.go\n+++ b/q.go\n@@\n-package q\n+package r\n```\n",
	} {
		if s, why := nextFromAnswer(answer, "p.go", text, typed, cfg, "sk-secret-key"); s != nil || why == "" {
			t.Errorf("%s: shown %+v (%q)", name, s, why)
		}
	}
}

// TestNextFromAnswerInsertions: lines inserted inside a block of typed
// lines are refused; before its first line, after its last or elsewhere
// they are a next edit.
func TestNextFromAnswerInsertions(t *testing.T) {
	const text = "package p\n\ntype T struct {\n\tA int\n\tB int\n}\n\nfunc New() T {\n\treturn T{A: 1}\n}\n"
	cfg := config.Default()
	for _, tc := range []struct {
		name   string
		typed  [][2]int
		answer string
		shown  bool
	}{
		{"inside the block", [][2]int{{3, 4}}, "@@\n \tA int\n+\tC int\n \tB int\n", false},
		{"between lines typed as two edits", [][2]int{{3, 3}, {4, 4}}, "@@\n \tA int\n+\tC int\n \tB int\n", false},
		{"after its last line", [][2]int{{3, 4}}, "@@\n \tB int\n+\tC int\n }\n", true},
		{"before its first line", [][2]int{{3, 4}}, "@@\n type T struct {\n+\tZ int\n \tA int\n", true},
		{"elsewhere", [][2]int{{3, 4}}, "@@\n \treturn T{A: 1}\n }\n+\n+func (T) M() {}\n", true},
		{"between lines typed apart", [][2]int{{3, 3}, {5, 5}}, "@@\n \tA int\n+\tC int\n \tB int\n", true},
	} {
		s, why := nextFromAnswer(tc.answer, "p.go", text, tc.typed, cfg, "")
		if (s != nil) != tc.shown {
			t.Errorf("%s: shown = %v (%q), want %v", tc.name, s != nil, why, tc.shown)
		}
	}
	// A deletion: inserting lines where the user removed them undoes it.
	before := "package p\n\ntype T struct {\n\tA int\n\tOld int\n\tB int\n}\n\nfunc New() T {\n\treturn T{A: 1}\n}\n"
	typed := typedLines(before, text)
	if s, why := nextFromAnswer("@@\n \tA int\n+\tOld int\n \tB int\n", "p.go", text, typed, cfg, ""); s != nil {
		t.Errorf("re-inserting deleted lines shown (typed %v, %q)", typed, why)
	}
	if s, why := nextFromAnswer("@@\n \tB int\n+\tC int\n }\n", "p.go", text, typed, cfg, ""); s == nil {
		t.Errorf("an insertion next to the deletion not shown: %q", why)
	}
}
