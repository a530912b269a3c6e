package cache_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
)

var t0 = time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)

// tools stands for the constant tool definitions a caller sends.
var tools = []byte(`[{"type":"function","function":{"name":"replace_text","parameters":{"type":"object"}}}]`)

func goroot(t testing.TB) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// workspace returns documents made of real net/http sources.
func workspace(t testing.TB, names ...string) []cache.Document {
	t.Helper()
	var docs []cache.Document
	for i, n := range names {
		b, err := os.ReadFile(filepath.Join(goroot(t), "src", "net", "http", n))
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, cache.Document{Path: "net/http/" + n, Language: "go", Text: string(b), Version: 1, LastEdited: int64(i + 1)})
	}
	return docs
}

var project = cache.Project{Name: "http", Languages: []string{"go"}, Conventions: "gofmt; tests beside the code."}

func newSession(t testing.TB, cfg cache.Config) *cache.Session {
	t.Helper()
	if cfg.Tools == nil {
		cfg.Tools = tools
	}
	s, err := cache.NewSession(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func build(t testing.TB, s *cache.Session, req cache.Request) *cache.Prompt {
	t.Helper()
	p, err := s.Build(req)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return p
}

// request returns a request on docs with the active document at index a and
// a selection of the line holding byte off.
func request(docs []cache.Document, a int, off int, action string, at time.Time) cache.Request {
	text := docs[a].Text
	off = min(off, len(text))
	start := strings.LastIndexByte(text[:off], '\n') + 1
	end := len(text)
	if i := strings.IndexByte(text[off:], '\n'); i >= 0 {
		end = off + i
	}
	return cache.Request{
		Project:     project,
		Documents:   docs,
		Active:      docs[a].Path,
		Selection:   cache.Selection{Start: start, End: end},
		Action:      action,
		Instruction: "Explain the selected code.",
		Now:         at,
	}
}

func render(p *cache.Prompt) []byte { return cache.Render(nil, tools, p.Messages) }

// commonPrefix returns the length of the common prefix of a and b.
func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// tailStart returns the offset in the rendering of p where its request
// block starts.
func tailStart(t testing.TB, p *cache.Prompt) int {
	t.Helper()
	r := render(p)
	i := bytes.LastIndex(r, []byte("<request action="))
	if i < 0 {
		t.Fatal("no request block")
	}
	return i
}

func TestNoEditsIdenticalUpToTail(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go", "response.go")
	s := newSession(t, cache.Config{})
	p1 := build(t, s, request(docs, 1, 500, "explain", t0))
	// Same everything: the whole prompt is the same.
	p2 := build(t, s, request(docs, 1, 500, "explain", t0.Add(time.Second)))
	if !bytes.Equal(render(p1), render(p2)) {
		t.Fatalf("identical requests gave different prompts (diverged at %d in %s)", p2.Diverged, p2.DivergedIn)
	}
	// Another selection: identical up to the request block.
	p3 := build(t, s, request(docs, 1, 3000, "explain", t0.Add(2*time.Second)))
	r2, r3 := render(p2), render(p3)
	ts := tailStart(t, p2)
	if n := commonPrefix(r2, r3); n < ts {
		t.Errorf("prefix diverged at %d, before the request block at %d", n, ts)
	}
	if p3.Diverged < ts || p3.DivergedIn != "request" {
		t.Errorf("Diverged = %d in %q, want >= %d in request", p3.Diverged, p3.DivergedIn, ts)
	}
	if p2.Layout != "" || p3.Layout != "" {
		t.Errorf("layout rewritten without cause: %q, %q", p2.Layout, p3.Layout)
	}
}

func TestSwitchingActionsKeepsPrefix(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go")
	s := newSession(t, cache.Config{})
	var prev []byte
	var prevTail int
	for i, act := range []string{"explain", "fix", "rewrite", "document", "tests", "my-action"} {
		req := request(docs, 0, 800, act, t0.Add(time.Duration(i)*time.Second))
		req.Instruction = "Do " + act + " on the selection."
		if act == "fix" {
			req.Diagnostics = []cache.Diagnostic{{StartLine: 20, EndLine: 20, Severity: cache.SeverityError, Source: "compiler", Message: "undefined: x"}}
		}
		p := build(t, s, req)
		r := render(p)
		if p.Messages[0].Content != cache.DefaultSystem {
			t.Errorf("%s: the system message changed", act)
		}
		if prev != nil {
			if n := commonPrefix(prev, r); n < prevTail {
				t.Errorf("%s: prefix diverged at %d, before the request block at %d", act, n, prevTail)
			}
		}
		prev, prevTail = r, tailStart(t, p)
	}
}

func TestSystemMessageConstant(t *testing.T) {
	a := newSession(t, cache.Config{})
	b := newSession(t, cache.Config{TTL: time.Hour})
	da := workspace(t, "header.go")
	db := workspace(t, "cookie.go")
	pa := build(t, a, request(da, 0, 10, "explain", t0))
	reqB := request(db, 0, 10, "fix", t0.Add(time.Hour))
	reqB.Project = cache.Project{Name: "other"}
	pb := build(t, b, reqB)
	if pa.Messages[0] != pb.Messages[0] || pa.Messages[0].Role != "system" {
		t.Errorf("system messages differ between sessions")
	}
	for _, bad := range []string{"2026", "/home", "/tmp", "kimi-k3", "explain"} {
		if strings.Contains(pa.Messages[0].Content, bad) {
			t.Errorf("system message contains %q", bad)
		}
	}
}

func TestEditKeepsPrefixUntilLog(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go", "response.go")
	s := newSession(t, cache.Config{})
	p1 := build(t, s, request(docs, 2, 1000, "explain", t0))
	// Edit the active buffer: the context message must not change; the
	// prompt diverges where the previous request block started, now an
	// edit block.
	docs[2].Text = strings.Replace(docs[2].Text, "package http", "package http // edited", 1)
	docs[2].Version++
	docs[2].LastEdited = 10
	p2 := build(t, s, request(docs, 2, 1000, "explain", t0.Add(time.Second)))
	if p2.Messages[1].Content != p1.Messages[1].Content {
		t.Fatal("an edit rewrote the stable context")
	}
	ts := tailStart(t, p1)
	r1, r2 := render(p1), render(p2)
	// (Both blocks start with "<": the first differing byte is the next.)
	if n := commonPrefix(r1, r2); n != ts+1 || p2.Diverged != ts+1 || p2.DivergedIn != "edits" {
		t.Errorf("diverged at %d (reported %d in %q), want at the old request block %d in edits", n, p2.Diverged, p2.DivergedIn, ts)
	}
	if !strings.HasPrefix(p2.Messages[2].Content, `<edit path="net/http/response.go" seq="1">`) {
		t.Errorf("no edit block at the start of the last message: %.80q", p2.Messages[2].Content)
	}
	// A second edit appends: everything up to the end of the first edit
	// block stays.
	docs[2].Text = strings.Replace(docs[2].Text, "func (r *Response) Cookies()", "func (r *Response) Cookies() /* 2 */", 1)
	docs[2].LastEdited = 11
	p3 := build(t, s, request(docs, 2, 1000, "explain", t0.Add(2*time.Second)))
	ts2 := tailStart(t, p2)
	if n := commonPrefix(r2, render(p3)); n != ts2+1 {
		t.Errorf("second edit diverged at %d, want at %d", n, ts2)
	}
	// An edit to another buffer behaves the same.
	docs[0].Text += "\n// appended\n"
	docs[0].LastEdited = 12
	p4 := build(t, s, request(docs, 2, 1000, "explain", t0.Add(3*time.Second)))
	if n := commonPrefix(render(p3), render(p4)); n != tailStart(t, p3)+1 {
		t.Errorf("edit to another buffer diverged at %d, want at %d", n, tailStart(t, p3))
	}
	checkReconstruct(t, p4, docs)
}

// checkReconstruct checks that the prompt conveys every document's current
// text.
func checkReconstruct(t testing.TB, p *cache.Prompt, docs []cache.Document) {
	t.Helper()
	files, err := cache.Reconstruct(p.Messages)
	if err != nil {
		t.Fatalf("Reconstruct: %v", err)
	}
	for _, d := range docs {
		got, ok := files[d.Path]
		if !ok {
			t.Fatalf("%s is not in the prompt", d.Path)
		}
		if got != d.Text {
			t.Fatalf("%s reconstructed differs from its text (%d vs %d bytes)", d.Path, len(got), len(d.Text))
		}
	}
}

// editor makes random small edits near a line, like a user typing.
// editor makes the small random edits of cachetest.Editor.
type editor struct {
	r *rand.Rand
}

func (e editor) edit(text string, off int) (string, int) {
	return cachetest.Editor{R: e.r}.Edit(text, off)
}

func TestReconstructAfterManyEditsAndRebase(t *testing.T) {
	for _, maxLog := range []int{-1, 300, 2048} {
		t.Run(fmt.Sprint("maxLog=", maxLog), func(t *testing.T) {
			docs := workspace(t, "header.go", "cookie.go", "response.go", "clone.go")
			s := newSession(t, cache.Config{MaxLogTokens: maxLog})
			ed := editor{rand.New(rand.NewPCG(7, uint64(maxLog+10)))}
			now := t0
			active, off := 0, 100
			rebases := 0
			for step := 0; step < 120; step++ {
				if ed.r.IntN(6) == 0 {
					active = ed.r.IntN(len(docs))
					off = ed.r.IntN(len(docs[active].Text))
				}
				docs[active].Text, off = ed.edit(docs[active].Text, off)
				docs[active].Version++
				docs[active].LastEdited = int64(100 + step)
				now = now.Add(time.Duration(5+ed.r.IntN(60)) * time.Second)
				if step == 70 {
					now = now.Add(10 * time.Minute) // cold: folds the log
				}
				p := build(t, s, request(docs, active, off, "fix", now))
				if strings.Contains(p.Layout, "rebase") {
					rebases++
				}
				if step == 70 && (!strings.Contains(p.Layout, "cold") || strings.Contains(p.Messages[2].Content, "<edit ")) {
					t.Errorf("after a cold gap: layout %q, want cold and no edit log", p.Layout)
				}
				checkReconstruct(t, p, docs)
			}
			if maxLog == 300 && rebases == 0 {
				t.Error("no rebase with a 300-token log limit")
			}
			if maxLog == -1 && rebases != 0 {
				t.Errorf("%d rebases with rebasing off", rebases)
			}
		})
	}
}

func TestRebaseMovesEditedFilesLast(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go", "response.go", "clone.go")
	s := newSession(t, cache.Config{MaxLogTokens: 200})
	p := build(t, s, request(docs, 3, 100, "explain", t0))
	order := func(p *cache.Prompt) []string {
		var paths []string
		for _, l := range strings.Split(p.Messages[1].Content, "\n") {
			if strings.HasPrefix(l, "<file path=") {
				paths = append(paths, strings.Split(l, `"`)[1])
			}
		}
		return paths
	}
	want := []string{"net/http/header.go", "net/http/cookie.go", "net/http/response.go", "net/http/clone.go"}
	if got := order(p); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("initial order %v, want %v (least recently edited first, active last)", got, want)
	}
	// Edit cookie.go (not active) until the log is rebased.
	for i := 0; i < 50 && !strings.Contains(p.Layout, "rebase"); i++ {
		docs[1].Text = fmt.Sprintf("// change %d\n", i) + docs[1].Text
		docs[1].LastEdited = int64(10 + i)
		p = build(t, s, request(docs, 3, 100, "explain", t0.Add(time.Duration(i+1)*time.Second)))
	}
	if !strings.Contains(p.Layout, "rebase") {
		t.Fatal("no rebase")
	}
	want = []string{"net/http/header.go", "net/http/response.go", "net/http/clone.go", "net/http/cookie.go"}
	if got := order(p); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("order after rebase %v, want %v", got, want)
	}
	if strings.Contains(p.Messages[2].Content, "<edit ") {
		t.Error("edit log kept after a rebase")
	}
	checkReconstruct(t, p, docs)
}

