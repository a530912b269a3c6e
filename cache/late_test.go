package cache_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
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

// TestLateDocumentsRandomSession: a long random session with
// Config.LateInLog in which files join and leave, are edited, the log
// passes its limit and the budget trims: every prompt conveys the text of
// every file it is asked to show, and a prompt that neither rebased, trimmed
// nor dropped keeps the one before it up to its edit log's last edit block
// (which typing on replaces).
func TestLateDocumentsRandomSession(t *testing.T) {
	all := workspace(t, "header.go", "cookie.go", "response.go", "clone.go")
	for _, budget := range []int{0, 9000} {
		t.Run(fmt.Sprint("budget=", budget), func(t *testing.T) {
			docs := slices.Clone(all)
			s := newSession(t, cache.Config{LateInLog: true, MaxLogTokens: 300, BudgetTokens: budget})
			ed := editor{rand.New(rand.NewPCG(11, uint64(budget)))}
			now := t0
			open := []int{0}
			active, off := 0, 100
			var prev *cache.Prompt
			late, settled := 0, 0
			trimmed := map[string]bool{}
			for step := 0; step < 150; step++ {
				switch r := ed.r.IntN(10); {
				case r == 0 && len(open) < len(docs):
					for _, i := range ed.r.Perm(len(docs)) {
						if !slices.Contains(open, i) {
							open = append(open, i)
							break
						}
					}
				case r == 1 && len(open) > 1:
					k := ed.r.IntN(len(open))
					if open[k] != active {
						open = slices.Delete(open, k, k+1)
					}
				case r < 4:
					active = open[ed.r.IntN(len(open))]
					off = ed.r.IntN(len(docs[active].Text))
				}
				docs[active].Text, off = ed.edit(docs[active].Text, off)
				docs[active].LastEdited = int64(100 + step)
				now = now.Add(time.Duration(1+ed.r.IntN(20)) * time.Second)
				var shown []cache.Document
				for _, i := range open {
					shown = append(shown, docs[i])
				}
				slices.SortFunc(shown, func(a, b cache.Document) int { return strings.Compare(a.Path, b.Path) })
				at := slices.IndexFunc(shown, func(d cache.Document) bool { return d.Path == docs[active].Path })
				p := build(t, s, request(shown, at, off, "fix", now))
				for _, k := range p.Trimmed {
					trimmed[k] = true // out until the next layout afresh
				}
				var want []cache.Document
				for _, d := range shown {
					if !trimmed[d.Path] || d.Path == shown[at].Path {
						want = append(want, d)
					}
				}
				checkReconstruct(t, p, want)
				if strings.Contains(p.Messages[2].Content, "<file ") {
					late++
				}
				if prev != nil && p.Layout == "" {
					// Typing on replaces the log's last edit block (never
					// a file block): the rest stays.
					log := logPart(prev)
					if i := strings.LastIndex(log, "<edit "); i >= 0 && i > strings.LastIndex(log, "<file ") {
						log = log[:i]
					}
					if p.Messages[1] != prev.Messages[1] || !strings.HasPrefix(p.Messages[2].Content, log) {
						t.Fatalf("step %d: no layout change, but the prompt does not keep the previous one's", step)
					}
				}
				if prev != nil && strings.Contains(prev.Messages[2].Content, "<file ") && !strings.Contains(p.Messages[2].Content, "<file ") {
					settled++
				}
				prev = p
			}
			t.Logf("%d prompts with a file in the log, %d settled, %d files trimmed", late, settled, len(trimmed))
			if late == 0 || settled == 0 {
				t.Errorf("%d prompts with a file in the log, %d settled: the session does not test them", late, settled)
			}
		})
	}
}

// logPart is the last message of p up to its request block.
func logPart(p *cache.Prompt) string {
	c := p.Messages[2].Content
	if i := strings.Index(c, "<request "); i >= 0 {
		return c[:i]
	}
	return c
}
