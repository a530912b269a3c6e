package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/complete"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// compSession is a session in a temporary workspace with the stand-in
// provider, for completion tests. It counts the requests that reached the
// stand-in as they arrive.
type compSession struct {
	*session
	dir  string
	prov *modeltest.Server // the stand-in provider
	// spendDir and spendAt are the request record's directory and its
	// clock's time, in a spend session (newSpendSession).
	spendDir string
	spendAt  time.Time

	mu      sync.Mutex
	arrived int
	texts   map[string]string
	version map[string]int32
}

func (cs *compSession) Write(p []byte) (int, error) {
	cs.mu.Lock()
	cs.arrived += strings.Count(string(p), "\n")
	cs.mu.Unlock()
	return len(p), nil
}

func (cs *compSession) waitArrived(n int) {
	cs.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		cs.mu.Lock()
		got := cs.arrived
		cs.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			cs.t.Fatalf("%d requests reached the stand-in in 10 s, want %d", got, n)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// completionParams returns initialize params for a client with inline
// completion (inline) or without, with the given kimi settings.
func completionInit(root string, inline bool, settings map[string]any) map[string]any {
	p := lsptest.DefaultInitializeParams(root)
	caps := p["capabilities"].(map[string]any)
	td := caps["textDocument"].(map[string]any)
	if inline {
		td["inlineCompletion"] = map[string]any{"dynamicRegistration": true}
	}
	td["completion"] = map[string]any{"dynamicRegistration": false}
	caps["experimental"] = map[string]any{"kimiCompletionStatus": true}
	if settings != nil {
		p["initializationOptions"] = map[string]any{"kimi": settings}
	}
	return p
}

func newCompSession(t *testing.T, inline bool, settings map[string]any, rules ...modeltest.Rule) *compSession {
	t.Helper()
	return newCompSessionOpts(t, Options{}, inline, settings, rules...)
}

// newCompSessionOpts is newCompSession with the server's options besides
// its configuration (an HTTP client, a ledger).
func newCompSessionOpts(t *testing.T, opts Options, inline bool, settings map[string]any, rules ...modeltest.Rule) *compSession {
	t.Helper()
	return newCompSessionKnobs(t, opts, testKnobs{}, inline, settings, rules...)
}

// newCompProvider is a completion session's stand-in provider (which
// rules answer) and its workspace directory, before the server starts.
func newCompProvider(t *testing.T, rules ...modeltest.Rule) *compSession {
	t.Helper()
	cs := &compSession{texts: map[string]string{}, version: map[string]int32{}}
	cs.prov = modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: rules}, RequestLog: cs})
	t.Cleanup(cs.prov.Close)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs.dir = dir
	return cs
}

// newCompSessionKnobs is newCompSessionOpts with the test knobs set.
func newCompSessionKnobs(t *testing.T, opts Options, knobs testKnobs, inline bool, settings map[string]any, rules ...modeltest.Rule) *compSession {
	t.Helper()
	cs := newCompProvider(t, rules...)
	dir := cs.dir
	opts.Config = providerConfig(t, cs.prov)
	cs.session = newSessionKnobs(t, opts, knobs, nil)
	cs.initialize(completionInit(string(workspace.FileURI(dir)), inline, settings))
	return cs
}

// file writes name and opens it with the cursor marker "|" removed, and
// returns its URI and the cursor position.
func (cs *compSession) file(name, text string) (string, map[string]any) {
	cs.t.Helper()
	text, pos := cursorOf(cs.t, text)
	p := filepath.Join(cs.dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		cs.t.Fatal(err)
	}
	uri := string(workspace.FileURI(p))
	cs.open(uri, text)
	cs.texts[uri], cs.version[uri] = text, 1
	cs.text(uri, 1)
	return uri, pos
}

// cursorOf removes "|" from text and returns its UTF-16 position.
func cursorOf(t *testing.T, text string) (string, map[string]any) {
	t.Helper()
	i := strings.Index(text, "|")
	if i < 0 {
		t.Fatalf("no cursor in %q", text)
	}
	line := strings.Count(text[:i], "\n")
	col := i - (strings.LastIndex(text[:i], "\n") + 1)
	return text[:i] + text[i+1:], map[string]any{"line": line, "character": col}
}

// change replaces the whole text of uri (cursor "|" removed) as a didChange
// and returns the cursor position.
func (cs *compSession) change(uri, text string) map[string]any {
	cs.t.Helper()
	text, pos := cursorOf(cs.t, text)
	cs.version[uri]++
	cs.texts[uri] = text
	if err := cs.ed.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": uri, "version": cs.version[uri]},
		"contentChanges": []any{map[string]any{"text": text}},
	}); err != nil {
		cs.t.Fatal(err)
	}
	return pos
}