func TestDocumentOrderDoesNotMatter(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go", "response.go")
	rev := []cache.Document{docs[2], docs[0], docs[1]}
	a := newSession(t, cache.Config{})
	b := newSession(t, cache.Config{})
	pa := build(t, a, request(docs, 0, 10, "explain", t0))
	pb := build(t, b, request(rev, 1, 10, "explain", t0))
	if !bytes.Equal(render(pa), render(pb)) {
		t.Error("the order of Request.Documents changed the prompt")
	}
}

func TestOpenFileAppends(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go", "response.go")
	s := newSession(t, cache.Config{})
	p1 := build(t, s, request(docs[:2], 0, 10, "explain", t0))
	p2 := build(t, s, request(docs, 0, 10, "explain", t0.Add(time.Second)))
	if !strings.HasPrefix(p2.Messages[1].Content, p1.Messages[1].Content) || p2.Layout != "open" {
		t.Errorf("opening a file rewrote the context (layout %q)", p2.Layout)
	}
	checkReconstruct(t, p2, docs)
	// Closing one keeps the prefix (the file stays until the next rewrite).
	p3 := build(t, s, request(docs[1:], 0, 10, "explain", t0.Add(2*time.Second)))
	if p3.Messages[1].Content != p2.Messages[1].Content {
		t.Error("closing a file rewrote the context")
	}
}

