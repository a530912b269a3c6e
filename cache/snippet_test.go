package cache_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache"
)

// snippetRequest is a request on a small active file with two snippets of
// another file in the stable part.
func snippetRequest(at time.Time, price, item string) cache.Request {
	active := "package shop\n\nfunc Total() Money {\n\treturn Price(Item{})\n}\n"
	return cache.Request{
		Project: project,
		Documents: []cache.Document{
			{Path: "shop/pricing.go", Part: "func Price", Line: 40, Language: "go", Text: price},
			{Path: "shop/types.go", Part: "type Item", Line: 3, Language: "go", Text: item},
			{Path: "shop/cart.go", Language: "go", Text: active, LastEdited: 9},
		},
		Active:      "shop/cart.go",
		Selection:   cache.Selection{Start: strings.Index(active, "return"), End: strings.Index(active, "}\n")},
		Action:      "explain",
		Instruction: "Explain.",
		Now:         at,
	}
}

func TestSnippetDocuments(t *testing.T) {
	s := newSession(t, cache.Config{})
	price := "// Price prices.\nfunc Price(i Item) Money {\n\treturn 1\n}"
	item := "// Item is a thing.\ntype Item struct{ Cents int }"
	p1 := build(t, s, snippetRequest(t0, price, item))
	ctx := p1.Messages[1].Content
	if !strings.Contains(ctx, `<file path="shop/pricing.go" language="go" part="func Price" line="40" bytes="`) {
		t.Fatalf("no snippet header in:\n%s", ctx)
	}
	// The snippet's text changes: an edit block names its part; the
	// stable part is unchanged.
	price2 := strings.Replace(price, "return 1", "return 2", 1)
	p2 := build(t, s, snippetRequest(t0.Add(time.Second), price2, item))
	if p2.Messages[1].Content != ctx {
		t.Errorf("an edited snippet rewrote the stable part (layout %q)", p2.Layout)
	}
	if !strings.Contains(p2.Messages[2].Content, `<edit path="shop/pricing.go" part="func Price" seq="1">`) {
		t.Errorf("no edit block for the snippet:\n%s", p2.Messages[2].Content)
	}
	files, err := cache.Reconstruct(p2.Messages)
	if err != nil {
		t.Fatal(err)
	}
	if files["shop/pricing.go#func Price"] != price2 || files["shop/types.go#type Item"] != item {
		t.Errorf("Reconstruct = %q", files)
	}
	// A whole file and a snippet of it are distinct documents; the same
	// (path, part) twice is refused.
	req := snippetRequest(t0.Add(2*time.Second), price2, item)
	req.Documents = append(req.Documents, cache.Document{Path: "shop/pricing.go", Language: "go", Text: "package shop\n"})
	if _, err := s.Build(req); err != nil {
		t.Errorf("a whole file beside its snippet: %v", err)
	}
	req.Documents = append(req.Documents, cache.Document{Path: "shop/types.go", Part: "type Item", Text: "x"})
	if _, err := s.Build(req); err == nil {
		t.Error("the same snippet twice was accepted")
	}
	req = snippetRequest(t0, price, item)
	req.Documents[0].Part = "func\nPrice"
	if _, err := s.Build(req); err == nil {
		t.Error("a part with a line break was accepted")
	}
}

// TestVolatileBeforeTheLog: the volatile documents go in a <context> block
// after the stable part and before the edit log; the same block in the next
// request is part of its cached prefix, and Reconstruct leaves it out.
func TestVolatileBeforeTheLog(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go")
	s := newSession(t, cache.Config{})
	vol := []cache.Document{{Path: "net/http/server.go", Part: "type Handler", Line: 88, Language: "go", Text: "type Handler interface{ ServeHTTP() }"}}
	// A session under way: a build that rewrites the stable part (the
	// first) takes the volatile documents into it (see TestVolatileLedger).
	build(t, s, request(docs, 1, 400, "explain", t0))
	req := request(docs, 1, 500, "explain", t0)
	req.Volatile = vol
	p1 := build(t, s, req)
	last := p1.Messages[2].Content
	if !strings.HasPrefix(last, "<context>\n<file path=\"net/http/server.go\" language=\"go\" part=\"type Handler\" line=\"88\"") {
		t.Fatalf("the last message does not open with the context block:\n%.300s", last)
	}
	if strings.Contains(p1.Messages[1].Content, "type Handler") {
		t.Error("a volatile document entered the stable part")
	}
	// An edit of the active file: the log grows after the context block.
	docs[1].Text = strings.Replace(docs[1].Text, "package http", "package http // edited", 1)
	docs[1].LastEdited = 50
	req = request(docs, 1, 600, "fix", t0.Add(time.Second))
	req.Volatile = vol
	p2 := build(t, s, req)
	r1, r2 := render(p1), render(p2)
	if got := commonPrefix(r1, r2); got < bytes.Index(r1, []byte("</context>")) {
		t.Errorf("the prompts diverge at %d, inside the context block (diverged in %q)", got, p2.DivergedIn)
	}
	if !strings.Contains(p2.Messages[2].Content, "</context>\n\n<edit path=") {
		t.Errorf("the edit log does not follow the context block:\n%.400s", p2.Messages[2].Content)
	}
	files, err := cache.Reconstruct(p2.Messages)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := files["net/http/server.go#type Handler"]; ok {
		t.Error("Reconstruct counts a volatile document")
	}
	if files[docs[1].Path] != docs[1].Text {
		t.Error("Reconstruct lost the active text")
	}
}

