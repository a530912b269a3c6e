package complete

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// typingSession is 20 steps of typing inside one function of a real file:
// at each step a few more characters of body are typed at the cursor (with
// brackets and quotes closed by the editor, see typeIn), then a completion
// is asked for there.
type typingSession struct {
	name, path, lang string
	text             string // the file before typing
	at               string // the cursor starts right after this text
	cut              string // removed at the cursor before typing (a placeholder body)
	typed            string // what the typist types, in 20 steps
}

// steps cuts s.typed into n pieces at word or line ends, as a typist
// pausing there would.
func (s typingSession) steps(n int) []string {
	var out []string
	rest := s.typed
	for i := n; i > 0; i-- {
		n, limit := max(len(rest)/i, 1), len(rest)-(i-1) // leave a character for each step after
		for n < limit && !strings.ContainsRune(" \n(.", rune(rest[n-1])) {
			n++
		}
		out = append(out, rest[:n])
		rest = rest[n:]
	}
	return out
}

// standinConfig is the default configuration, speaking to srv.
func standinConfig(t *testing.T, srv *modeltest.Server) config.Config {
	t.Helper()
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, errs := config.Default().WithEnv(func(k string) string { return env[k] })
	if config.HasErrors(errs) {
		t.Fatal(errs)
	}
	return cfg
}

// typeIn types piece at cursor as an editor that closes brackets and
// quotes does (VS Code's default): an opening one inserts its closer after
// the cursor, and typing a closer that is next after the cursor steps over
// it. The line typed in therefore goes on after the cursor, as it does
// while one types a call's arguments.
func typeIn(text string, cursor int, piece string) (string, int) {
	closer := map[byte]byte{'(': ')', '[': ']', '"': '"'}
	for i := 0; i < len(piece); i++ {
		c := piece[i]
		switch {
		case (c == ')' || c == ']' || c == '"') && cursor < len(text) && text[cursor] == c:
			cursor++
		case closer[c] != 0:
			text = text[:cursor] + string([]byte{c, closer[c]}) + text[cursor:]
			cursor++
		default:
			text = text[:cursor] + string(c) + text[cursor:]
			cursor++
		}
	}
	return text, cursor
}

func goroot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func typingSessions(t *testing.T) []typingSession {
	t.Helper()
	client, err := os.ReadFile(filepath.Join(goroot(t), "src/net/http/client.go"))
	if err != nil {
		t.Fatal(err)
	}
	py, err := os.ReadFile("testdata/inventory.py")
	if err != nil {
		t.Fatal(err)
	}
	return []typingSession{{
		// A 35 KB Go file, so the prompt shows a window of it: a new
		// statement typed at the top of Client.do's body.
		name: "go", path: "net/http/client.go", lang: "go", text: string(client),
		at: "func (c *Client) do(req *Request) (retres *Response, reterr error) {\n",
		typed: "\tif c.Jar != nil && req.URL != nil {\n" +
			"\t\tfor _, cookie := range c.Jar.Cookies(req.URL) {\n" +
			"\t\t\tif cookie.Name == \"\" {\n\t\t\t\tcontinue\n\t\t\t}\n" +
			"\t\t\treq.AddCookie(cookie)\n\t\t}\n\t}\n" +
			"\tif testHookClientDoResult != nil {\n\t\tdefer func() { testHookClientDoResult(retres, reterr) }()\n\t}",
	}, {
		// A Python module: the body of Inventory.reorder_quantity.
		name: "python", path: "inventory.py", lang: "python", text: string(py),
		at:  "def reorder_quantity(self, sku: str, warehouse: str, today: dt.date) -> int:\n",
		cut: "        pass\n",
		typed: "        item = self.item(sku)\n" +
			"        level = self.level(sku, warehouse)\n" +
			"        point = self.reorder_point(sku, today)\n" +
			"        position = level.available + level.incoming\n" +
			"        if item.discontinued or position > point:\n            return 0\n" +
			"        mean, _ = self.history.mean_and_stdev(sku, today)\n" +
			"        return max(point - position + math.ceil(mean * item.lead_days), 0)",
	}}
}

// TestTypingSessionCacheHits replays 20 steps of typing inside one
// function of a Go file and of a Python file, one completion request per
// step, against the stand-in provider's prefix-cache simulator with
// 16-token blocks: at least 0.90 of the prompt tokens are served from the
// cache over each session. The same code typed in 40 steps keeps at least
// 0.925: the edit log does not grow by a block per step on the line being
// typed (cache.Session replaces its last block), so it never reaches its
// limit and the rebase that rewrites the window (0.91 without).
func TestTypingSessionCacheHits(t *testing.T) {
	for _, tc := range []struct {
		steps int
		want  float64
	}{{20, 0.90}, {40, 0.925}} {
		for _, s := range typingSessions(t) {
			t.Run(fmt.Sprintf("%s/%d", s.name, tc.steps), func(t *testing.T) { replayTyping(t, s, tc.steps, tc.want) })
		}
	}
}

// replayTyping types s in steps pieces, one completion each, and checks
// the share of prompt tokens the stand-in served from its cache.
func replayTyping(t *testing.T, s typingSession, steps int, want float64) {
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Content: "nothing_typed_here()"}}},
		Cache: modeltest.CacheConfig{BlockTokens: 16}})
	t.Cleanup(srv.Close)
	f := &fixture{t: t, srv: srv, docs: workspace.NewDocuments(), uri: workspace.FileURI("/ws/" + s.path)}
	f.cfg = standinConfig(t, srv)
	f.c = New(Options{Config: f.config})
	i := strings.Index(s.text, s.at)
	if i < 0 {
		t.Fatalf("%q not in %s", s.at, s.path)
	}
	cursor := i + len(s.at)
	// The typist opens a line and types there.
	text := s.text[:cursor] + "\n" + strings.TrimPrefix(s.text[cursor:], s.cut)
	for n, piece := range s.steps(steps) {
		text, cursor = typeIn(text, cursor, piece)
		f.ver++
		var err error
		if n == 0 {
			err = f.docs.Open(f.uri, s.lang, f.ver, text)
		} else {
			err = f.docs.Change(f.uri, f.ver, []workspace.Change{{Text: text}}, workspace.UTF16)
		}
		if err != nil {
			t.Fatal(err)
		}
		snap, _ := f.docs.Snapshot(f.uri)
		if _, err := f.c.Complete(ctxT(t), Request{Key: string(f.uri), Path: s.path, Language: s.lang,
			Doc: snap, Offset: cursor, Trigger: Invoked, Project: "ws"}); err != nil {
			t.Fatalf("step %d: %v", n, err)
		}
	}
	var prompt, cached int
	reqs, err := srv.WaitRequests(ctxT(t), steps)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if testing.Verbose() {
			t.Logf("prompt %d cached %d", r.Usage.PromptTokens, r.Usage.CachedTokens)
		}
		prompt += r.Usage.PromptTokens
		cached += r.Usage.CachedTokens
	}
	ratio := float64(cached) / float64(prompt)
	t.Logf("%d requests, %d prompt tokens per request, hit ratio %.3f", len(reqs), prompt/max(len(reqs), 1), ratio)
	if len(reqs) != steps {
		t.Errorf("%d provider requests, want %d", len(reqs), steps)
	}
	if ratio < want {
		t.Errorf("hit ratio %.3f, want at least %.3f", ratio, want)
	}
}
