package complete

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// pageWalk is a next-edit session on net/http's client.go (1,053 lines)
// whose user edits one line after another down the file, each edit a
// burst that asks once; it returns each request's messages and uncached
// prompt tokens (plain and written, by the stand-in's cache simulator).
type pageWalk struct {
	msgs     [][]string
	uncached []int64
	prompt   []int
}

func walkPages(t *testing.T, lines []int) pageWalk {
	t.Helper()
	f := newFixture(t, `{"nextEdit": {"debounceMs": 0}}`, modeltest.Rule{Content: ""})
	text := cachetest.GoSource(t, "net/http/client.go")
	if n := strings.Count(text, "\n"); n < 1000 {
		t.Fatalf("client.go has %d lines, want 1,000 or more", n)
	}
	s := newNextSession(t, f, text)
	var w pageWalk
	var before int64
	for i, line := range lines {
		// Append a comment to the line: the edit, the cursor after it.
		at := 0
		for range line - 1 {
			at += strings.IndexByte(text[at:], '\n') + 1
		}
		end := at + strings.IndexByte(text[at:], '\n')
		text = text[:end] + fmt.Sprintf(" // walked %d", i) + text[end:]
		s.ver++
		snap := workspace.NewSnapshot(workspace.URI(s.key), "go", s.ver, text)
		s.n.Edited(NextRequest{Key: s.key, Path: "net/http/client.go", Language: "go", Doc: snap, Prev: s.prev})
		s.prev = snap
		f.waitArrived(i + 1)
		waitFor(t, func() bool { return s.n.Stats().Empty == int64(i+1) })
		w.msgs = append(w.msgs, messages(t, f.srv, i))
		tot := f.srv.CacheTotals()[f.cfg.NextEditModel()]
		u := tot.PromptTokens - tot.CachedTokens
		w.uncached = append(w.uncached, u-before)
		before = u
		w.prompt = append(w.prompt, cachetest.Count(f.srv.Requests()[i].Prompt))
		if log := logOf(w.msgs[i][2]); !strings.Contains(log, fmt.Sprintf("// walked %d\n", i)) {
			t.Fatalf("request %d does not show its edit: %q", i, log)
		}
	}
	return w
}

var pageHeader = regexp.MustCompile(`<file path="net/http/client.go" language="go" part="page (\d+)"`)

// TestNextEditPagesKeepThePrefix: a cursor moving down a 1,053-line file,
// 5 lines a request, keeps every request's prompt as a byte-for-byte
// prefix of the next one up to the end of its edit log (the system
// message, the pages first shown, the log with the pages appended to it,
// D106): a page appended goes after the log, with nothing but edit
// blocks after it; and each request after the first writes fewer than
// 1,500 uncached tokens.
func TestNextEditPagesKeepThePrefix(t *testing.T) {
	var lines []int
	for l := 300; l <= 350; l += 5 {
		lines = append(lines, l)
	}
	w := walkPages(t, lines)
	appended := 0
	for i := 1; i < len(w.msgs); i++ {
		prev, cur := w.msgs[i-1], w.msgs[i]
		if cur[0] != prev[0] || cur[1] != prev[1] {
			t.Fatalf("request %d does not keep request %d's first pages: diverged at byte %d of %d", i, i-1, commonLen(cur[1], prev[1]), len(prev[1]))
		}
		if !strings.HasPrefix(logOf(cur[2]), logOf(prev[2])) {
			t.Fatalf("request %d does not keep request %d's edit log: diverged at byte %d of %d", i, i-1,
				commonLen(logOf(cur[2]), logOf(prev[2])), len(logOf(prev[2])))
		}
		added := logOf(cur[2])[len(logOf(prev[2])):]
		if n := strings.Count(added, "<file "); n > 0 {
			appended++
			if !strings.HasPrefix(added, "<file ") && !strings.HasPrefix(added, "<edit ") || len(pageHeader.FindAllString(added, -1)) != n {
				t.Errorf("request %d appends more than pages and edits: %.200q", i, added)
			}
		}
		if w.uncached[i] > 1500 {
			t.Errorf("request %d: %d uncached prompt tokens, want at most 1,500", i, w.uncached[i])
		}
	}
	if appended == 0 {
		t.Error("no request appended a page: the walk does not test one")
	}
	t.Logf("uncached tokens a request: %v; prompt tokens: %v; pages appended by %d requests", w.uncached, w.prompt, appended)
}

