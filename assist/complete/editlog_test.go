package complete

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// cookieGo is net/http's cookie.go (575 lines) from the Go tree that runs
// the test: a real-size file.
func cookieGo(t *testing.T) string {
	t.Helper()
	return cachetest.GoSource(t, "net/http/cookie.go")
}

// messages returns the message texts of the stand-in's i-th request.
func messages(t *testing.T, srv *modeltest.Server, i int) []string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) <= i {
		t.Fatalf("%d requests, want more than %d", len(reqs), i)
	}
	var body struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range body.Messages {
		out = append(out, m.Content)
	}
	if len(out) != 3 {
		t.Fatalf("request %d has %d messages, want 3", i, len(out))
	}
	return out
}

// logOf is the edit log of a next-edit prompt's last message: what comes
// before its request block.
func logOf(last string) string {
	if i := strings.Index(last, "<request "); i >= 0 {
		return last[:i]
	}
	return last
}

// nextSession is a NextEdits on f's stand-in with a document that edits
// one at a time, as the editor reports them.
type nextSession struct {
	t    *testing.T
	n    *NextEdits
	key  string
	prev *workspace.Snapshot
	ver  int32
}

func newNextSession(t *testing.T, f *fixture, text string) *nextSession {
	s := &nextSession{t: t, n: NewNextEdits(NextOptions{Config: f.config, Services: f.svc}), key: string(f.uri), ver: 1}
	s.prev = workspace.NewSnapshot(f.uri, "go", 1, text)
	s.n.Opened(s.key, s.prev)
	return s
}

// edit reports the change from the current text to text; whole makes it
// one change of the whole text (a reload).
func (s *nextSession) edit(text string, whole bool) {
	s.ver++
	snap := workspace.NewSnapshot(workspace.URI(s.key), "go", s.ver, text)
	s.n.Edited(NextRequest{Key: s.key, Path: "net/http/cookie.go", Language: "go", Doc: snap, Prev: s.prev,
		Changes: []workspace.Edit{{Start: 0, End: s.prev.Len(), Text: text}}, Whole: whole})
	s.prev = snap
}

// TestNextEditFirstRequestShowsTheEdit: renaming a parameter in a freshly
// opened 575-line file, the first request's prompt shows the file as
// opened and the rename as a diff; the second request keeps the first
// one's prefix byte for byte, its edit log included, and adds the new
// edit after it.
func TestNextEditFirstRequestShowsTheEdit(t *testing.T) {
	f := newFixture(t, `{"nextEdit": {"debounceMs": 0}}`, modeltest.Rule{Content: ""})
	opened := cookieGo(t)
	s := newNextSession(t, f, opened)
	renamed := cachetest.ReplaceOnce(t, opened, "func readSetCookies(h Header) []*Cookie {", "func readSetCookies(hdr Header) []*Cookie {")
	s.edit(renamed, false)
	f.waitArrived(1)
	waitFor(t, func() bool { return s.n.Stats().Empty == 1 })
	m1 := messages(t, f.srv, 0)
	if !strings.Contains(m1[1], "func readSetCookies(h Header) []*Cookie {") || strings.Contains(m1[1], "hdr Header") {
		t.Fatal("the file block does not show the file as opened")
	}
	log1 := logOf(m1[2])
	if !strings.Contains(log1, "\n-func readSetCookies(h Header) []*Cookie {\n+func readSetCookies(hdr Header) []*Cookie {\n") {
		t.Fatalf("the first request's edit log does not show the rename: %q", log1)
	}

	next := cachetest.ReplaceOnce(t, renamed, "cookieCount := len(h[\"Set-Cookie\"])", "cookieCount := len(hdr[\"Set-Cookie\"])")
	s.edit(next, false)
	f.waitArrived(2)
	waitFor(t, func() bool { return s.n.Stats().Empty == 2 })
	m2 := messages(t, f.srv, 1)
	if m2[0] != m1[0] || m2[1] != m1[1] || !strings.HasPrefix(m2[2], log1) {
		t.Fatal("the second request does not keep the first one's prefix")
	}
	if rest := logOf(m2[2])[len(log1):]; !strings.Contains(rest, "+\tcookieCount := len(hdr[\"Set-Cookie\"])\n") || strings.Contains(rest, "readSetCookies") {
		t.Errorf("the second request's new log block is not the second edit alone: %q", rest)
	}
}