// TestExcerptActive: a large active file shown by its parts only.
func TestExcerptActive(t *testing.T) {
	docs := workspace(t, "server.go")
	text := docs[0].Text
	at := strings.Index(text, "func (c *conn) serve(")
	end := at + strings.Index(text[at:], "\n}\n") + 2
	region := text[at:end]
	s := newSession(t, cache.Config{})
	req := cache.Request{
		Project: project,
		Documents: []cache.Document{docs[0],
			{Path: docs[0].Path, Part: "method conn.serve", Line: 1 + strings.Count(text[:at], "\n"), Language: "go", Text: region, LastEdited: docs[0].LastEdited}},
		Active:        docs[0].Path,
		ExcerptActive: true,
		Selection:     cache.Selection{Start: at + 10, End: at + 40},
		Action:        "explain",
		Now:           t0,
	}
	p := build(t, s, req)
	if strings.Contains(p.Messages[1].Content, `<file path="net/http/server.go" language="go" bytes=`) {
		t.Error("the whole active file is in the stable part")
	}
	if !strings.Contains(p.Messages[1].Content, region) {
		t.Error("the region is not in the stable part")
	}
	if !strings.Contains(p.Messages[2].Content, cache.SelectionStart) {
		t.Error("no selection markers in the request")
	}
	if p.EstimatedTokens > len(text)/3/2 {
		t.Errorf("estimated %d tokens for an excerpt of a %d-byte file", p.EstimatedTokens, len(text))
	}
}

// TestContextBudgetDropsFromTheEnd: past Request.ContextBudget, documents
// no longer asked for go, the last placed first, and the ones before them
// stay in place (still cached).
func TestContextBudgetDropsFromTheEnd(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go", "response.go", "fs.go", "clone.go")
	s := newSession(t, cache.Config{})
	at := t0
	req := func(ds ...cache.Document) cache.Request {
		at = at.Add(time.Second)
		r := request(ds, len(ds)-1, 100, "explain", at)
		r.ContextBudget = 12000
		return r
	}
	// header.go (~2.6k tokens) and cookie.go (~4.5k) then the active
	// clone.go; then response.go (~4k) replaces cookie.go: still within
	// the budget, cookie.go stays.
	build(t, s, req(docs[0], docs[1], docs[4]))
	p2 := build(t, s, req(docs[0], docs[2], docs[4]))
	if strings.Contains(p2.Layout, "drop") || !strings.Contains(p2.Messages[1].Content, `path="net/http/cookie.go"`) {
		t.Fatalf("dropped within the budget: layout %q", p2.Layout)
	}
	// fs.go (~10k) comes: over the budget, the unasked-for cookie.go
	// goes; header.go, placed before it, stays cached.
	p3 := build(t, s, req(docs[0], docs[3], docs[4]))
	if !strings.Contains(p3.Layout, "drop") || strings.Contains(p3.Messages[1].Content, `path="net/http/cookie.go"`) {
		t.Fatalf("cookie.go not dropped: layout %q", p3.Layout)
	}
	if !strings.Contains(p3.Messages[1].Content, `path="net/http/header.go"`) {
		t.Error("header.go, asked for, was dropped")
	}
	if p3.DivergedIn == "file net/http/header.go" || p3.DivergedIn == "project" || p3.DivergedIn == "system" {
		t.Errorf("the drop rewrote the prompt from %q", p3.DivergedIn)
	}
}

