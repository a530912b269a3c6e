package assist_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
)

// TestRecordListsWhatThePromptHolds (#25.2): the stable part of an
// engine's prompt keeps the files an earlier action placed there (the
// context ledger, #25.3), and every later request sends them again; the
// request record lists every file whose text the request holds — before,
// it listed only what the current task asked for, so after an action on
// shop/a.go an explain of other/c.go sent shop's files unrecorded.
func TestRecordListsWhatThePromptHolds(t *testing.T) {
	files := map[string]string{"go.mod": "module example.com/m\n"}
	marked := map[string]string{} // file → a marker only its text holds
	for i := range 4 {
		name := fmt.Sprintf("shop/f%d.go", i)
		marked[name] = fmt.Sprintf("MARK-F%d", i)
		files[name] = fmt.Sprintf("package shop\n\n// F%d returns %d. %s\nfunc F%d() int { return %d }\n", i, i, marked[name], i, i)
	}
	files["shop/a.go"] = "package shop\n\n// MARK-A\nfunc A() int {\n\treturn F1() + F2() + F3()\n}\n"
	files["other/c.go"] = "package other\n\n// MARK-C\nfunc C() int {\n\treturn 7\n}\n"
	marked["shop/a.go"], marked["other/c.go"] = "MARK-A", "MARK-C"
	f := newFixture(t, files, modeltest.Rule{Match: `action="explain"`, Content: "ok"})
	rec, err := spend.Open(filepath.Join(t.TempDir(), "kimi-lsp"), spend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lg := provider.NewLedger(rec, f.cfg.Budget, nil)
	defer lg.Close()
	engine, err := assist.NewEngine(assist.Options{Config: f.cfg, ExplanationDir: t.TempDir(), Ledger: lg})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []assist.TaskRequest{
		f.request(config.ActionExplain, "shop/a.go", "\treturn", "F3()"),
		f.request(config.ActionExplain, "other/c.go", "\treturn", "7"),
	} {
		task, err := engine.BuildTask(f.cfg, f.folders, r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := engine.Run(context.Background(), *task, &recorder{}); err != nil {
			t.Fatal(err)
		}
	}
	reqs := f.srv.Requests()
	recs, err := rec.Records(0)
	if err != nil || len(reqs) != 2 || len(recs) != 2 {
		t.Fatalf("%d requests, %d records (%v), want 2 and 2", len(reqs), len(recs), err)
	}
	if !strings.Contains(string(reqs[1].Body), "MARK-F1") {
		t.Fatal("the second prompt does not hold shop's files: the test shows nothing")
	}
	for i, r := range reqs {
		var listed, held []string
		for _, file := range recs[i].Files {
			listed = append(listed, file.Path)
		}
		for name, mark := range marked {
			if strings.Contains(string(r.Body), mark) {
				held = append(held, name)
			}
		}
		slices.Sort(held)
		for _, name := range held {
			if !slices.Contains(listed, name) {
				t.Errorf("request %d holds %s; the record lists %v", i+1, name, listed)
			}
		}
	}
}

// arrivals signals each request body the stand-in logs as it arrives.
type arrivals chan struct{}

func (a arrivals) Write(p []byte) (int, error) {
	for range strings.Count(string(p), "\n") {
		select {
		case a <- struct{}{}:
		default:
		}
	}
	return len(p), nil
}

// TestActionCancelledBeforeItsReplyCounts (#25.1): an action cancelled
// after its request left but before the reply's headers came may have been
// read (and billed) by the provider: the record counts it at kimi-lsp's
// estimate, marked as such, and so do the budgets. Before, such a request
// was recorded at 0 tokens and $0.
func TestActionCancelledBeforeItsReplyCounts(t *testing.T) {
	f := newFixture(t, map[string]string{"go.mod": "module example.com/m\n", "a.go": "package m\n\nfunc A() int {\n\treturn 1\n}\n"})
	arrived := make(arrivals, 1)
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Content: "late", DelayMS: 10000}}}, RequestLog: arrived})
	defer srv.Close()
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, _ := config.Default().WithEnv(func(k string) string { return env[k] })
	rec, err := spend.Open(filepath.Join(t.TempDir(), "kimi-lsp"), spend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lg := provider.NewLedger(rec, cfg.Budget, nil)
	defer lg.Close()
	engine, err := assist.NewEngine(assist.Options{Config: cfg, ExplanationDir: t.TempDir(), Ledger: lg})
	if err != nil {
		t.Fatal(err)
	}
	task, err := engine.BuildTask(cfg, f.folders, f.request(config.ActionExplain, "a.go", "\treturn", "1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	if _, err := engine.Run(ctx, *task, &recorder{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v, want context.Canceled", err)
	}
	recs, err := rec.Records(0)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records (%v), want 1", len(recs), err)
	}
	if r := recs[0]; r.Outcome != spend.OutcomeCancelled || !r.Estimated || r.PromptTokens == 0 || r.CostUSD <= 0 {
		t.Errorf("record of the action cancelled before its reply: %+v", r)
	}
	if st, _ := lg.Status(); st.Hour.Spent <= 0 {
		t.Errorf("the budget counts nothing of it: %+v", st.Hour)
	}
}
