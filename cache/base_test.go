package cache_test

import (
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache"
)

// TestBaseShownWhenLaidOutAfresh: an active document with a base shows
// the base in its block and the change to its text in the edit log, at
// the session's first request, after a cold cache and after a rebase;
// the prompts convey its text exactly, and a second request keeps the
// first one's prefix up to the end of its edit log.
func TestBaseShownWhenLaidOutAfresh(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go")
	base := docs[1].Text
	renamed := strings.Replace(base, "func readSetCookies(h Header)", "func readSetCookies(hdr Header)", 1)
	if renamed == base {
		t.Fatal("cookie.go has no readSetCookies(h Header)")
	}
	docs[1].Text, docs[1].Base, docs[1].HasBase = renamed, base, true
	s := newSession(t, cache.Config{})
	p1 := build(t, s, request(docs, 1, 1000, "next-edit", t0))
	if !strings.Contains(p1.Messages[1].Content, "func readSetCookies(h Header)") || strings.Contains(p1.Messages[1].Content, "readSetCookies(hdr Header)") {
		t.Fatal("the file block does not show the base")
	}
	if !strings.HasPrefix(p1.Messages[2].Content, `<edit path="net/http/cookie.go" seq="1">`) ||
		!strings.Contains(p1.Messages[2].Content, "\n-func readSetCookies(h Header)") || !strings.Contains(p1.Messages[2].Content, "\n+func readSetCookies(hdr Header)") {
		t.Fatalf("the first request's log does not show the rename: %.300q", p1.Messages[2].Content)
	}
	checkReconstruct(t, p1, docs)

	// A second edit: the first prompt's prefix, its edit log included,
	// stays byte for byte.
	docs[1].Base = renamed // the caller's newer base is read only when laid out afresh
	docs[1].Text = strings.Replace(renamed, "cookieCount := len(h[\"Set-Cookie\"])", "cookieCount := len(hdr[\"Set-Cookie\"])", 1)
	if docs[1].Text == renamed {
		t.Fatal("cookie.go has no len(h[\"Set-Cookie\"])")
	}
	p2 := build(t, s, request(docs, 1, 1000, "next-edit", t0.Add(time.Second)))
	log1 := p1.Messages[2].Content[:strings.Index(p1.Messages[2].Content, "<request ")]
	if p2.Messages[0] != p1.Messages[0] || p2.Messages[1] != p1.Messages[1] || !strings.HasPrefix(p2.Messages[2].Content, log1) {
		t.Fatal("the second request does not keep the first one's prefix")
	}
	checkReconstruct(t, p2, docs)

	// Cold: laid out afresh from the newer base, its change in the log.
	p3 := build(t, s, request(docs, 1, 1000, "next-edit", t0.Add(time.Hour)))
	if p3.Layout != "cold" || !strings.Contains(p3.Messages[2].Content, "\n+\tcookieCount := len(hdr[\"Set-Cookie\"])") ||
		strings.Contains(p3.Messages[2].Content, "readSetCookies") {
		t.Fatalf("cold layout %q does not show the change from the newer base alone: %.300q", p3.Layout, p3.Messages[2].Content)
	}
	checkReconstruct(t, p3, docs)
}

// TestBaseRebaseKeepsTheBaseChange: a log folded past its limit shows the
// active file's base again, with the change since it.
func TestBaseRebaseKeepsTheBaseChange(t *testing.T) {
	docs := workspace(t, "cookie.go")
	s := newSession(t, cache.Config{MaxLogTokens: 300})
	text := docs[0].Text
	at := t0
	for i := range 40 {
		prev := text
		text = strings.Replace(text, "\n\n", "\n// edit "+strings.Repeat("x", i)+"\n\n", 1)
		docs[0].Text, docs[0].Base, docs[0].HasBase = text, prev, true
		at = at.Add(time.Second)
		p := build(t, s, request(docs, 0, 100, "next-edit", at))
		checkReconstruct(t, p, docs)
		if strings.Contains(p.Layout, "rebase") {
			if !strings.Contains(p.Messages[2].Content, "+// edit "+strings.Repeat("x", i)+"\n") {
				t.Fatalf("edit %d: the rebase dropped the change from the base: %.300q", i, p.Messages[2].Content)
			}
			return
		}
	}
	t.Fatal("no rebase in 40 edits")
}

