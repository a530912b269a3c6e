package complete

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// fixture is a completer pointed at the stand-in provider, with one open
// document.
type fixture struct {
	t    *testing.T
	srv  *modeltest.Server
	c    *Completer
	svc  *Services // c's, for the next edits of a test
	docs *workspace.Documents
	uri  workspace.URI
	ver  int32

	mu      sync.Mutex
	cfg     config.Config
	arrived int // requests the stand-in has read
}

// Write counts the request bodies the stand-in logs as they arrive.
func (f *fixture) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.arrived += strings.Count(string(p), "\n")
	f.mu.Unlock()
	return len(p), nil
}

// waitArrived waits until n requests reached the stand-in.
func (f *fixture) waitArrived(n int) {
	f.t.Helper()
	waitFor(f.t, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.arrived >= n
	})
}

func newFixture(t *testing.T, settings string, rules ...modeltest.Rule) *fixture {
	t.Helper()
	f := &fixture{t: t, docs: workspace.NewDocuments(), uri: workspace.FileURI("/ws/main.go")}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: rules}, RequestLog: f})
	t.Cleanup(srv.Close)
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, errs := config.Default().WithEnv(func(k string) string { return env[k] })
	if config.HasErrors(errs) {
		t.Fatal(errs)
	}
	if settings != "" {
		if cfg, errs = cfg.WithEditor(json.RawMessage(settings)); config.HasErrors(errs) {
			t.Fatal(errs)
		}
	}
	f.srv, f.cfg = srv, cfg
	f.svc = NewServices(ServicesOptions{})
	f.c = New(Options{Config: f.config, Services: f.svc})
	return f
}

func (f *fixture) config() config.Config {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cfg
}

func (f *fixture) setConfig(c config.Config) {
	f.mu.Lock()
	f.cfg = c
	f.mu.Unlock()
}

// set makes text (with "|" marking the cursor) the document's text and
// returns the request at the cursor.
func (f *fixture) set(text string, trigger Trigger) Request {
	f.t.Helper()
	off := strings.Index(text, "|")
	if off < 0 {
		f.t.Fatalf("no cursor in %q", text)
	}
	text = text[:off] + text[off+1:]
	f.ver++
	var err error
	if f.ver == 1 {
		err = f.docs.Open(f.uri, "go", f.ver, text)
	} else {
		err = f.docs.Change(f.uri, f.ver, []workspace.Change{{Text: text}}, workspace.UTF16)
	}
	if err != nil {
		f.t.Fatal(err)
	}
	snap, _ := f.docs.Snapshot(f.uri)
	return Request{Key: string(f.uri), Path: "main.go", Language: "go", Doc: snap, Offset: off, Trigger: trigger, Project: "ws"}
}

// answer is what Complete returned.
type answer struct {
	s   *Suggestion
	err error
}

// background runs req and delivers its answer on the channel.
func (f *fixture) background(ctx context.Context, req Request) <-chan answer {
	ch := make(chan answer, 1)
	go func() {
		s, err := f.c.Complete(ctx, req)
		ch <- answer{s, err}
	}()
	return ch
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

const src = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Pri|\n}\n"

func TestCompleteFencedEcho(t *testing.T) {
	f := newFixture(t, "", modeltest.Rule{Content: "```go\n\tfmt.Println(\"hello\")\n```"})
	s, err := f.c.Complete(ctxT(t), f.set(src, Invoked))
	if err != nil {
		t.Fatal(err)
	}
	if s == nil || s.Insert != `ntln("hello")` || s.Text != s.Insert || s.Reused {
		t.Fatalf("got %+v, want ntln(\"hello\") inserted at the cursor", s)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d provider requests, want 1", len(reqs))
	}
	p := reqs[0].Parsed
	if p.Model != config.DefaultFastModel || p.ReasoningEffort == nil || *p.ReasoningEffort != "low" {
		t.Errorf("request used model %q effort %v, want the fast model at low effort", p.Model, p.ReasoningEffort)
	}
	last := string(reqs[0].Prompt)
	if !strings.Contains(last, "fmt.Pri<|cursor|>") {
		t.Errorf("the prompt does not mark the cursor:\n%s", last)
	}
}