func TestEstimator(t *testing.T) {
	var zero cache.Estimator
	def := cache.DefaultEstimator()
	if zero.Tokens(3200) != 1000 || def.Tokens(3200) != 1000 || zero.Bytes(1000) != 3200 || def.Bytes(1000) != 3200 {
		t.Errorf("Tokens/Bytes: %d %d %d %d", zero.Tokens(3200), def.Tokens(3200), zero.Bytes(1000), def.Bytes(1000))
	}
	// A session corrects its estimator with the provider's counts; the
	// byte budget moves only when the correction passes 10%.
	s := newSession(t, cache.Config{})
	docs := workspace(t, "header.go")
	at := t0
	base := 0 // the prompt's estimate before any correction
	record := func(factor float64) {
		at = at.Add(time.Second)
		p := build(t, s, request(docs, 0, 10, "explain", at))
		if base == 0 {
			base = p.EstimatedTokens
		}
		if _, err := s.Record(p.Handle, cache.Usage{PromptTokens: int(float64(base) * factor)}); err != nil {
			t.Fatal(err)
		}
	}
	record(1.05)
	if got := s.Estimator().Bytes(10000); got != 32000 {
		t.Errorf("after a 5%% correction, Bytes(10000) = %d, want 32000", got)
	}
	for range 10 {
		record(1.5)
	}
	e := s.Estimator()
	if got := e.Bytes(10000); got > 24000 || got < 20000 {
		t.Errorf("after a 50%% correction, Bytes(10000) = %d, want about 21,300", got)
	}
	if got := e.Tokens(e.Bytes(10000)); got < 9000 || got > 11000 {
		t.Errorf("Tokens(Bytes(10000)) = %d", got)
	}
}

// TestVolatileLedger: volatile documents join the stable part when a build
// rewrites it anyway (the first, or one that adds a document), at its end;
// one the stable part shows with the same text is not repeated in the
// <context> block and stays (it is asked for); Shown reports them all.
func TestVolatileLedger(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go")
	s := newSession(t, cache.Config{})
	v1 := cache.Document{Path: "net/http/server.go", Part: "type Handler", Line: 88, Language: "go", Text: "type Handler interface{ ServeHTTP() }"}
	v2 := cache.Document{Path: "net/http/server.go", Part: "type Server", Line: 2900, Language: "go", Text: "type Server struct{ Addr string }"}
	req := request(docs, 1, 500, "explain", t0)
	req.Volatile = []cache.Document{v1}
	p1 := build(t, s, req)
	if !strings.Contains(p1.Messages[1].Content, v1.Text) || strings.Contains(p1.Messages[2].Content, "<context>") {
		t.Fatalf("the first build did not take the volatile document into the stable part:\n%.300s", p1.Messages[2].Content)
	}
	// Nothing rewritten: v1 is served from the stable part, v2 is volatile.
	req = request(docs, 1, 600, "explain", t0.Add(time.Second))
	req.Volatile = []cache.Document{v1, v2}
	p2 := build(t, s, req)
	last := p2.Messages[2].Content
	if p2.Layout != "" || !strings.HasPrefix(last, "<context>\n") || strings.Contains(last, v1.Text) || !strings.Contains(last, v2.Text) {
		t.Fatalf("layout %q; the last message:\n%.400s", p2.Layout, last)
	}
	if p2.Messages[1].Content != p1.Messages[1].Content {
		t.Error("the stable part changed without a layout change")
	}
	// A new document rewrites the end of the stable part: v2 joins it.
	docs = append(docs, workspace(t, "status.go")...)
	docs[2].LastEdited = 5
	req = request(docs, 1, 600, "explain", t0.Add(2*time.Second))
	req.Volatile = []cache.Document{v2}
	p3 := build(t, s, req)
	if !strings.Contains(p3.Layout, "open") || !strings.Contains(p3.Messages[1].Content, v2.Text) || strings.Contains(p3.Messages[2].Content, "<context>") {
		t.Fatalf("layout %q: v2 did not join the stable part", p3.Layout)
	}
	if !strings.HasPrefix(p3.Messages[1].Content, p1.Messages[1].Content) {
		t.Error("joining rewrote the stable part before its end")
	}
	shown := s.Shown()
	for _, d := range []cache.Document{v1, v2, docs[0], docs[2]} {
		if !shown(d.Path, d.Part) {
			t.Errorf("Shown does not report %s#%s", d.Path, d.Part)
		}
	}
	if shown("net/http/server.go", "type Other") {
		t.Error("Shown reports a document never shown")
	}
	files, err := cache.Reconstruct(p3.Messages)
	if err != nil {
		t.Fatal(err)
	}
	if files[docs[1].Path] != docs[1].Text {
		t.Error("Reconstruct lost the active text")
	}
}