type inlineList struct {
	Items []struct {
		InsertText string `json:"insertText"`
		Range      *struct {
			Start struct{ Line, Character int } `json:"start"`
			End   struct{ Line, Character int } `json:"end"`
		} `json:"range"`
	} `json:"items"`
}

// inline sends textDocument/inlineCompletion and returns its reply channel.
func (cs *compSession) inline(uri string, pos map[string]any, kind int) (json.RawMessage, <-chan *lsptest.Message) {
	cs.t.Helper()
	id := cs.ed.NextID()
	ch, err := cs.ed.Send(id, "textDocument/inlineCompletion", map[string]any{
		"textDocument": map[string]any{"uri": uri}, "position": pos, "context": map[string]any{"triggerKind": kind},
	})
	if err != nil {
		cs.t.Fatal(err)
	}
	return id, ch
}

// inlineResult waits for an inline completion reply.
func (cs *compSession) inlineResult(ch <-chan *lsptest.Message) inlineList {
	cs.t.Helper()
	m, err := lsptest.Await(ctxT(cs.t), ch)
	if err != nil {
		cs.t.Fatal(err)
	}
	if m.Error != nil {
		cs.t.Fatalf("inlineCompletion failed: %v", m.Error)
	}
	var l inlineList
	if err := json.Unmarshal(m.Result, &l); err != nil {
		cs.t.Fatalf("inlineCompletion result %s: %v", m.Result, err)
	}
	return l
}

// applyInline applies the single item of l to the text of uri.
func (cs *compSession) applyInline(uri string, l inlineList) string {
	cs.t.Helper()
	if len(l.Items) != 1 || l.Items[0].Range == nil {
		cs.t.Fatalf("want one item with a range, got %+v", l)
	}
	it := l.Items[0]
	snap, _ := cs.srv2docs(uri)
	enc := workspace.UTF16
	start := snap.PositionOffset(workspace.Position{Line: uint32(it.Range.Start.Line), Character: uint32(it.Range.Start.Character)}, enc)
	end := snap.PositionOffset(workspace.Position{Line: uint32(it.Range.End.Line), Character: uint32(it.Range.End.Character)}, enc)
	text := cs.texts[uri]
	return text[:start] + it.InsertText + text[end:]
}

// neverSent fails the test if any provider request so far holds text.
func (cs *compSession) neverSent(text string) {
	cs.t.Helper()
	for _, r := range cs.prov.Requests() {
		if strings.Contains(string(r.Body), text) {
			cs.t.Errorf("request %d holds %q: it reached the provider", r.Seq, text)
		}
	}
}

func (cs *compSession) srv2docs(uri string) (*workspace.Snapshot, bool) {
	u, _ := workspace.ParseURI(uri)
	return cs.session.srv.docs.Snapshot(u)
}

const mainGo = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Pri|\n}\n"

func TestCompletionCapabilities(t *testing.T) {
	for _, tc := range []struct {
		name            string
		inline          bool
		items           string
		wantInline      bool
		wantCompletions bool
	}{
		{"inline client", true, "", true, false},
		{"client without inline completion", false, "", false, true},
		{"items always", true, "always", true, true},
		{"items never", false, "never", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, nil)
			var settings map[string]any
			if tc.items != "" {
				settings = map[string]any{"completion": map[string]any{"items": tc.items}}
			}
			caps := s.initialize(completionInit("", tc.inline, settings))["capabilities"].(map[string]any)
			if got := caps["inlineCompletionProvider"] == true; got != tc.wantInline {
				t.Errorf("inlineCompletionProvider = %v, want %v", caps["inlineCompletionProvider"], tc.wantInline)
			}
			cp, ok := caps["completionProvider"].(map[string]any)
			if ok != tc.wantCompletions {
				t.Errorf("completionProvider = %v, want present %v", caps["completionProvider"], tc.wantCompletions)
			}
			if ok && fmt.Sprint(cp["triggerCharacters"]) != "[. (]" {
				t.Errorf("triggerCharacters = %v", cp["triggerCharacters"])
			}
		})
	}
}

