package complete

import (
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

// TestCompleteInsideHugeLine: with the cursor inside a 900 KB line (a
// minified file), the request stays within completion.maxContextTokens,
// measured at the provider by the request body's size; the line used to be
// sent whole, twice (the window and the request block).
func TestCompleteInsideHugeLine(t *testing.T) {
	f := newFixture(t, "", modeltest.Rule{Content: "b+1;"})
	unit := "var a=1;function f(b){return b*2};"
	line := strings.Repeat(unit, 900<<10/len(unit))
	mid := len(line) / 2
	mid -= mid % len(unit) // after a whole unit
	text := line[:mid] + "x=f(|" + line[mid:] + "\n"
	s, err := f.c.Complete(ctxT(t), f.set(text, Invoked))
	if err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d provider requests, want 1", len(reqs))
	}
	budget := config.DefaultCompletionContextTokens
	if n, max := len(reqs[0].Body), int(float64(budget)*cache.DefaultCharsPerToken); n > max {
		t.Errorf("the request body is %d bytes, over the %d bytes of completion.maxContextTokens (%d tokens)", n, max, budget)
	}
	// The budget is kept in estimated tokens (cache.DefaultCharsPerToken
	// bytes each until the provider's counts correct it); the stand-in's
	// tokenizer counts this punctuation-heavy text a little denser.
	t.Logf("request body %d bytes, %d prompt tokens at the stand-in", len(reqs[0].Body), reqs[0].Usage.PromptTokens)
	if !strings.Contains(string(reqs[0].Prompt), "x=f(<|cursor|>") {
		t.Errorf("the prompt does not show the cursor's place")
	}
	if s == nil || s.Insert != "b+1;" {
		t.Errorf("suggestion %+v, want b+1;", s)
	}

	// Typing on the line: the next prompt is within the budget too (the
	// edit log is line-level, so an edit of a line this long is folded
	// into the file's block at once rather than logged).
	if _, err := f.c.Complete(ctxT(t), f.set(line[:mid]+"x=f(z|"+line[mid:]+"\n", Invoked)); err != nil {
		t.Fatal(err)
	}
	reqs = f.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d provider requests, want 2", len(reqs))
	}
	if n, max := len(reqs[1].Body), int(float64(budget)*cache.DefaultCharsPerToken); n > max {
		t.Errorf("the second request body is %d bytes, over %d", n, max)
	}
	if !strings.Contains(string(reqs[1].Prompt), "x=f(z<|cursor|>") {
		t.Errorf("the second prompt does not show the cursor's place")
	}
}