// TestBaseTooLargeShowsText: a change from the base past half the log's
// limit is not shown; the block shows the text.
func TestBaseTooLargeShowsText(t *testing.T) {
	docs := workspace(t, "cookie.go")
	docs[0].Base, docs[0].HasBase = "package http\n", true
	s := newSession(t, cache.Config{MaxLogTokens: 512})
	p := build(t, s, request(docs, 0, 100, "next-edit", t0))
	if strings.Contains(p.Messages[2].Content, "<edit ") {
		t.Fatal("a change past the limit is in the log")
	}
	checkReconstruct(t, p, docs)
}

// TestBasePartsOfTheActiveFile: the parts of an excerpted active file (a
// next edit's pages) show their bases too: a part laid out at the first
// request, and one appended at a later request, each shows its base and
// the change since in the log, and the later prompt keeps the earlier one
// byte for byte up to the appended part.
func TestBasePartsOfTheActiveFile(t *testing.T) {
	docs := workspace(t, "cookie.go")
	base := docs[0].Text
	text := strings.Replace(base, "func readSetCookies(h Header)", "func readSetCookies(hdr Header)", 1)
	text = strings.Replace(text, "func (c *Cookie) String() string {", "func (ck *Cookie) String() string {", 1)
	page := func(text string, from, to int) string {
		lines := strings.SplitAfter(text, "\n")
		return strings.Join(lines[from:to], "")
	}
	at := func(s string) int { return strings.Count(text[:strings.Index(text, s)], "\n") }
	p1Line, p2Line := at("func readSetCookies("), at("func (ck *Cookie) String()")
	part := func(name string, line int) cache.Document {
		return cache.Document{Path: docs[0].Path, Part: name, Line: line + 1, Language: "go",
			Text: page(text, line, line+10), Base: page(base, line, line+10), HasBase: true, LastEdited: int64(line)}
	}
	whole := docs[0]
	whole.Text = text
	req := func(now time.Time, parts ...cache.Document) cache.Request {
		return cache.Request{Project: project, Documents: append([]cache.Document{whole}, parts...), Active: whole.Path,
			ExcerptActive: true, Selection: cache.Selection{Start: 10, End: 10}, Action: "next-edit", Now: now}
	}
	s := newSession(t, cache.Config{})
	p1 := build(t, s, req(t0, part("page 1", p1Line)))
	if !strings.Contains(p1.Messages[1].Content, "func readSetCookies(h Header)") || !strings.Contains(p1.Messages[2].Content, "\n+func readSetCookies(hdr Header)") {
		t.Fatalf("the first part does not show its base and the change: %.300q", p1.Messages[2].Content)
	}
	p2 := build(t, s, req(t0.Add(time.Second), part("page 1", p1Line), part("page 2", p2Line)))
	if p2.Messages[0] != p1.Messages[0] || !strings.HasPrefix(p2.Messages[1].Content, p1.Messages[1].Content) {
		t.Fatal("appending a part does not keep the prompt before it")
	}
	added := p2.Messages[1].Content[len(p1.Messages[1].Content):]
	if !strings.Contains(added, `part="page 2"`) || !strings.Contains(added, "func (c *Cookie) String() string {") {
		t.Errorf("the appended part does not show its base: %.200q", added)
	}
	log1 := p1.Messages[2].Content[:strings.Index(p1.Messages[2].Content, "<request ")]
	if rest := strings.TrimPrefix(p2.Messages[2].Content, log1); rest == p2.Messages[2].Content || !strings.Contains(rest, `part="page 2"`) || !strings.Contains(rest, "\n+func (ck *Cookie) String() string {") {
		t.Errorf("the log does not keep its blocks and add the appended part's change: %.300q", p2.Messages[2].Content)
	}
}