// TestInlineCompletionFencedEcho: the model answers in a fence and repeats
// the line; the item inserts exactly the rest.
func TestInlineCompletionFencedEcho(t *testing.T) {
	cs := newCompSession(t, true, nil, modeltest.Rule{Content: "```go\n\tfmt.Println(\"hello\")\n```"})
	uri, pos := cs.file("main.go", mainGo)
	_, ch := cs.inline(uri, pos, 1)
	l := cs.inlineResult(ch)
	if got, want := cs.applyInline(uri, l), strings.Replace(mainGo, "Pri|", `Println("hello")`, 1); got != want {
		t.Errorf("accepting gives\n%s\nwant\n%s", got, want)
	}
	if l.Items[0].InsertText != `ntln("hello")` {
		t.Errorf("insertText %q", l.Items[0].InsertText)
	}
}

// TestCompletionItemsFencedEcho: the same for a client without inline
// completion: one item whose textEdit inserts exactly the suggestion.
func TestCompletionItemsFencedEcho(t *testing.T) {
	cs := newCompSession(t, false, map[string]any{"completion": map[string]any{"debounceMs": 0}}, modeltest.Rule{Content: "```go\n\tfmt.Println(\"hello\")\n```"})
	uri, pos := cs.file("main.go", mainGo)
	var l struct {
		IsIncomplete bool `json:"isIncomplete"`
		Items        []struct {
			Label            string `json:"label"`
			Detail           string `json:"detail"`
			FilterText       string `json:"filterText"`
			InsertTextFormat int    `json:"insertTextFormat"`
			TextEdit         struct {
				Range   protocolRange `json:"range"`
				NewText string        `json:"newText"`
			} `json:"textEdit"`
		} `json:"items"`
	}
	if err := cs.ed.Call(ctxT(t), "textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos}, &l); err != nil {
		t.Fatal(err)
	}
	if !l.IsIncomplete || len(l.Items) != 1 {
		t.Fatalf("got %+v, want one item, incomplete", l)
	}
	it := l.Items[0]
	if it.Label != `Println("hello")` || !strings.Contains(it.Detail, "Kimi") || it.InsertTextFormat != 1 || it.FilterText != `Println("hello")` {
		t.Errorf("item %+v", it)
	}
	r := it.TextEdit.Range
	text := cs.texts[uri]
	snap, _ := cs.srv2docs(uri)
	start := snap.PositionOffset(workspace.Position{Line: r.Start.Line, Character: r.Start.Character}, workspace.UTF16)
	end := snap.PositionOffset(workspace.Position{Line: r.End.Line, Character: r.End.Character}, workspace.UTF16)
	if got, want := text[:start]+it.TextEdit.NewText+text[end:], strings.Replace(mainGo, "Pri|", `Println("hello")`, 1); got != want {
		t.Errorf("accepting gives\n%s\nwant\n%s", got, want)
	}
}

type protocolRange struct {
	Start struct{ Line, Character uint32 } `json:"start"`
	End   struct{ Line, Character uint32 } `json:"end"`
}

// TestInlineCompletionDebounce types 8 characters 50 ms apart, each with
// the didChange and the automatic request an editor sends: at most 4
// provider requests, and the last request is answered. (A 1 s debounce:
// a loaded machine may stretch the 50 ms sleeps past the default 300 ms.)
func TestInlineCompletionDebounce(t *testing.T) {
	cs := newCompSession(t, true, map[string]any{"completion": map[string]any{"debounceMs": 1000}}, modeltest.Rule{Content: "ln(\"typed\")"})
	uri, _ := cs.file("main.go", strings.Replace(mainGo, "fmt.Pri|", "|", 1))
	typed := "fmt.Prin"
	var chans []<-chan *lsptest.Message
	for i := 1; i <= len(typed); i++ {
		pos := cs.change(uri, strings.Replace(mainGo, "fmt.Pri|", typed[:i]+"|", 1))
		_, ch := cs.inline(uri, pos, 2)
		chans = append(chans, ch)
		time.Sleep(50 * time.Millisecond)
	}
	for i, ch := range chans {
		l := cs.inlineResult(ch)
		if i < len(chans)-1 && len(l.Items) != 0 {
			t.Errorf("keystroke %d was answered with %+v; the newer request supersedes it", i+1, l)
		}
		if i == len(chans)-1 {
			if len(l.Items) != 1 || l.Items[0].InsertText != "ln(\"typed\")" {
				t.Errorf("the last request got %+v", l)
			}
		}
	}
	if n := len(cs.prov.Requests()); n > 4 || n < 1 {
		t.Errorf("%d provider requests for 8 keystrokes, want 1 to 4", n)
	}
}