func TestProjectChangeRelayouts(t *testing.T) {
	docs := workspace(t, "header.go")
	s := newSession(t, cache.Config{})
	build(t, s, request(docs, 0, 10, "explain", t0))
	req := request(docs, 0, 10, "explain", t0.Add(time.Second))
	req.Project.Conventions = "new rules"
	p := build(t, s, req)
	if p.Layout != "project" || !strings.Contains(p.Messages[1].Content, "new rules") {
		t.Errorf("layout %q after a project change", p.Layout)
	}
}

func TestBudgetTrimsWholeFilesInLargeSteps(t *testing.T) {
	names := []string{"header.go", "cookie.go", "response.go", "clone.go", "transfer.go", "client.go"}
	docs := workspace(t, names...)
	total := 0
	for _, d := range docs {
		total += len(d.Text)
	}
	budget := int(float64(total) / 3.2 * 0.6) // room for about 60% of the files
	s := newSession(t, cache.Config{BudgetTokens: budget})
	p := build(t, s, request(docs, 0, 10, "explain", t0))
	if len(p.Trimmed) == 0 || !strings.Contains(p.Layout, "trim") {
		t.Fatalf("no trim: layout %q, estimate %d, budget %d", p.Layout, p.EstimatedTokens, budget)
	}
	if p.EstimatedTokens > int(float64(budget)*0.8) {
		t.Errorf("estimate %d after trim, want at most about 3/4 of the budget %d", p.EstimatedTokens, budget)
	}
	files, err := cache.Reconstruct(p.Messages)
	if err != nil {
		t.Fatal(err)
	}
	if files[docs[0].Path] != docs[0].Text {
		t.Error("the active file was trimmed")
	}
	for _, path := range p.Trimmed {
		if _, ok := files[path]; ok {
			t.Errorf("%s trimmed but still in the prompt", path)
		}
	}
	// At the start nothing is cached: the least recently edited go first
	// (header.go is active and stays).
	if p.Trimmed[0] != "net/http/cookie.go" {
		t.Errorf("first trimmed %s, want the least recently edited cookie.go", p.Trimmed[0])
	}
	// Small growth does not trim again: the step was large.
	for i := 0; i < 10; i++ {
		docs[0].Text += "// more text in the active buffer, line " + fmt.Sprint(i) + "\n"
		docs[0].LastEdited = int64(100 + i)
		p2 := build(t, s, request(docs, 0, 10, "explain", t0.Add(time.Duration(i+1)*time.Second)))
		if len(p2.Trimmed) > 0 {
			t.Fatalf("step %d trimmed again: %v", i, p2.Trimmed)
		}
		checkReconstructSome(t, p2, docs[0])
	}
	// Past the budget again later, the trim takes files from the end of
	// the stable part and keeps the prefix before them.
	before := build(t, s, request(docs, 0, 10, "explain", t0.Add(20*time.Second)))
	docs[0].Text += strings.Repeat("// padding to exceed the budget\n", budget/8)
	docs[0].LastEdited = 1000
	after := build(t, s, request(docs, 0, 10, "explain", t0.Add(21*time.Second)))
	if len(after.Trimmed) == 0 {
		t.Fatalf("no second trim, estimate %d budget %d", after.EstimatedTokens, budget)
	}
	if after.Diverged < len(tools)+len(cache.DefaultSystem) {
		t.Errorf("second trim diverged at %d, inside the system part", after.Diverged)
	}
	_ = before
	checkReconstructSome(t, after, docs[0])
}

