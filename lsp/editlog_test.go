package lsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The edit log's tests (assist/complete/editlog.go, D80): the Neovim
// sessions of issue 32 item 1 as the editor's messages, on net/http's
// cookie.go (575 lines) from the Go tree that runs them.

// cookieSource is net/http's cookie.go.
func cookieSource(t *testing.T) string {
	t.Helper()
	return cachetest.GoSource(t, "net/http/cookie.go")
}

// openFile writes name with text and opens it (text may hold "|").
func (cs *compSession) openFile(name, text string) string {
	cs.t.Helper()
	p := filepath.Join(cs.dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		cs.t.Fatal(err)
	}
	uri := string(workspace.FileURI(p))
	cs.open(uri, text)
	cs.texts[uri], cs.version[uri] = text, 1
	return uri
}

// promptOf returns the messages of the provider's i-th request.
func (cs *compSession) promptOf(i int) []string {
	cs.t.Helper()
	reqs := cs.prov.Requests()
	if len(reqs) <= i {
		cs.t.Fatalf("%d provider requests, want more than %d", len(reqs), i)
	}
	var body struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(reqs[i].Body, &body); err != nil {
		cs.t.Fatal(err)
	}
	var out []string
	for _, m := range body.Messages {
		out = append(out, m.Content)
	}
	if len(out) != 3 {
		cs.t.Fatalf("request %d has %d messages, want 3", i, len(out))
	}
	return out
}

// editLogOf is the edit log of a next-edit prompt's last message.
func editLogOf(last string) string {
	if i := strings.Index(last, "<request "); i >= 0 {
		return last[:i]
	}
	return last
}

// TestNextEditPromptHoldsTheRename is issue 32's check "renaming a
// parameter in a freshly opened 500-line file: the request holds a diff
// of the rename": the first request shows the file as opened and the
// rename as a diff; the next burst's request keeps that prompt byte for
// byte up to the end of its edit log and adds its own edit after it.
func TestNextEditPromptHoldsTheRename(t *testing.T) {
	cs := nextSession(t, quietNext)
	opened := cookieSource(t)
	uri := cs.openFile("cookie.go", opened)
	renamed := cachetest.ReplaceOnce(t, opened, "func readSetCookies(h Header) []*Cookie {", "func readSetCookies(hdr Header) []*Cookie {")
	cs.changeTo(uri, renamed)
	cs.waitNext("the rename answered", func(st complete.NextStats) bool { return st.Empty == 1 })
	m1 := cs.promptOf(0)
	if !strings.Contains(m1[1], "func readSetCookies(h Header) []*Cookie {") || strings.Contains(m1[1], "hdr Header") {
		t.Fatal("the file block does not show the file as opened")
	}
	log1 := editLogOf(m1[2])
	if !strings.Contains(log1, "\n-func readSetCookies(h Header) []*Cookie {\n+func readSetCookies(hdr Header) []*Cookie {\n") {
		t.Fatalf("the request does not hold the rename's diff: %q", log1)
	}
	cs.changeTo(uri, cachetest.ReplaceOnce(t, renamed, `cookieCount := len(h["Set-Cookie"])`, `cookieCount := len(hdr["Set-Cookie"])`))
	cs.waitNext("the second burst answered", func(st complete.NextStats) bool { return st.Empty == 2 })
	m2 := cs.promptOf(1)
	if m2[0] != m1[0] || m2[1] != m1[1] || !strings.HasPrefix(m2[2], log1) {
		t.Fatal("the second request does not keep the first one's prefix byte for byte")
	}
	if rest := editLogOf(m2[2])[len(log1):]; !strings.Contains(rest, "+\tcookieCount := len(hdr[\"Set-Cookie\"])\n") {
		t.Errorf("the second burst's edit is not after the first's: %q", rest)
	}
}

// TestNextEditLogStartsAtTheReload: after `:e!` of a file changed on disk
// (Neovim sends one change of the whole text), the next edit's prompt
// shows the reloaded text and that edit alone: not the edits before the
// reload, nor the reload as an edit of the user's.
func TestNextEditLogStartsAtTheReload(t *testing.T) {
	cs := nextSession(t, quietNext)
	opened := cookieSource(t)
	uri := cs.openFile("cookie.go", opened)
	cs.changeTo(uri, cachetest.ReplaceOnce(t, opened, "func readSetCookies(h Header)", "func readSetCookies(hh Header)"))
	cs.waitNext("the edit answered", func(st complete.NextStats) bool { return st.Empty == 1 })

	disk := cachetest.ReplaceOnce(t, opened, "// String returns the serialization", "// String (changed on disk) returns the serialization")
	if err := os.WriteFile(filepath.Join(cs.dir, "cookie.go"), []byte(disk), 0o644); err != nil {
		t.Fatal(err)
	}
	cs.changeRanged(uri, rangedChange{0, len(cs.texts[uri]), disk}) // :e!
	cs.waitNext("the reload taken as no typing", func(st complete.NextStats) bool { return st.NotTyped == 1 })
	cs.changeTo(uri, cachetest.ReplaceOnce(t, disk, "func (c *Cookie) String() string {", "func (ck *Cookie) String() string {"))
	st := cs.waitNext("the edit after the reload answered", func(st complete.NextStats) bool { return st.Empty == 2 })
	if st.Requested != 2 {
		t.Fatalf("kimi.stats nextEdit = %+v, want 2 requests", st)
	}
	m := cs.promptOf(1)
	if !strings.Contains(m[1], "// String (changed on disk) returns the serialization") || !strings.Contains(m[1], "func readSetCookies(h Header)") {
		t.Error("the file block does not show the reloaded text")
	}
	log := editLogOf(m[2])
	if !strings.Contains(log, "\n-func (c *Cookie) String() string {\n+func (ck *Cookie) String() string {\n") {
		t.Errorf("the edit after the reload is not in the log: %q", log)
	}
	if strings.Contains(log, "changed on disk") || strings.Contains(log, "hh Header") {
		t.Errorf("the log holds the reload or the edits before it: %q", log)
	}
}