func TestCompleteTypeAhead(t *testing.T) {
	f := newFixture(t, "", modeltest.Rule{Content: "Println(\"hello\")"})
	ctx := ctxT(t)
	if s, err := f.c.Complete(ctx, f.set(src, Invoked)); err != nil || s == nil {
		t.Fatalf("first: %+v, %v", s, err)
	}
	// The user types "ntl" of the suggestion: answered from it.
	s, err := f.c.Complete(ctx, f.set(strings.Replace(src, "Pri|", "Printl|", 1), Automatic))
	if err != nil {
		t.Fatal(err)
	}
	if s == nil || !s.Reused || s.Insert != `n("hello")` || s.Text != `ntln("hello")` {
		t.Fatalf("got %+v, want the rest of the suggestion, reused", s)
	}
	// Typing away from it asks the provider again.
	f.srv.Push(modeltest.Rule{Content: "(1)"})
	s, err = f.c.Complete(ctx, f.set(strings.Replace(src, "Pri|", "Prx|", 1), Invoked))
	if err != nil || s == nil || s.Reused || s.Insert != "(1)" {
		t.Fatalf("after diverging: %+v, %v", s, err)
	}
	if n := len(f.srv.Requests()); n != 2 {
		t.Errorf("%d provider requests, want 2", n)
	}
	st := f.c.Stats()
	if st.Requested != 3 || st.Shown != 3 || st.Reused != 1 || st.ProviderRequests != 2 {
		t.Errorf("stats %+v", st)
	}
	if st.PromptTokens == 0 || st.CostUSD == 0 {
		t.Errorf("stats without tokens or cost: %+v", st)
	}
}

// TestCompleteDebounce sends 8 requests 50 ms apart, as a typist at 20
// characters a second: the debounce lets only the last reach the provider.
// The debounce is a generous 1 s, so that a loaded machine stretching the
// 50 ms sleeps cannot let an earlier request through.
func TestCompleteDebounce(t *testing.T) {
	f := newFixture(t, `{"completion": {"debounceMs": 1000}}`, modeltest.Rule{Content: "Println()"})
	ctx := ctxT(t)
	line := "fmt.Pri"
	results := make([]<-chan answer, 8)
	for i := range results {
		results[i] = f.background(ctx, f.set(strings.Replace(src, "fmt.Pri|", line[:len(line)-7+i]+"|", 1), Automatic))
		time.Sleep(50 * time.Millisecond)
	}
	for i, ch := range results {
		r := <-ch
		if r.err != nil {
			t.Fatalf("request %d: %v", i, r.err)
		}
		if i < 7 && r.s != nil {
			t.Errorf("request %d was answered (%+v); a newer one supersedes it", i, r.s)
		}
		if i == 7 && (r.s == nil || r.s.Insert != "ntln()") {
			t.Errorf("the last request got %+v, want ntln()", r.s)
		}
	}
	if n := len(f.srv.Requests()); n > 4 {
		t.Errorf("%d provider requests for 8 keystrokes, want at most 4", n)
	}
}

