package complete

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
)

// TestCancelledCompletionCounts (#25.1): a completion hung up after its
// reply began (the user typed on) was read by the provider, which bills
// its prompt (the stand-in counts it): the record counts it, at kimi-lsp's
// estimate, and so do the budgets. Before, it was recorded at 0 tokens and $0, so the completions
// superseded while typing — most of them — spent outside every budget.
func TestCancelledCompletionCounts(t *testing.T) {
	f := newFixture(t, "", modeltest.Rule{Fault: "stall", FaultAfter: 1})
	rec, err := spend.Open(filepath.Join(t.TempDir(), "kimi-lsp"), spend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lg := provider.NewLedger(rec, f.cfg.Budget, nil)
	t.Cleanup(func() { lg.Close() })
	f.c = New(Options{Config: f.config, Ledger: lg})
	ctx, cancel := context.WithCancel(ctxT(t))
	done := f.background(ctx, f.set(src, Invoked))
	f.waitArrived(1)
	cancel()
	if r := <-done; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Complete returned %v, want context.Canceled", r.err)
	}
	reqs, err := f.srv.WaitRequests(ctxT(t), 1)
	if err != nil || !reqs[0].HungUp || reqs[0].Usage.PromptTokens == 0 {
		t.Fatalf("the stand-in did not count a hung-up request: %+v, %v", reqs, err)
	}
	var recs []spend.Record
	waitFor(t, func() bool { recs, _ = rec.Records(0); return len(recs) == 1 })
	r := recs[0]
	if r.Outcome != spend.OutcomeCancelled || !r.Estimated || r.PromptTokens == 0 || r.CostUSD <= 0 {
		t.Errorf("record of the hung-up completion %+v; the stand-in counted %+v", r, reqs[0].Usage)
	}
	if st, _ := lg.Status(); st.Hour.Spent <= 0 {
		t.Errorf("the budget counts nothing of the hung-up completion: %+v", st.Hour)
	}
}

// TestCompletionHungUpBeforeItsReplyCounts (#25.1): a completion hung up
// after its body left but before the reply's headers came may have been
// read by the provider already (a provider bills a prompt it began on,
// whether or not its headers reached the client: the stand-in does), so the
// budgets count it at kimi-lsp's estimate, marked as such — an estimate too
// high rather than a request the budget never saw.
func TestCompletionHungUpBeforeItsReplyCounts(t *testing.T) {
	f := newFixture(t, "", modeltest.Rule{Content: "Println()", DelayMS: 10000})
	rec, err := spend.Open(filepath.Join(t.TempDir(), "kimi-lsp"), spend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lg := provider.NewLedger(rec, f.cfg.Budget, nil)
	t.Cleanup(func() { lg.Close() })
	f.c = New(Options{Config: f.config, Ledger: lg})
	ctx, cancel := context.WithCancel(ctxT(t))
	done := f.background(ctx, f.set(src, Invoked))
	f.waitArrived(1)
	cancel()
	if r := <-done; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("Complete returned %v, want context.Canceled", r.err)
	}
	var recs []spend.Record
	waitFor(t, func() bool { recs, _ = rec.Records(0); return len(recs) == 1 })
	if r := recs[0]; r.Outcome != spend.OutcomeCancelled || !r.Estimated || r.PromptTokens == 0 || r.CostUSD <= 0 {
		t.Errorf("record of the completion hung up before its reply: %+v", r)
	}
}
