package complete

import (
	"testing"

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