// TestInlineCompletionTypeAhead: typing the first characters of the
// suggestion on screen is answered from it, without a provider request.
func TestInlineCompletionTypeAhead(t *testing.T) {
	cs := newCompSession(t, true, nil, modeltest.Rule{Content: "Println(\"hello\")"})
	uri, pos := cs.file("main.go", mainGo)
	_, ch := cs.inline(uri, pos, 1)
	cs.inlineResult(ch)
	for i, typed := range []string{"n", "nt", "ntln(\""} {
		pos := cs.change(uri, strings.Replace(mainGo, "Pri|", "Pri"+typed+"|", 1))
		_, ch := cs.inline(uri, pos, 2)
		l := cs.inlineResult(ch)
		if len(l.Items) != 1 || l.Items[0].InsertText != `ntln("hello")` {
			t.Fatalf("step %d: got %+v, want the whole suggestion replacing what was typed", i, l)
		}
		if got, want := cs.applyInline(uri, l), strings.Replace(mainGo, "Pri|", `Println("hello")`, 1); got != want {
			t.Errorf("step %d: accepting gives\n%s", i, got)
		}
	}
	if n := len(cs.prov.Requests()); n != 1 {
		t.Errorf("%d provider requests, want 1", n)
	}
	var st struct {
		Completion struct {
			Requested, Shown, Reused, ProviderRequests int
			PromptTokens                               int `json:"promptTokens"`
		} `json:"completion"`
	}
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
		t.Fatal(err)
	}
	c := st.Completion
	if c.Requested != 4 || c.Shown != 4 || c.Reused != 3 || c.ProviderRequests != 1 || c.PromptTokens == 0 {
		t.Errorf("kimi.stats completion = %+v", c)
	}
}

// TestInlineCompletionCancelHangsUp: $/cancelRequest for the only request
// of a stream hangs it up; the stand-in sees the client leave.
func TestInlineCompletionCancelHangsUp(t *testing.T) {
	cs := newCompSession(t, true, nil, modeltest.Rule{Fault: "stall", FaultAfter: 1})
	uri, pos := cs.file("main.go", mainGo)
	id, ch := cs.inline(uri, pos, 1)
	cs.waitArrived(1)
	cs.ed.Notify("$/cancelRequest", map[string]any{"id": id})
	m, err := lsptest.Await(ctxT(t), ch)
	if err != nil {
		t.Fatal(err)
	}
	if m.Error == nil || m.Error.Code != int64(RequestCancelled) {
		t.Errorf("reply %+v, want RequestCancelled", m)
	}
	reqs, err := cs.prov.WaitRequests(ctxT(t), 1)
	if err != nil {
		t.Fatalf("the stand-in never saw the stream end: %v", err)
	}
	if !reqs[0].HungUp {
		t.Errorf("the stream was not hung up")
	}
}

// TestCompletionSessionCacheHits replays 20 steps of typing in a file of
// realistic size: at least 0.90 of the prompt tokens are cache hits.
func TestCompletionSessionCacheHits(t *testing.T) {
	cs := newCompSession(t, true, nil, modeltest.Rule{Content: "0"})
	var b strings.Builder
	b.WriteString("package main\n\nimport \"fmt\"\n\n")
	for i := 0; i < 80; i++ {
		fmt.Fprintf(&b, "// f%d returns its argument plus %d.\nfunc f%d(x int) int {\n\ty := x + %d\n\treturn y\n}\n\n", i, i, i, i)
	}
	head := b.String()
	body := "func main() {\n"
	uri, _ := cs.file("main.go", head+body+"|}\n")
	for i := 0; i < 20; i++ {
		body += fmt.Sprintf("\tfmt.Println(f%d(%d))\n", i, i)
		pos := cs.change(uri, head+body+"\t|\n}\n")
		_, ch := cs.inline(uri, pos, 1)
		cs.inlineResult(ch)
	}
	var prompt, cached int
	for _, r := range cs.prov.Requests() {
		prompt += r.Usage.PromptTokens
		cached += r.Usage.CachedTokens
	}
	ratio := float64(cached) / float64(prompt)
	t.Logf("%d requests, %d prompt tokens (%d per request), hit ratio %.3f", len(cs.prov.Requests()), prompt, prompt/20, ratio)
	if ratio < 0.90 {
		t.Errorf("hit ratio %.3f, want at least 0.90", ratio)
	}
}