// TestNextEditReloadStartsTheLog: after a reload (one change of the whole
// text, as `:e!` sends it) the next edit's prompt shows the reloaded text
// and that edit, never the reload as an edit of the user's.
func TestNextEditReloadStartsTheLog(t *testing.T) {
	f := newFixture(t, `{"nextEdit": {"debounceMs": 0}}`, modeltest.Rule{Content: ""})
	opened := cookieGo(t)
	s := newNextSession(t, f, opened)
	s.edit(cachetest.ReplaceOnce(t, opened, "func readSetCookies(h Header)", "func readSetCookies(hh Header)"), false)
	f.waitArrived(1)
	waitFor(t, func() bool { return s.n.Stats().Empty == 1 })

	disk := cachetest.ReplaceOnce(t, opened, "// String returns the serialization", "// String (reloaded from disk) returns the serialization")
	s.edit(disk, true)
	if st := s.n.Stats(); st.NotTyped != 1 {
		t.Fatalf("the reload: notTyped = %d, want 1", st.NotTyped)
	}
	s.edit(cachetest.ReplaceOnce(t, disk, "func (c *Cookie) String() string {", "func (ck *Cookie) String() string {"), false)
	f.waitArrived(2)
	waitFor(t, func() bool { return s.n.Stats().Empty == 2 })
	if n := len(f.srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2 (none for the reload)", n)
	}
	m := messages(t, f.srv, 1)
	if !strings.Contains(m[1], "// String (reloaded from disk) returns the serialization") || !strings.Contains(m[1], "func readSetCookies(h Header)") {
		t.Error("the file block after the reload does not show the reloaded text")
	}
	log := logOf(m[2])
	if !strings.Contains(log, "\n-func (c *Cookie) String() string {\n+func (ck *Cookie) String() string {\n") {
		t.Errorf("the edit after the reload is not in the log: %q", log)
	}
	if strings.Contains(log, "reloaded from disk") || strings.Contains(log, "hh Header") {
		t.Errorf("the log shows the reload or the edits before it: %q", log)
	}
}

// TestNextEditCloseWaits: Close stops a pending pause (its request is
// never sent), hangs up the next-edit stream held open at the stand-in
// and returns only after that stream's goroutine has ended (its hang-up
// takes a second here).
func TestNextEditCloseWaits(t *testing.T) {
	waitFor(t, func() bool { return !modeltest.GoroutineIn("complete.(*NextEdits).fire") })
	f := newFixture(t, `{"nextEdit": {"debounceMs": 400}}`, modeltest.Rule{DelayMS: 600_000})
	tr := modeltest.NewSlowHangUp(time.Second)
	f.svc = NewServices(ServicesOptions{HTTPClient: &http.Client{Transport: tr}})
	opened := cookieGo(t)
	s := newNextSession(t, f, opened)
	s.edit(cachetest.ReplaceOnce(t, opened, "func readSetCookies(h Header)", "func readSetCookies(hh Header)"), false)
	f.waitArrived(1)
	s.edit(cachetest.ReplaceOnce(t, s.prev.Text(), "func (c *Cookie) String() string {", "func (ck *Cookie) String() string {"), false)
	f.svc.Close()
	if !tr.Returned() {
		t.Errorf("Close returned before the hung-up stream's request did")
	}
	if modeltest.GoroutineIn("complete.(*NextEdits).fire") {
		t.Errorf("a next-edit goroutine runs after Close returned")
	}
	time.Sleep(800 * time.Millisecond) // past the pending pause's end
	if n := len(f.srv.Requests()); n != 1 {
		t.Errorf("%d requests reached the stand-in, want the one held open (the pause after it was stopped)", n)
	}
	// An editor asking after Close gets the suggestion at hand at once
	// (none), not at its request's end.
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if sug := s.n.Await(ctx, s.key); sug != nil {
		t.Errorf("a suggestion after Close: %+v", sug)
	}
}

// TestNextEditPanicFailsThatSuggestion: a panic in the goroutine of a
// next edit (here the helper's check) fails that suggestion only: it is
// reported, an editor waiting for the suggestion gets none, and the next
// edit asks again.
func TestNextEditPanicFailsThatSuggestion(t *testing.T) {
	const text = "package p\n\nfunc f(k int) int {\n\tx := factor\n\treturn x\n}\n"
	answer := "@@\n-\tx := factor\n+\tx := k\n"
	f := newFixture(t, `{"nextEdit": {"debounceMs": 0}}`, modeltest.Rule{Content: answer})
	panics := 0
	n := NewNextEdits(NextOptions{Config: f.config, Services: f.svc, Check: func(context.Context, string, string, string) error {
		panics++
		panic("a check that panics")
	}})
	key := string(f.uri)
	prev := workspace.NewSnapshot(f.uri, "go", 1, "package p\n\nfunc f(j int) int {\n\tx := factor\n\treturn x\n}\n")
	n.Opened(key, prev)
	n.Edited(NextRequest{Key: key, Path: "p.go", Doc: workspace.NewSnapshot(f.uri, "go", 2, text), Prev: prev})
	f.waitArrived(1)
	if sug := n.Await(ctxT(t), key); sug != nil {
		t.Fatalf("a suggestion whose check panicked was shown: %+v", sug)
	}
	n.Edited(NextRequest{Key: key, Path: "p.go", Doc: workspace.NewSnapshot(f.uri, "go", 3, text+"\n"), Prev: workspace.NewSnapshot(f.uri, "go", 2, text)})
	f.waitArrived(2)
	n.Await(ctxT(t), key)
	f.svc.Close()
	if panics != 2 {
		t.Errorf("%d checks ran, want 2 (the next edit asks again after a panic)", panics)
	}
}