func checkReconstructSome(t testing.TB, p *cache.Prompt, docs ...cache.Document) {
	t.Helper()
	checkReconstruct(t, p, docs)
}

func TestOverBudgetKeepsActive(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go")
	s := newSession(t, cache.Config{BudgetTokens: 100})
	p := build(t, s, request(docs, 1, 10, "explain", t0))
	if !p.OverBudget {
		t.Error("OverBudget not set")
	}
	checkReconstructSome(t, p, docs[1])
}

func TestValidation(t *testing.T) {
	docs := workspace(t, "header.go")
	s := newSession(t, cache.Config{})
	tests := []struct {
		name string
		edit func(*cache.Request)
		want string
	}{
		{"absolute path", func(r *cache.Request) { r.Documents[0].Path = "/home/u/x.go"; r.Active = "/home/u/x.go" }, "absolute"},
		{"dotdot", func(r *cache.Request) { r.Documents[0].Path = "../x.go"; r.Active = "../x.go" }, "leaves the workspace"},
		{"empty path", func(r *cache.Request) { r.Documents[0].Path = ""; r.Active = "" }, "empty path"},
		{"duplicate", func(r *cache.Request) { r.Documents = append(r.Documents, r.Documents[0]) }, "twice"},
		{"no active", func(r *cache.Request) { r.Active = "nope.go" }, "not among"},
		{"selection past end", func(r *cache.Request) { r.Selection.End = len(docs[0].Text) + 1 }, "outside"},
		{"selection reversed", func(r *cache.Request) { r.Selection = cache.Selection{Start: 10, End: 5} }, "outside"},
		{"selection splits a rune", func(r *cache.Request) {
			r.Documents[0].Text = "héllo"
			r.Selection = cache.Selection{Start: 2, End: 3}
		}, "inside a UTF-8 character"},
	}
	if runtime.GOOS == "windows" {
		// Elsewhere C:\x.go is a file name (#21.7; TestDriveLikeFileNames).
		tests = append(tests, struct {
			name string
			edit func(*cache.Request)
			want string
		}{"windows path", func(r *cache.Request) { r.Documents[0].Path = `C:\x.go`; r.Active = `C:\x.go` }, "absolute"})
	}
	for _, tt := range tests {
		req := request(docs, 0, 10, "explain", t0)
		req.Documents = append([]cache.Document(nil), req.Documents...)
		tt.edit(&req)
		_, err := s.Build(req)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: got error %v, want one containing %q", tt.name, err, tt.want)
		}
	}
	if st := s.Stats(); st.Built != 0 {
		t.Errorf("failed builds counted: %+v", st)
	}
	for _, cfg := range []cache.Config{{TTL: time.Minute}, {BudgetTokens: -1}, {CharsPerToken: 100}} {
		if _, err := cache.NewSession(cfg); err == nil {
			t.Errorf("NewSession(%+v) succeeded", cfg)
		}
	}
}