// TestCompletionNeverFromSecrets: a .env buffer, and a file linking to one,
// get nothing, and their text never reaches the provider.
func TestCompletionNeverFromSecrets(t *testing.T) {
	cs := newCompSession(t, true, nil, modeltest.Rule{Content: "x"})
	env, pos := cs.file(".env", "API_TOKEN=sk-live-MUST-NOT-LEAK|\n")
	os.Symlink(filepath.Join(cs.dir, ".env"), filepath.Join(cs.dir, "settings.txt"))
	link := string(workspace.FileURI(filepath.Join(cs.dir, "settings.txt")))
	cs.open(link, "API_TOKEN=sk-live-MUST-NOT-LEAK\n")
	cs.text(link, 1)
	for _, uri := range []string{env, link} {
		_, ch := cs.inline(uri, pos, 1)
		if l := cs.inlineResult(ch); len(l.Items) != 0 {
			t.Errorf("%s: got %+v", uri, l)
		}
	}
	main, mpos := cs.file("main.go", mainGo)
	_, ch := cs.inline(main, mpos, 1)
	cs.inlineResult(ch)
	cs.neverSent("MUST-NOT-LEAK")
	if n := len(cs.prov.Requests()); n != 1 {
		t.Errorf("%d provider requests, want 1 (for main.go)", n)
	}
}

