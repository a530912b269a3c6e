package complete

import (
	"context"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// editorNext is next edits without requests, holding suggestion 1 of
// base for document "k": "c" becomes "C".
func editorNext(t *testing.T, base string) *NextEdits {
	t.Helper()
	n := NewNextEdits(NextOptions{Config: func() config.Config {
		c := config.Default()
		c.NextEdit.Enable = false // no request: only the placing
		return c
	}})
	n.mu.Lock()
	d := n.docLocked("k")
	d.sug, d.base = placed(1, 1, base, []patch.Edit{{Start: 4, End: 6, NewText: "C\n"}}, "", 1), base
	n.mu.Unlock()
	return n
}

// TestAcceptedOnce: the editor's accept counts a suggestion accepted once,
// whichever comes first, its word or the didChanges that applied it, and
// however they applied it (in one change, or deleting the range and then
// inserting the text, which took the suggestion apart: counted accepted,
// not stale). A suggestion it does not know is not accepted.
func TestAcceptedOnce(t *testing.T) {
	const base, result = "a\nb\nc\nd\ne\nf\n", "a\nb\nC\nd\ne\nf\n"
	const deleted = "a\nb\nd\ne\nf\n"
	for _, tc := range []struct {
		name   string
		first  bool // the accept before the didChanges
		passes []string
	}{
		{"one change, then the word", false, []string{result}},
		{"deleted and inserted, then the word", false, []string{deleted, result}},
		{"the word, then one change", true, []string{result}},
		{"the word, then deleted and inserted", true, []string{deleted, result}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := editorNext(t, base)
			if tc.first && !n.Accepted("k", 1) {
				t.Fatal("the current suggestion not accepted")
			}
			prev := base
			for i, text := range tc.passes {
				n.Edited(NextRequest{Key: "k", Doc: workspace.NewSnapshot("file:///k", "", int32(i+2), text), Prev: workspace.NewSnapshot("file:///k", "", int32(i+1), prev)})
				prev = text
			}
			if !tc.first && !n.Accepted("k", 1) {
				t.Fatal("the applied suggestion not accepted")
			}
			if st := n.Stats(); st.Accepted != 1 || st.Stale != 0 {
				t.Errorf("accepted %d, stale %d; want 1, 0", st.Accepted, st.Stale)
			}
			if n.Accepted("k", 2) || n.Accepted("other", 1) {
				t.Error("a suggestion the document does not know was accepted")
			}
		})
	}
}

// TestDisplayedOnce: didShowInlineEdit counts a suggestion displayed
// once, and only the current one.
func TestDisplayedOnce(t *testing.T) {
	n := editorNext(t, "a\nb\nc\nd\ne\nf\n")
	for i, want := range []bool{true, true} {
		if got := n.Displayed("k", 1); got != want {
			t.Errorf("Displayed #%d = %v, want %v", i+1, got, want)
		}
	}
	if n.Displayed("k", 7) {
		t.Error("Displayed of suggestion 7 (not the current one) = true")
	}
	if st := n.Stats(); st.Displayed != 1 {
		t.Errorf("displayed %d, want 1", st.Displayed)
	}
}

// TestAwaitPause: Await waits for the pause after an edit and the request
// it starts, then returns the suggestion; with nothing pending, at once.
func TestAwaitPause(t *testing.T) {
	n := editorNext(t, "a\nb\nc\nd\ne\nf\n")
	if s := n.Await(context.Background(), "k"); s == nil || s.ID != 1 {
		t.Fatalf("nothing pending: %+v, want suggestion 1", s)
	}
	if s := n.Await(context.Background(), "none"); s != nil {
		t.Fatalf("an unknown document: %+v", s)
	}
	n.mu.Lock()
	d := n.docs["k"]
	d.editor.firing++ // a request under way
	n.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if s := n.Await(ctx, "k"); s == nil {
		t.Fatal("at ctx's end: want the suggestion at hand")
	}
	done := make(chan *NextSuggestion)
	go func() { done <- n.Await(context.Background(), "k") }()
	n.fired(d)
	if s := <-done; s == nil || s.ID != 1 {
		t.Fatalf("after the request: %+v, want suggestion 1", s)
	}
}
