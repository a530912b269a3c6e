package cache_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache"
)

// TestLateDocumentsGoInTheLog: with Config.LateInLog, a part that joins
// the session after its layout goes after the edit log's blocks so far
// (as of its base, with the change since after it), so the prompt before
// it stays byte for byte, its edit log included; edits to it follow it;
// the prompts convey every part's text; a rebase moves it into the stable
// part, and the log past its limit counts edits only.
func TestLateDocumentsGoInTheLog(t *testing.T) {
	docs := workspace(t, "cookie.go")
	base := docs[0].Text
	text := strings.Replace(base, "func readSetCookies(h Header)", "func readSetCookies(hdr Header)", 1)
	text = strings.Replace(text, "func (c *Cookie) String() string {", "func (ck *Cookie) String() string {", 1)
	lines := func(s string, from, to int) string { return strings.Join(strings.SplitAfter(s, "\n")[from:to], "") }
	at := func(s string) int { return strings.Count(text[:strings.Index(text, s)], "\n") }
	l1, l2 := at("func readSetCookies("), at("func (ck *Cookie) String()")
	part := func(name string, line int, text string) cache.Document {
		return cache.Document{Path: docs[0].Path, Part: name, Line: line + 1, Language: "go",
			Text: lines(text, line, line+40), Base: lines(base, line, line+40), HasBase: true, LastEdited: int64(line)}
	}
	whole := docs[0]
	req := func(now time.Time, text string, parts ...cache.Document) cache.Request {
		w := whole
		w.Text = text
		return cache.Request{Project: project, Documents: append([]cache.Document{w}, parts...), Active: w.Path,
			ExcerptActive: true, Selection: cache.Selection{Start: 10, End: 10}, Action: "next-edit", Now: now}
	}
	check := func(p *cache.Prompt, parts ...cache.Document) {
		t.Helper()
		files, err := cache.Reconstruct(p.Messages)
		if err != nil {
			t.Fatalf("Reconstruct: %v", err)
		}
		for _, d := range parts {
			if got := files[d.Path+"#"+d.Part]; got != d.Text {
				t.Fatalf("%s#%s reconstructed: %q, want %q", d.Path, d.Part, got, d.Text)
			}
		}
	}
	logOf := func(p *cache.Prompt) string { c := p.Messages[2].Content; return c[:strings.Index(c, "<request ")] }

	s := newSession(t, cache.Config{LateInLog: true, MaxLogTokens: 400})
	page1 := part("page 1", l1, text)
	p1 := build(t, s, req(t0, text, page1))
	if !strings.Contains(p1.Messages[1].Content, `part="page 1"`) || strings.Contains(p1.Messages[2].Content, "<file ") {
		t.Fatal("the layout's part is not in the stable part")
	}
	check(p1, page1)

	// A part joining: the context message unchanged, the log kept, the
	// part after it at its base with its change.
	page2 := part("page 2", l2, text)
	p2 := build(t, s, req(t0.Add(time.Second), text, page1, page2))
	if p2.Messages[1] != p1.Messages[1] || !strings.HasPrefix(p2.Messages[2].Content, logOf(p1)) || p2.Layout != "" {
		t.Fatalf("a late part rewrote what was before it (layout %q)", p2.Layout)
	}
	added := strings.TrimPrefix(logOf(p2), logOf(p1))
	if !strings.HasPrefix(added, `<file path="net/http/cookie.go" language="go" part="page 2"`) ||
		!strings.Contains(added, "func (c *Cookie) String() string {") || !strings.Contains(added, "\n+func (ck *Cookie) String() string {") {
		t.Fatalf("the late part is not its base and change after the log: %.400q", added)
	}
	check(p2, page1, page2)
	if files := p2.Files; len(files) != 2 || files[1].Part != "page 2" {
		t.Errorf("Files = %+v, want both parts", files)
	}

	// Typing in the late part: its edit block follows it.
	text3 := strings.Replace(text, "return c.Name + \"=\"", "return ck.Name + \"=\"", 1)
	if text3 == text {
		text3 = strings.Replace(text, "var b strings.Builder", "var sb strings.Builder", 1)
	}
	page2b := part("page 2", l2, text3)
	p3 := build(t, s, req(t0.Add(2*time.Second), text3, page1, page2b))
	if p3.Messages[1] != p1.Messages[1] || !strings.HasPrefix(p3.Messages[2].Content, logOf(p2)) {
		t.Fatal("an edit to the late part rewrote the log before it")
	}
	check(p3, page1, page2b)

	// Edits past the log's limit: a rebase, after which the late part is
	// in the stable part and the texts are still conveyed.
	cur := text3
	for i := 0; i < 40; i++ {
		next := strings.Replace(cur, "hdr", "hd"+strings.Repeat("r", i+2), 1)
		if next == cur {
			t.Fatal("no more renames")
		}
		cur = next
		pa, pb := part("page 1", l1, cur), part("page 2", l2, cur)
		p := build(t, s, req(t0.Add(time.Duration(3+i)*time.Second), cur, pa, pb))
		check(p, pa, pb)
		if strings.Contains(p.Layout, "rebase") {
			if !strings.Contains(p.Messages[1].Content, `part="page 2"`) || strings.Contains(p.Messages[2].Content, "<file ") {
				t.Fatal("after a rebase the late part is not in the stable part")
			}
			return
		}
	}
	t.Fatal("no rebase in 40 edits past a 400-token log")
}

// TestLateDocumentsLogLimitCountsEdits: the file blocks placed in the log
// do not count toward its limit.
func TestLateDocumentsLogLimitCountsEdits(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go", "response.go")
	s := newSession(t, cache.Config{LateInLog: true, MaxLogTokens: 200})
	build(t, s, request(docs[:1], 0, 10, "explain", t0))
	p := build(t, s, request(docs, 0, 10, "explain", t0.Add(time.Second)))
	if p.Layout != "" || !strings.Contains(p.Messages[2].Content, `<file path="net/http/response.go"`) {
		t.Fatalf("two files of thousands of tokens joining: layout %q, the log holds them: %v", p.Layout,
			strings.Contains(p.Messages[2].Content, "response.go"))
	}
	checkReconstruct(t, p, docs)
}