// TestCompletionWithoutKey: without a key, completion says so once and
// never asks the provider, and the request still gets an empty answer.
func TestCompletionWithoutKey(t *testing.T) {
	s := newSession(t, nil)
	dir := t.TempDir()
	s.initialize(completionInit(string(workspace.FileURI(dir)), true, nil))
	uri := string(workspace.FileURI(filepath.Join(dir, "main.go")))
	text, pos := cursorOf(t, mainGo)
	s.open(uri, text)
	s.text(uri, 1)
	for i := 0; i < 3; i++ {
		var l inlineList
		if err := s.ed.Call(ctxT(t), "textDocument/inlineCompletion", map[string]any{
			"textDocument": map[string]any{"uri": uri}, "position": pos, "context": map[string]any{"triggerKind": 2},
		}, &l); err != nil {
			t.Fatalf("request %d: %v (completion must not fail the request)", i, err)
		}
		if len(l.Items) != 0 {
			t.Fatalf("items without a key: %+v", l)
		}
	}
	n := 0
	for _, m := range s.ed.Messages() {
		if m.Method == "window/showMessage" && strings.Contains(string(m.Params), "KIMI_API_KEY") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d messages about the key, want 1", n)
	}
	if _, err := s.ed.WaitMethod(ctxT(t), notifyCompletionStatus, func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"noKey"`)
	}); err != nil {
		t.Errorf("no noKey status: %v", err)
	}
}

// TestCompletionSettingsReload: completion.enable and maxLines apply to the
// next request.
func TestCompletionSettingsReload(t *testing.T) {
	cs := newCompSession(t, true, nil, modeltest.Rule{Content: "ntln(1)\n\tfmt.Println(2)\n\tfmt.Println(3)"})
	uri, pos := cs.file("main.go", mainGo)
	settings := func(c map[string]any) {
		cs.ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) {
			return []any{map[string]any{"completion": c}}, nil
		})
		cs.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": nil})
	}
	settings(map[string]any{"enable": false})
	waitFor(t, func() bool { return !cs.session.srv.config().Completion.Enable })
	_, ch := cs.inline(uri, pos, 1)
	if l := cs.inlineResult(ch); len(l.Items) != 0 {
		t.Errorf("completion disabled, got %+v", l)
	}
	settings(map[string]any{"maxLines": 2})
	waitFor(t, func() bool { return cs.session.srv.config().Completion.Enable })
	_, ch = cs.inline(uri, pos, 1)
	if l := cs.inlineResult(ch); len(l.Items) != 1 || l.Items[0].InsertText != "ntln(1)\n\tfmt.Println(2)" {
		t.Errorf("maxLines 2: got %+v", l)
	}
}

// TestTriggerKinds: LSP 3.18 numbers Invoked 1 and Automatic 2, its 3.17
// proposal (vscode-languageclient 9) 0 and 1; a 1 counts as Automatic until
// the client's numbering is known.
func TestTriggerKinds(t *testing.T) {
	for _, tc := range []struct {
		seq  []int
		want []complete.Trigger
	}{
		{[]int{1, 2, 1}, []complete.Trigger{complete.Automatic, complete.Automatic, complete.Invoked}},
		{[]int{1, 0, 1}, []complete.Trigger{complete.Automatic, complete.Invoked, complete.Automatic}},
	} {
		cs := &completionState{}
		for i, k := range tc.seq {
			if got := cs.trigger(k); got != tc.want[i] {
				t.Errorf("kinds %v: request %d (%d) read as %v, want %v", tc.seq, i, k, got, tc.want[i])
			}
		}
	}
}

// BenchmarkInlineCompletionTypeAhead is the server's own time per inline
// completion request when it needs no provider: didChange (one typed
// character) then textDocument/inlineCompletion answered from the latest
// suggestion, round trip through the fake editor, on a 48 KB Go file.
// The provider path's own work is BenchmarkPromptAndAnswer in
// assist/complete. Figures: bench/README.md.
func BenchmarkInlineCompletionTypeAhead(b *testing.B) {
	suggestion := "Println(" + strings.Repeat("argument, ", 100) + ")"
	prov := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Content: suggestion}}})
	defer prov.Close()
	env := map[string]string{"KIMI_API_KEY": prov.Key, "KIMI_BASE_URL": prov.URL}
	cfg, _ := config.Default().WithEnv(func(k string) string { return env[k] })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	srv, err := NewServer(inR, outW, inR, Options{Version: "bench", Config: cfg, Logger: slog.New(slog.DiscardHandler), ExplanationDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		srv.Run(context.Background())
		outW.Close()
		close(done)
	}()
	defer func() {
		inW.Close()
		<-done
	}()
	ed := lsptest.New(outR, inW)
	ctx := context.Background()
	if _, err := ed.Initialize(ctx, completionInit("", true, nil)); err != nil {
		b.Fatal(err)
	}
	var body strings.Builder
	for body.Len() < 48<<10 {
		fmt.Fprintf(&body, "func f%d(x int) int {\n\treturn x * %d\n}\n\n", body.Len(), body.Len())
	}
	head := "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Pri"
	text := head + "\n}\n\n" + body.String()
	uri := "file:///bench/main.go"
	ed.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text}})
	line, col := 5, len("\tfmt.Pri")
	ask := func() inlineList {
		var l inlineList
		if err := ed.Call(ctx, "textDocument/inlineCompletion", map[string]any{
			"textDocument": map[string]any{"uri": uri}, "position": map[string]any{"line": line, "character": col},
			"context": map[string]any{"triggerKind": 0},
		}, &l); err != nil {
			b.Fatal(err)
		}
		return l
	}
	if l := ask(); len(l.Items) != 1 {
		b.Fatalf("no first suggestion: %+v", l)
	}
	rest := suggestion[len("Pri"):]
	version, typed := 1, 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		version++
		var change map[string]any
		if typed == len(rest)-1 {
			// Delete what was typed, back to where the suggestion was made.
			change = map[string]any{"range": map[string]any{
				"start": map[string]any{"line": line, "character": col - typed}, "end": map[string]any{"line": line, "character": col}}, "text": ""}
			col -= typed
			typed = 0
		} else {
			change = map[string]any{"range": map[string]any{
				"start": map[string]any{"line": line, "character": col}, "end": map[string]any{"line": line, "character": col}}, "text": rest[typed : typed+1]}
			col++
			typed++
		}
		ed.Notify("textDocument/didChange", map[string]any{"textDocument": map[string]any{"uri": uri, "version": version}, "contentChanges": []any{change}})
		if l := ask(); len(l.Items) != 1 {
			b.Fatalf("iteration %d: not answered from the suggestion: %+v", i, l)
		}
	}
	b.StopTimer()
	if n := len(prov.Requests()); n != 1 {
		b.Fatalf("%d provider requests, want 1", n)
	}
}

// TestCompletionItemsRegisteredLater: completion.items changed to "always"
// after initialize registers completionProvider with a client that allows
// it, and "auto" unregisters it again.
func TestCompletionItemsRegisteredLater(t *testing.T) {
	s := newSession(t, nil)
	params := completionInit("", true, nil)
	params["capabilities"].(map[string]any)["textDocument"].(map[string]any)["completion"] = map[string]any{"dynamicRegistration": true}
	delete(params["capabilities"].(map[string]any)["workspace"].(map[string]any), "configuration")
	caps := s.initialize(params)["capabilities"].(map[string]any)
	if _, ok := caps["completionProvider"]; ok {
		t.Fatalf("completionProvider advertised to an inline client with items auto")
	}
	got := make(chan string, 4)
	for _, m := range []string{"client/registerCapability", "client/unregisterCapability"} {
		m := m
		s.ed.Handle(m, func(p json.RawMessage) (any, *lsptest.ResponseError) {
			got <- m + " " + string(p)
			return nil, nil
		})
	}
	set := func(items string) {
		s.ed.Notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{"kimi": map[string]any{"completion": map[string]any{"items": items}}}})
	}
	set("always")
	select {
	case m := <-got:
		// The wire shape exactly: LSP's RegistrationParams, a null
		// documentSelector (the client's own) and the trigger characters.
		want := `client/registerCapability {"registrations":[{"id":"kimi-completion","method":"textDocument/completion","registerOptions":{"documentSelector":null,"triggerCharacters":[".","("]}}]}`
		if m != want {
			t.Errorf("got  %s\nwant %s", m, want)
		}
	case <-ctxT(t).Done():
		t.Fatal("no registration")
	}
	set("auto")
	select {
	case m := <-got:
		// "unregisterations" is LSP's own spelling.
		want := `client/unregisterCapability {"unregisterations":[{"id":"kimi-completion","method":"textDocument/completion"}]}`
		if m != want {
			t.Errorf("got  %s\nwant %s", m, want)
		}
	case <-ctxT(t).Done():
		t.Fatal("no unregistration")
	}
}

// TestCompletionRequestsOutOfOrder: an editor that asks several times for
// one state, cancelling each request once the next is sent (the Neovim
// plugin on InsertEnter, TextChangedI and CursorMovedI of one key), gets
// the last one answered, though the requests' goroutines may reach the
// completer in any order: their order is the read loop's.
func TestCompletionRequestsOutOfOrder(t *testing.T) {
	cs := newCompSession(t, true, map[string]any{"completion": map[string]any{"debounceMs": 50}}, modeltest.Rule{Content: "ntln(1)"})
	uri, _ := cs.file("main.go", mainGo)
	typed := "fmt.Pri"
	for i := 0; i < 10; i++ {
		typed += "x"
		pos := cs.change(uri, strings.Replace(mainGo, "fmt.Pri|", typed+"|", 1))
		var prev json.RawMessage
		var last <-chan *lsptest.Message
		for j := 0; j < 3; j++ {
			id, ch := cs.inline(uri, pos, 2)
			if prev != nil {
				cs.ed.Notify("$/cancelRequest", map[string]any{"id": prev})
			}
			prev, last = id, ch
		}
		if l := cs.inlineResult(last); len(l.Items) != 1 {
			t.Fatalf("step %d: the last of three requests got %+v", i, l)
		}
	}
}

// TestCompletionShowsDefinitionsUsed: the prompt carries the definitions
// the code around the cursor uses from files that are not open (the
// relevance ranking actions use too), and nothing of an unrelated file.
func TestCompletionShowsDefinitionsUsed(t *testing.T) {
	cs := newCompSession(t, true, nil, modeltest.Rule{Content: "1, 2)"})
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(cs.dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("scale.go", "package main\n\n// Scale multiplies x by KIMI_SCALE_FACTOR.\nfunc Scale(x, factor int) int {\n\treturn x * factor\n}\n")
	write("unrelated.go", "package main\n\n// Unrelated is never called: KIMI_NOT_NEEDED.\nfunc Unrelated() {}\n")
	uri, pos := cs.file("main.go", "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(Scale(|\n}\n")
	_, ch := cs.inline(uri, pos, 1)
	cs.inlineResult(ch)
	reqs := cs.prov.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d provider requests", len(reqs))
	}
	prompt := string(reqs[0].Prompt)
	if !strings.Contains(prompt, "KIMI_SCALE_FACTOR") || !strings.Contains(prompt, "func Scale(x, factor int) int") {
		t.Errorf("the definition of Scale is not in the prompt:\n%s", prompt)
	}
	if strings.Contains(prompt, "KIMI_NOT_NEEDED") {
		t.Errorf("an unrelated file is in the prompt")
	}
}

// TestCompletionNeverBeyondMaxFileSize: a document larger than
// context.maxFileSize gets nothing and is never sent.
func TestCompletionNeverBeyondMaxFileSize(t *testing.T) {
	cs := newCompSession(t, true, map[string]any{"context": map[string]any{"maxFileSize": 1000}}, modeltest.Rule{Content: "x"})
	big, pos := cs.file("big.go", "package main\n\n// "+strings.Repeat("KIMI_TOO_BIG ", 100)+"\nfunc main() {\n\tfmt.Pri|\n}\n")
	_, ch := cs.inline(big, pos, 1)
	if l := cs.inlineResult(ch); len(l.Items) != 0 {
		t.Errorf("a file over context.maxFileSize got %+v", l)
	}
	small, spos := cs.file("main.go", mainGo)
	_, ch = cs.inline(small, spos, 1)
	if l := cs.inlineResult(ch); len(l.Items) != 1 {
		t.Errorf("a small file got %+v", l)
	}
	cs.neverSent("KIMI_TOO_BIG")
}

// TestCompletionItemsForClientCaps is #21.17: an item's documentation is
// Markdown only for a client whose completionItem.documentationFormat
// holds markdown (else plain text, the suggestion itself), and labelDetails
// go only to a client that declared labelDetailsSupport (eglot 1.9
// declares neither).
func TestCompletionItemsForClientCaps(t *testing.T) {
	for _, c := range []struct {
		name     string
		item     map[string]any // completion.completionItem, nil for none
		wantDoc  string         // the documentation as JSON
		wantDeta bool           // labelDetails sent
	}{
		{"eglot 1.9 (nothing declared)", nil, `"\tfmt.Println(\"hi\")"`, false},
		{"plaintext only", map[string]any{"documentationFormat": []string{"plaintext"}}, `"\tfmt.Println(\"hi\")"`, false},
		{"markdown and label details", map[string]any{"documentationFormat": []string{"markdown", "plaintext"}, "labelDetailsSupport": true},
			`{"kind":"markdown","value":"` + "```go" + `\n\tfmt.Println(\"hi\")\n` + "```" + `"}`, true},
		{"label details only", map[string]any{"labelDetailsSupport": true}, `"\tfmt.Println(\"hi\")"`, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			prov := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Content: "\tfmt.Println(\"hi\")"}}}})
			t.Cleanup(prov.Close)
			dir := t.TempDir()
			s := newSessionOpts(t, Options{Config: providerConfig(t, prov)}, nil)
			p := completionInit(string(workspace.FileURI(dir)), false, map[string]any{"completion": map[string]any{"debounceMs": 0}})
			comp := map[string]any{"dynamicRegistration": false}
			if c.item != nil {
				comp["completionItem"] = c.item
			}
			p["capabilities"].(map[string]any)["textDocument"].(map[string]any)["completion"] = comp
			s.initialize(p)
			text, pos := cursorOf(t, "package main\n\nfunc main() {\n|\n}\n")
			uri := string(workspace.FileURI(filepath.Join(dir, "main.go")))
			s.open(uri, text)
			s.text(uri, 1)
			var l struct {
				Items []map[string]json.RawMessage `json:"items"`
			}
			if err := s.ed.Call(ctxT(t), "textDocument/completion", map[string]any{"textDocument": map[string]any{"uri": uri}, "position": pos}, &l); err != nil {
				t.Fatal(err)
			}
			if len(l.Items) != 1 {
				t.Fatalf("got %d items, want 1", len(l.Items))
			}
			it := l.Items[0]
			if got := string(it["documentation"]); got != c.wantDoc {
				t.Errorf("documentation %s, want %s", got, c.wantDoc)
			}
			if _, ok := it["labelDetails"]; ok != c.wantDeta {
				t.Errorf("labelDetails sent: %v (%s), want %v", ok, it["labelDetails"], c.wantDeta)
			}
		})
	}
}