// TestCompleteJoinsRunningStream: a request that only adds typed text at
// the place of a running stream waits for it instead of starting another.
func TestCompleteJoinsRunningStream(t *testing.T) {
	f := newFixture(t, `{"completion": {"debounceMs": 0}}`, modeltest.Rule{Content: "Println(x)", DelayMS: 3000})
	ctx := ctxT(t)
	first := f.background(ctx, f.set(src, Automatic))
	waitFor(t, func() bool { return f.c.Stats().ProviderRequests == 1 })
	s, err := f.c.Complete(ctx, f.set(strings.Replace(src, "Pri|", "Prin|", 1), Automatic))
	if err != nil || s == nil || s.Insert != "tln(x)" || s.Text != "ntln(x)" {
		t.Fatalf("the joining request got %+v, %v", s, err)
	}
	if r := <-first; r.s != nil {
		t.Errorf("the superseded request got %+v", r.s)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 1 || reqs[0].HungUp {
		t.Errorf("want one provider request, not hung up; got %d", len(reqs))
	}
}

// TestCompleteCancelHangsUp: cancelling the only request of a running
// stream hangs the stream up; the stand-in sees the client go away.
func TestCompleteCancelHangsUp(t *testing.T) {
	f := newFixture(t, "", modeltest.Rule{Fault: "stall", FaultAfter: 1})
	ctx, cancel := context.WithCancel(ctxT(t))
	done := f.background(ctx, f.set(src, Invoked))
	f.waitArrived(1)
	cancel()
	if r := <-done; !errors.Is(r.err, context.Canceled) {
		t.Errorf("Complete returned %v, want context.Canceled", r.err)
	}
	reqs, err := f.srv.WaitRequests(ctxT(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reqs[0].HungUp {
		t.Errorf("the stand-in did not see the stream hung up")
	}
	if st := f.c.Stats(); st.CancelledStreams != 1 {
		t.Errorf("cancelled streams %d, want 1", st.CancelledStreams)
	}
}

// TestCompleteNewerElsewhereHangsUp: a newer request somewhere the running
// stream cannot serve hangs it up and starts its own.
func TestCompleteNewerElsewhereHangsUp(t *testing.T) {
	// The stall rule matches the first request by its prompt, not by
	// order: waitArrived sees a body arrive before the stand-in picks its
	// rule, and under load the second request's handler could pick first.
	f := newFixture(t, `{"completion": {"debounceMs": 0}}`,
		modeltest.Rule{MatchPrompt: "fmt.Pri<|cursor|>", Fault: "stall", FaultAfter: 1}, modeltest.Rule{Content: "Println()"})
	ctx := ctxT(t)
	first := f.background(ctx, f.set(src, Automatic))
	f.waitArrived(1)
	// The user deleted a character: not an extension of the first place.
	s, err := f.c.Complete(ctx, f.set(strings.Replace(src, "Pri|", "Pr|", 1), Automatic))
	if err != nil || s == nil || s.Insert != "intln()" {
		t.Fatalf("the newer request got %+v, %v", s, err)
	}
	if r := <-first; r.s != nil {
		t.Errorf("the superseded request got %+v", r.s)
	}
	reqs, err := f.srv.WaitRequests(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	hung := 0
	for _, r := range reqs {
		if r.HungUp {
			hung++
		}
	}
	if hung != 1 {
		t.Errorf("%d streams hung up, want 1", hung)
	}
}

func TestCompleteWithoutKey(t *testing.T) {
	f := newFixture(t, "")
	f.setConfig(config.Default())
	_, err := f.c.Complete(ctxT(t), f.set(src, Invoked))
	if !errors.Is(err, config.ErrNoAPIKey) {
		t.Fatalf("got %v, want ErrNoAPIKey", err)
	}
	if n := len(f.srv.Requests()); n != 0 {
		t.Errorf("%d provider requests without a key", n)
	}
}

// TestCompleteRateLimitPauses: after a 429 no request is sent until the
// Retry-After has passed.
func TestCompleteRateLimitPauses(t *testing.T) {
	f := newFixture(t, "", modeltest.Rule{Fault: "429", RetryAfter: "30"})
	ctx := ctxT(t)
	if _, err := f.c.Complete(ctx, f.set(src, Invoked)); err == nil {
		t.Fatal("no error for a 429")
	}
	_, err := f.c.Complete(ctx, f.set(strings.Replace(src, "Pri|", "Pr|", 1), Invoked))
	if !errors.Is(err, ErrPaused) {
		t.Fatalf("got %v, want ErrPaused", err)
	}
	if n := len(f.srv.Requests()); n != 1 {
		t.Errorf("%d provider requests, want 1", n)
	}
}

// TestCompleteRefusedKey: after a 401 no request is sent with the same key;
// a new key is tried.
func TestCompleteRefusedKey(t *testing.T) {
	f := newFixture(t, "", modeltest.Rule{Content: "ntln()"})
	good := f.srv.Key
	wrong, _ := f.config().WithEditor(json.RawMessage(`{"apiKey": "sk-wrong-0123456789"}`))
	f.setConfig(wrong)
	ctx := ctxT(t)
	for i := 0; i < 3; i++ {
		if _, err := f.c.Complete(ctx, f.set(src, Invoked)); !errors.Is(err, ErrKeyRefused) {
			t.Fatalf("attempt %d: got %v, want ErrKeyRefused", i, err)
		}
	}
	if n := len(f.srv.Requests()); n != 1 {
		t.Errorf("%d provider requests, want 1", n)
	}
	cfg, _ := f.config().WithEditor(json.RawMessage(`{"apiKey": "` + good + `"}`))
	f.setConfig(cfg)
	if s, err := f.c.Complete(ctx, f.set(src, Invoked)); err != nil || s == nil {
		t.Fatalf("with a new key: %+v, %v", s, err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