// TestNextEditPagesKeepTheBudget: a cursor walking the whole 1,053-line
// file, 40 lines a request, never makes a prompt past
// nextEdit.maxContextTokens (its default) nor shows more pages than the layout's
// room: the pages are reset to the ones around the cursor, fewer than a
// first layout shows.
func TestNextEditPagesKeepTheBudget(t *testing.T) {
	var lines []int
	for l := 20; l <= 1040; l += 40 {
		lines = append(lines, l)
	}
	w := walkPages(t, lines)
	budget := config.DefaultNextEditContextTokens
	room := roomFor(splitBudget(budget).windowBytes(0))
	bytesAttr := regexp.MustCompile(`part="page \d+" line="\d+" bytes="(\d+)"`)
	resets := 0
	for i := range w.msgs {
		if w.prompt[i] > budget {
			t.Errorf("request %d: %d prompt tokens, past the budget of %d", i, w.prompt[i], budget)
		}
		shown := 0
		for _, m := range bytesAttr.FindAllStringSubmatch(w.msgs[i][1]+logOf(w.msgs[i][2]), -1) {
			n, _ := strconv.Atoi(m[1])
			shown += n
		}
		if shown == 0 || shown > room {
			t.Errorf("request %d shows %d bytes of pages, want some and at most the room of %d", i, shown, room)
		}
		if i > 0 && w.msgs[i][1] != w.msgs[i-1][1] {
			resets++
			// A reset shows the smaller share (pageReset): its pages
			// before any appended, at most one page on each side more.
			first := 0
			for _, m := range bytesAttr.FindAllStringSubmatch(w.msgs[i][1], -1) {
				n, _ := strconv.Atoi(m[1])
				first += n
			}
			if share := splitBudget(budget).windowBytes(0) * 15 / 100; first > share+2*nextPageLines*80 {
				t.Errorf("request %d: a reset shows %d bytes of pages, want about %d (pageReset)", i, first, share)
			}
		}
	}
	if resets == 0 {
		t.Error("no reset over the whole file")
	}
	t.Logf("prompt tokens: %v; %d resets in %d requests", w.prompt, resets, len(lines))
}

func commonLen(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// TestNextEditPagesShowTheWholeBurst: a burst that changes every fourth
// line of 50 ending at the cursor, after a request at the file's end, is
// shown whole: every
// line it writes is a "+" line of the prompt, however far above the
// cursor it begins (the pages a request needs take in the burst's change).
func TestNextEditPagesShowTheWholeBurst(t *testing.T) {
	f := newFixture(t, `{"nextEdit": {"debounceMs": 0}}`, modeltest.Rule{Content: ""})
	text := cachetest.GoSource(t, "net/http/client.go")
	s := newNextSession(t, f, text)
	lines := strings.SplitAfter(text, "\n")
	edit := func(text string) {
		s.ver++
		snap := workspace.NewSnapshot(workspace.URI(s.key), "go", s.ver, text)
		s.n.Edited(NextRequest{Key: s.key, Path: "net/http/client.go", Language: "go", Doc: snap, Prev: s.prev})
		s.prev = snap
	}
	// A request at the file's end.
	lines[len(lines)-3] = strings.TrimSuffix(lines[len(lines)-3], "\n") + " // at the end\n"
	edit(strings.Join(lines, ""))
	f.waitArrived(1)
	waitFor(t, func() bool { return s.n.Stats().Empty == 1 })
	// One burst: every fourth line from 300 to 348 gets a comment.
	var want []string
	for i := 299; i < 349; i += 4 {
		if strings.TrimSpace(lines[i]) == "" {
			continue
		}
		lines[i] = strings.TrimSuffix(lines[i], "\n") + fmt.Sprintf(" // burst %d\n", i)
		want = append(want, "\n+"+lines[i])
	}
	edit(strings.Join(lines, ""))
	f.waitArrived(2)
	waitFor(t, func() bool { return s.n.Stats().Empty == 2 })
	m := messages(t, f.srv, 1)
	prompt := strings.Join(m, "\n")
	for _, l := range want {
		if !strings.Contains(prompt, l) {
			t.Fatalf("the prompt does not show the burst's line %q", l[1:])
		}
	}
}
