package complete

import (
	"net/http"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestCompleteOnKimiK3 (#13.5 for completion): kimi-k3 accepts
// reasoning_effort "max" only (seed 003); a completion on it sends max
// whatever completion.reasoningEffort says, so the provider does not refuse
// every suggestion.
func TestCompleteOnKimiK3(t *testing.T) {
	f := newFixture(t, `{"completion": {"model": "kimi-k3"}}`, modeltest.Rule{Content: `ntln("hello")`})
	s, err := f.c.Complete(ctxT(t), f.set(src, Invoked))
	reqs := f.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d provider requests, want 1", len(reqs))
	}
	if r := reqs[0]; r.Status != 200 {
		t.Fatalf("the provider refused the request (%d: %s); the completer said %v", r.Status, r.Error, err)
	}
	if p := reqs[0].Parsed; p.Model != "kimi-k3" || p.ReasoningEffort == nil || *p.ReasoningEffort != "max" {
		t.Errorf("request used model %q effort %v, want kimi-k3 at max", p.Model, p.ReasoningEffort)
	}
	if err != nil || s == nil || s.Insert != `ntln("hello")` {
		t.Fatalf("got %+v, %v; want the suggestion", s, err)
	}
}

// panicTransport is an http.RoundTripper that panics: a stand-in for a bug
// anywhere on the stream's path (client, SSE reader, normaliser).
type panicTransport struct{}

func (panicTransport) RoundTrip(*http.Request) (*http.Response, error) { panic("test: broken stream") }

// TestStreamPanicIsAnError: a panic in a completion's stream goroutine
// fails that completion with an internal error; the process lives on and
// the next request is served (the goroutine is not the request's, so the
// server's per-request recover does not cover it).
func TestStreamPanicIsAnError(t *testing.T) {
	f := newFixture(t, "", modeltest.Rule{Content: `ntln("hello")`})
	broken := New(Options{Config: f.config, HTTPClient: &http.Client{Transport: panicTransport{}}})
	s, err := broken.Complete(ctxT(t), f.set(src, Invoked))
	if err == nil || !strings.Contains(err.Error(), "internal error") || s != nil {
		t.Fatalf("got %+v, %v; want an internal error", s, err)
	}
	if st := broken.Stats(); st.Failed != 1 {
		t.Errorf("stats %+v, want 1 failed", st)
	}
	if s, err := f.c.Complete(ctxT(t), f.set(strings.Replace(src, "Pri|", "Pr|", 1), Invoked)); err != nil || s == nil {
		t.Fatalf("next completion: %+v, %v", s, err)
	}
}

// TestSuggestionWithKeyDropped (#12.6 for completion): a provider that
// echoes the API key in a suggestion gets nothing shown: ghost text is one
// key press from being written into the file, and a model edit that would
// write the key is refused for the same reason.
func TestSuggestionWithKeyDropped(t *testing.T) {
	f := newFixture(t, "")
	f.srv.SetScript(&modeltest.Script{Default: &modeltest.Rule{Content: `ntln("` + f.srv.Key + `")`}})
	s, err := f.c.Complete(ctxT(t), f.set(src, Invoked))
	if err != nil || s != nil {
		t.Fatalf("got %+v, %v; want no suggestion", s, err)
	}
	// Typing on does not bring it back from the type-ahead memo either.
	s, err = f.c.Complete(ctxT(t), f.set(strings.Replace(src, "Pri|", "Printl|", 1), Automatic))
	if err != nil {
		t.Fatalf("typing on: %v", err)
	}
	if s != nil && strings.Contains(s.Text, f.srv.Key) {
		t.Fatalf("the key came back as %+v", s)
	}
}

// TestCompletionUsageEstimated (#13.3 for completion): a provider that
// sends no usage in its streams (OpenAI-like servers send it only when
// asked, and the seed defines no way to ask) does not make completion's
// figures in kimi.stats zero: they are kimi-lsp's own estimates, counted
// as estimatedUsage.
func TestCompletionUsageEstimated(t *testing.T) {
	f := newFixture(t, "")
	srv := modeltest.NewServer(modeltest.Config{UsageWhenAsked: true, Script: &modeltest.Script{Default: &modeltest.Rule{Content: `ntln("hello")`}}})
	t.Cleanup(srv.Close)
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, _ := config.Default().WithEnv(func(k string) string { return env[k] })
	f.setConfig(cfg)
	s, err := f.c.Complete(ctxT(t), f.set(src, Invoked))
	if err != nil || s == nil {
		t.Fatalf("got %+v, %v", s, err)
	}
	if r := srv.Requests(); len(r) != 1 {
		t.Fatalf("%d requests, want 1", len(r))
	}
	st := f.c.Stats()
	if st.EstimatedUsage != 1 || st.PromptTokens == 0 || st.OutputTokens == 0 || st.CostUSD == 0 {
		t.Errorf("stats %+v, want one estimated request with tokens and cost", st.Stats)
	}
}

// TestCompletionCutOffOrFiltered (#13.1, #13.2 for completion): a
// suggestion cut off at its token budget (finish_reason "length") keeps
// only its complete lines — its last line may stop mid-word — and one that
// ended for a reason outside the seed's enum (a content filter) shows
// nothing.
func TestCompletionCutOffOrFiltered(t *testing.T) {
	f := newFixture(t, "", modeltest.Rule{Content: "ntln(\"a\")\n\tfmt.Prin", FinishReason: "length"})
	s, err := f.c.Complete(ctxT(t), f.set(src, Invoked))
	if err != nil || s == nil || s.Insert != `ntln("a")` {
		t.Fatalf("cut off: got %+v, %v; want its complete line ntln(\"a\") only", s, err)
	}
	g := newFixture(t, "", modeltest.Rule{Content: `ntln("a")`, FinishReason: "content_filter"})
	if s, err := g.c.Complete(ctxT(t), g.set(src, Invoked)); s != nil {
		t.Fatalf("content_filter: got %+v, %v; want no suggestion", s, err)
	}
	h := newFixture(t, "", modeltest.Rule{Content: `ntln("a")`, FinishReason: "length"})
	if s, err := h.c.Complete(ctxT(t), h.set(src, Invoked)); s != nil {
		t.Fatalf("cut off within its only line: got %+v, %v; want no suggestion", s, err)
	}
}