func TestTail(t *testing.T) {
	text := "package a\n\nfunc f() {\n\treturn\n}\n"
	docs := []cache.Document{{Path: "a.go", Language: "go", Text: text}}
	s := newSession(t, cache.Config{WindowLines: 1})
	sel := strings.Index(text, "return")
	req := cache.Request{
		Project: project, Documents: docs, Active: "a.go",
		Selection:   cache.Selection{Start: sel, End: sel + len("return")},
		Diagnostics: []cache.Diagnostic{{StartLine: 3, EndLine: 3, Severity: cache.SeverityWarning, Message: "naked return"}},
		Action:      "fix", Instruction: "Fix it.\n", Now: t0,
	}
	p := build(t, s, req)
	want := `<request action="fix">
<active path="a.go" language="go" lines="5"/>
<selection lines="4-4" window="3-5">
func f() {
	<|selection|>return<|/selection|>
}
</selection>
<diagnostics>
- lines 4-4 warning: naked return
</diagnostics>
<instruction>
Fix it.
</instruction>
</request>
`
	if got := p.Messages[2].Content; got != want {
		t.Errorf("tail:\n%s\nwant:\n%s", got, want)
	}
	req.Selection = cache.Selection{Start: sel + 2, End: sel + 2}
	p = build(t, s, req)
	if !strings.Contains(p.Messages[2].Content, "\tre<|cursor|>turn\n") || !strings.Contains(p.Messages[2].Content, `cursor="4:4"`) {
		t.Errorf("cursor tail:\n%s", p.Messages[2].Content)
	}
}

// TestPredictionMatchesSimulator plays a scripted session against the cache
// simulator and checks that the tracker's predictions match the cached
// tokens the simulator reports: exactly-counted, within one block; with the
// offline estimate, within a few percent once corrected by usage.
func TestPredictionMatchesSimulator(t *testing.T) {
	for _, mode := range []string{"exact", "estimate"} {
		for _, block := range []int{16, 256} {
			t.Run(fmt.Sprintf("%s/block%d", mode, block), func(t *testing.T) {
				cfg := cache.Config{BlockTokens: block, MinCacheTokens: 1024, MaxLogTokens: 400}
				if mode == "exact" {
					cfg.CountTokens = cachetest.Count
				}
				s := newSession(t, cfg)
				sim := cachetest.New(cachetest.Config{BlockTokens: block, MinTokens: 1024})
				docs := workspace(t, "header.go", "cookie.go", "response.go", "clone.go")
				ed := editor{rand.New(rand.NewPCG(11, uint64(block)))}
				now := t0
				active, off := 0, 300
				var worst float64
				for step := 0; step < 60; step++ {
					switch {
					case step == 30:
						now = now.Add(6 * time.Minute) // cold
					case step%9 == 4:
						active = (active + 1) % len(docs)
					default:
						docs[active].Text, off = ed.edit(docs[active].Text, min(off, len(docs[active].Text)))
						docs[active].LastEdited = int64(100 + step)
					}
					now = now.Add(20 * time.Second)
					p := build(t, s, request(docs, active, min(off, len(docs[active].Text)), "explain", now))
					pt, cached, written := sim.Observe(now, render(p), p.TTL)
					if _, err := s.Record(p.Handle, cache.Usage{PromptTokens: pt, CachedTokens: cached, CacheWriteTokens: written, CompletionTokens: 50}); err != nil {
						t.Fatal(err)
					}
					diff := math.Abs(float64(p.PredictedCachedTokens - cached))
					switch {
					case mode == "exact" && diff > float64(block):
						t.Errorf("step %d: predicted %d cached, simulator %d (layout %q)", step, p.PredictedCachedTokens, cached, p.Layout)
					case mode == "estimate" && step > 3 && diff > float64(block)+0.05*float64(pt):
						t.Errorf("step %d: predicted %d cached, simulator %d of %d", step, p.PredictedCachedTokens, cached, pt)
					}
					if pt > 0 {
						worst = max(worst, diff/float64(pt))
					}
				}
				st := s.Stats()
				t.Logf("hit ratio %.3f, predicted/cached %.3f, worst error %.2f%% of prompt, estimate ratio %.3f",
					st.HitRatio, float64(st.PredictedCachedTokens)/float64(st.CachedTokens), 100*worst, st.TokensPerEstimate)
			})
		}
	}
}