func TestCodeBlock(t *testing.T) {
	for _, c := range []struct{ lang, text, want string }{
		{"go", "x := 1", "```go\nx := 1\n```"},
		{"markdown", "```sh\nls\n```", "````markdown\n```sh\nls\n```\n````"},
		{"", "a `b` c", "```\na `b` c\n```"},
		{"weird lang`", "x", "```\nx\n```"},
	} {
		if got := codeBlock(c.lang, c.text); got != c.want {
			t.Errorf("codeBlock(%q, %q) = %q, want %q", c.lang, c.text, got, c.want)
		}
	}
}

// TestInlineCompletionDivergingKey is Neovim 0.12's sequence after a key
// that does not match the ghost text: the editor keeps drawing the old item
// (minus what was typed) until the answer to its next request, so that
// answer must not be an item that fails to continue the line. The stand-in
// answers every request with the whole line, as models do; for "fmt.Prx"
// that is no continuation (it used to be inserted verbatim after it).
func TestInlineCompletionDivergingKey(t *testing.T) {
	cs := newCompSession(t, true, map[string]any{"completion": map[string]any{"debounceMs": 0}},
		modeltest.Rule{Content: "```go\n\tfmt.Println(Add(40, 2))\n```"})
	const text = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Pr|\n}\n"
	uri, pos := cs.file("main.go", text)
	_, ch := cs.inline(uri, pos, 2)
	l := cs.inlineResult(ch)
	if len(l.Items) != 1 || l.Items[0].InsertText != "intln(Add(40, 2))" {
		t.Fatalf("first answer %+v, want intln(Add(40, 2))", l)
	}
	pos = cs.change(uri, strings.Replace(text, "Pr|", "Prx|", 1))
	_, ch = cs.inline(uri, pos, 2)
	if l := cs.inlineResult(ch); len(l.Items) != 0 {
		t.Errorf("after a key the suggestion does not continue, the answer is %+v (accepted: %q), want no item",
			l, cs.applyInline(uri, l))
	}
	cs.waitArrived(2) // the second request did ask: it is the answer that is dropped
}