func TestRecordAndStats(t *testing.T) {
	docs := workspace(t, "header.go")
	s := newSession(t, cache.Config{Prices: cache.Prices{
		"m":  {Input: 2, CachedInput: 0.2, CacheWrite5m: 2.5, CacheWrite1h: 4, Output: 10},
		"m2": {Input: 1},
	}, Model: "m"})
	p1 := build(t, s, request(docs, 0, 10, "explain", t0))
	a, err := s.Record(p1.Handle, cache.Usage{PromptTokens: 1_000_000, CachedTokens: 600_000, CacheWriteTokens: 300_000, CompletionTokens: 100_000, ReasoningTokens: 80_000})
	if err != nil {
		t.Fatal(err)
	}
	// plain 100k × 2 + cached 600k × 0.2 + write 300k × 2.5 = 0.2 + 0.12 + 0.75
	if !a.Priced || math.Abs(a.InputCostUSD-1.07) > 1e-9 || math.Abs(a.OutputCostUSD-1.0) > 1e-9 || math.Abs(a.UncachedInputCostUSD-2.0) > 1e-9 {
		t.Errorf("accounting %+v", a)
	}
	if _, err := s.Record(p1.Handle, cache.Usage{PromptTokens: 1}); !errors.Is(err, cache.ErrUnknownHandle) {
		t.Errorf("second Record: got %v, want ErrUnknownHandle", err)
	}
	req := request(docs, 0, 10, "explain", t0.Add(time.Second))
	req.Model = "unpriced"
	p2 := build(t, s, req)
	if a, _ := s.Record(p2.Handle, cache.Usage{PromptTokens: 10, CachedTokens: 5}); a.Priced {
		t.Error("unpriced model priced")
	}
	p3 := build(t, s, request(docs, 0, 10, "explain", t0.Add(2*time.Second)))
	if _, err := s.Record(p3.Handle, cache.Usage{}); err != nil {
		t.Error(err)
	}
	p4 := build(t, s, request(docs, 0, 10, "explain", t0.Add(3*time.Second)))
	if _, err := s.Record(p4.Handle, cache.Usage{PromptTokens: 10, CachedTokens: -1}); err == nil {
		t.Error("negative usage accepted")
	}
	// The bad usage recorded nothing and left the handle pending.
	if _, err := s.Record(p4.Handle, cache.Usage{}); err != nil {
		t.Errorf("Record after a refused usage: %v", err)
	}
	st := s.Stats()
	if st.Requests != 4 || st.PromptTokens != 1_000_010 || st.CachedTokens != 600_005 || st.UnpricedRequests != 1 || st.UnknownUsage != 2 || st.Built != 4 {
		t.Errorf("Stats() = %+v", st)
	}
	if math.Abs(st.HitRatio-600_005.0/1_000_010) > 1e-12 || math.Abs(st.CostUSD-2.07) > 1e-9 {
		t.Errorf("hit ratio %v cost %v", st.HitRatio, st.CostUSD)
	}
	js, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"requests":4`, `"promptTokens":`, `"cachedTokens":`, `"cacheWriteTokens":`, `"hitRatio":`, `"costUSD":`} {
		if !bytes.Contains(js, []byte(k)) {
			t.Errorf("stats JSON %s lacks %s", js, k)
		}
	}
}

// TestOneHourWritePrice: 1h writes cost the 1h rate, whether the session
// or the request (a TTL changed at run time, issue 13 item 6) asks for 1h.
func TestOneHourWritePrice(t *testing.T) {
	docs := workspace(t, "header.go")
	for _, byRequest := range []bool{false, true} {
		cfg := cache.Config{TTL: time.Hour}
		req := request(docs, 0, 10, "explain", t0)
		if byRequest {
			cfg.TTL, req.TTL = 0, time.Hour
		}
		s := newSession(t, cfg)
		p := build(t, s, req)
		if p.TTL != time.Hour {
			t.Errorf("TTL %v", p.TTL)
		}
		a, err := s.Record(p.Handle, cache.Usage{PromptTokens: 1_000_000, CacheWriteTokens: 1_000_000})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(a.InputCostUSD-4.0) > 1e-9 {
			t.Errorf("1h (by request: %v) write of 1M tokens cost %v, want 4.00", byRequest, a.InputCostUSD)
		}
	}
}

// TestTTLChangedAtRunTime: a session started with 5m whose requests then
// ask for 1h (issue 13 item 6): follow-ups are priced at the 1h rate (see
// TestOneHourWritePrice for the prompt), and after 6 idle minutes the
// layout is not rewritten as if the cache were cold; past an hour it is.
func TestTTLChangedAtRunTime(t *testing.T) {
	docs := workspace(t, "header.go")
	s := newSession(t, cache.Config{Model: "m", Prices: cache.Prices{"m": {Input: 2, CacheWrite5m: 2, CacheWrite1h: 4}}})
	req := request(docs, 0, 10, "explain", t0)
	req.TTL = time.Hour
	build(t, s, req)
	f, _ := s.RecordFollowUp("m", cache.Usage{PromptTokens: 1_000_000, CacheWriteTokens: 1_000_000, CacheTTL: time.Hour})
	if math.Abs(f.InputCostUSD-4.0) > 1e-9 {
		t.Errorf("1h follow-up write cost %v, want 4.00", f.InputCostUSD)
	}
	req = request(docs, 0, 12, "explain", t0.Add(6*time.Minute))
	req.TTL = time.Hour
	if p := build(t, s, req); strings.Contains(p.Layout, "cold") || p.PredictedCachedTokens == 0 {
		t.Errorf("6 minutes idle with a 1h cache: layout %q, predicted %d cached", p.Layout, p.PredictedCachedTokens)
	}
	req = request(docs, 0, 12, "explain", t0.Add(6*time.Minute+61*time.Minute))
	if p := build(t, s, req); !strings.Contains(p.Layout, "cold") || p.TTL != 5*time.Minute {
		t.Errorf("an hour idle: layout %q, TTL %v", p.Layout, p.TTL)
	}
	// Back to 5m: the next idle gap is judged by 5m again.
	req = request(docs, 0, 12, "explain", t0.Add(6*time.Minute+61*time.Minute+6*time.Minute))
	if p := build(t, s, req); !strings.Contains(p.Layout, "cold") {
		t.Errorf("6 minutes idle after a 5m request: layout %q", p.Layout)
	}
	req.TTL = 2 * time.Hour
	if _, err := s.Build(req); err == nil {
		t.Error("a 2h TTL was accepted")
	}
}

// TestEstimatedUsage: usage the caller estimated (the reply had none) is
// priced and counted as estimated, and does not move the estimator.
func TestEstimatedUsage(t *testing.T) {
	docs := workspace(t, "header.go")
	s := newSession(t, cache.Config{Model: "m", Prices: cache.Prices{"m": {Input: 2, Output: 10}}})
	p := build(t, s, request(docs, 0, 10, "explain", t0))
	if _, err := s.Record(p.Handle, cache.Usage{PromptTokens: 10 * p.EstimatedTokens, CompletionTokens: 100_000, Estimated: true}); err != nil {
		t.Fatal(err)
	}
	s.RecordFollowUp("m", cache.Usage{PromptTokens: 100, Estimated: true})
	st := s.Stats()
	if st.EstimatedUsage != 2 || st.UnknownUsage != 0 || st.Requests != 2 || st.CostUSD < 1 || st.TokensPerEstimate != 1 {
		t.Errorf("stats %+v", st)
	}
	js, _ := json.Marshal(st)
	if !bytes.Contains(js, []byte(`"estimatedUsage":2`)) {
		t.Errorf("kimi.stats JSON %s", js)
	}
}

// logBuffer collects debug logs.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func TestUnexpectedMissLogsDivergence(t *testing.T) {
	var logs logBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	docs := workspace(t, "header.go", "cookie.go")
	s := newSession(t, cache.Config{Logger: logger, BlockTokens: 16})
	p1 := build(t, s, request(docs, 0, 10, "explain", t0))
	s.Record(p1.Handle, cache.Usage{PromptTokens: p1.EstimatedTokens, CacheWriteTokens: p1.EstimatedTokens})
	p2 := build(t, s, request(docs, 0, 10, "explain", t0.Add(time.Second)))
	if p2.PredictedCachedTokens == 0 {
		t.Fatal("nothing predicted for an identical prompt")
	}
	// The provider cached nothing: say where the prompt diverged.
	if _, err := s.Record(p2.Handle, cache.Usage{PromptTokens: p2.EstimatedTokens}); err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	if !strings.Contains(out, "fewer tokens cached than predicted") || !strings.Contains(out, "diverged_at=") {
		t.Errorf("no divergence log:\n%s", out)
	}
	// A miss the tracker predicted is not logged as unexpected.
	logs.buf.Reset()
	p3 := build(t, s, request(docs, 0, 10, "explain", t0.Add(time.Hour)))
	if p3.PredictedCachedTokens != 0 {
		t.Errorf("predicted %d cached after an hour", p3.PredictedCachedTokens)
	}
	s.Record(p3.Handle, cache.Usage{PromptTokens: p3.EstimatedTokens})
	if strings.Contains(logs.String(), "fewer tokens cached") {
		t.Error("an expected miss was logged as unexpected")
	}
}

func TestConcurrentUse(t *testing.T) {
	docs := workspace(t, "header.go", "cookie.go")
	s := newSession(t, cache.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			local := append([]cache.Document(nil), docs...)
			for i := 0; i < 20 && ctx.Err() == nil; i++ {
				local[g%2].Text = docs[g%2].Text + strings.Repeat("// x\n", i)
				p, err := s.Build(request(local, g%2, 10, "explain", t0.Add(time.Duration(i)*time.Second)))
				if err != nil {
					t.Error(err)
					return
				}
				s.Record(p.Handle, cache.Usage{PromptTokens: 100, CachedTokens: 50})
				s.Stats()
			}
		}()
	}
	wg.Wait()
	if st := s.Stats(); st.Requests != 80 {
		t.Errorf("Requests = %d, want 80", st.Requests)
	}
}

func TestReconstructRejectsGarbage(t *testing.T) {
	for _, c := range []string{
		"<file path=\"a\" bytes=\"99\">\nshort\n</file>\n",
		"<file path=\"a\">\nx\n</file>\n",
		"<edit path=\"a\" seq=\"1\">\n@@ -1,1 +1,1 @@\n-x\n+y\n</edit>\n",
		"<file path=\"a\" bytes=\"2\">\nx\n\n</file>\n\n<edit path=\"a\" seq=\"1\">\n@@ -1,1 +1,1 @@\n-z\n+y\n</edit>\n",
		"<edit path=\"a\" seq=\"1\">\n@@ -1,1 +1,1 @@\n",
	} {
		if _, err := cache.Reconstruct([]cache.Message{{Role: "user", Content: c}}); !errors.Is(err, cache.ErrMalformed) {
			t.Errorf("Reconstruct(%q): got %v, want ErrMalformed", c, err)
		}
	}
}

func FuzzReconstruct(f *testing.F) {
	f.Add("<file path=\"a\" bytes=\"2\">\nx\n\n</file>\n\n<edit path=\"a\" seq=\"1\">\n@@ -1,1 +1,1 @@\n-x\n+y\n</edit>\n")
	f.Add("<project name=\"p\" languages=\"go\">\n</project>\n\n<request action=\"x\">\n")
	f.Add("<file path=\"a \\\"bytes=\\\"1\" bytes=\"0\">\n\n</file>\n\n")
	f.Add("<file path=\"a\" language=\"go\" part=\"func F\" line=\"3\" bytes=\"2\">\nx\n\n</file>\n\n<context>\n<file path=\"b\" bytes=\"1\">\ny\n</file>\n\n</context>\n\n<edit path=\"a\" part=\"func F\" seq=\"1\">\n@@ -1,1 +1,1 @@\n-x\n+y\n</edit>\n")
	f.Add("<context>\n<file path=\"b\" bytes=\"9\">\ny\n</file>\n")
	f.Fuzz(func(t *testing.T, s string) {
		cache.Reconstruct([]cache.Message{{Role: "user", Content: s}}) // must not panic
	})
}

func TestRecordFollowUp(t *testing.T) {
	docs := workspace(t, "header.go")
	s := newSession(t, cache.Config{})
	p := build(t, s, request(docs, 0, 10, "fix", t0))
	if _, err := s.Record(p.Handle, cache.Usage{PromptTokens: 1000, CachedTokens: 0, CacheWriteTokens: 1000}); err != nil {
		t.Fatal(err)
	}
	// A second round of a tool-call loop: the same prompt and more.
	a, err := s.RecordFollowUp(cache.DefaultModel, cache.Usage{PromptTokens: 1200, CachedTokens: 1000, CacheWriteTokens: 200, CompletionTokens: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Priced || math.Abs(a.InputCostUSD-(1000*0.2+200*2.0)/1e6) > 1e-12 {
		t.Errorf("follow-up accounting %+v", a)
	}
	if _, err := s.RecordFollowUp(cache.DefaultModel, cache.Usage{PromptTokens: 5, CacheWriteTokens: -1}); err == nil {
		t.Error("negative usage accepted")
	}
	st := s.Stats()
	if st.Requests != 2 || st.PromptTokens != 2200 || st.CachedTokens != 1000 || st.Built != 1 {
		t.Errorf("Stats() = %+v", st)
	}
}

func TestPredictionPerModel(t *testing.T) {
	// A provider's cache is per model: a prompt cached for one model does
	// not serve another.
	docs := workspace(t, "header.go", "cookie.go")
	s := newSession(t, cache.Config{BlockTokens: 16})
	req := request(docs, 0, 10, "explain", t0)
	req.Model = "kimi-k3.1-pro-highspeed"
	build(t, s, req)
	req = request(docs, 0, 10, "fix", t0.Add(time.Second))
	if p := build(t, s, req); p.PredictedCachedTokens != 0 {
		t.Errorf("predicted %d cached tokens for the first prompt of another model", p.PredictedCachedTokens)
	}
	req = request(docs, 0, 10, "explain", t0.Add(2*time.Second))
	req.Model = "kimi-k3.1-pro-highspeed"
	if p := build(t, s, req); p.PredictedCachedTokens < p.EstimatedTokens/2 {
		t.Errorf("predicted %d of %d cached for a model's second prompt", p.PredictedCachedTokens, p.EstimatedTokens)
	}
}
