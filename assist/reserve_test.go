package assist_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
)

// TestReservationSettledHowEverTheRequestEnds (#30.6): an action's request
// holds its estimate against the budgets while it is at the provider (the
// stand-in sees the request while the reservation is held), and however it
// ends — answered, refused with an error status, cut off mid-stream,
// cancelled — the reservation is gone afterwards, and the request is in
// the record once (at its real cost, or kimi-lsp's estimate when
// cancelled).
func TestReservationSettledHowEverTheRequestEnds(t *testing.T) {
	for _, tc := range []struct {
		name string
		rule modeltest.Rule
	}{
		{"answered", modeltest.Rule{Content: "It returns 1."}},
		{"refused", modeltest.Rule{Fault: "400"}},
		{"cut", modeltest.Rule{Content: "It returns one, as the reader", Fault: "cut", FaultAfter: 2}},
		{"cancelled", modeltest.Rule{Content: "late", DelayMS: 10000}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, map[string]string{"go.mod": "module example.com/m\n", "a.go": "package m\n\nfunc A() int {\n\treturn 1\n}\n"})
			arrived := make(arrivals, 1)
			srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{tc.rule}}, RequestLog: arrived})
			defer srv.Close()
			env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
			cfg, _ := config.Default().WithEnv(func(k string) string { return env[k] })
			cfg.Budget.Hourly = 1
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
			defer cancel()
			heldThen := make(chan float64, 1)
			go func() {
				<-arrived
				st, _ := lg.Status()
				heldThen <- st.Hour.Held
				if tc.name == "cancelled" {
					cancel()
				}
			}()
			_, err = engine.Run(ctx, *task, &recorder{})
			if (tc.name == "answered") != (err == nil) || tc.name == "cancelled" && !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v", err)
			}
			// The delayed reply keeps the cancelled one at the stand-in
			// while the status is read; the others may have ended by then.
			if h := <-heldThen; tc.name == "cancelled" && h <= 0 {
				t.Errorf("nothing held while the request was at the stand-in ($%v)", h)
			}
			st, _ := lg.Status()
			if st.Hour.Held != 0 {
				t.Errorf("$%v still held after the request ended", st.Hour.Held)
			}
			recs, err := rec.Records(0)
			if err != nil || len(recs) != 1 {
				t.Fatalf("%d records (%v), want 1", len(recs), err)
			}
			t.Logf("%s: outcome %s, $%.6f recorded", tc.name, recs[0].Outcome, st.Hour.Spent)
		})
	}
}

// queueSink is a task's sink that signals when the task is told it waits
// in the queue for a stream slot.
type queueSink struct {
	recorder
	queued chan struct{}
	once   sync.Once
}

func (s *queueSink) Status(msg string) {
	s.recorder.Status(msg)
	if strings.HasPrefix(msg, "queued") {
		s.once.Do(func() { close(s.queued) })
	}
}

// TestAskingGivesTheSlotBack (#30.6): an action that left the queue to
// find its estimate no longer fits (another request in flight holds the
// rest of the budget) asks without holding its stream slot — with one slot
// (jobs.maxConcurrent = 1) another request can take it while the user
// decides — and "Cancel" sends nothing.
func TestAskingGivesTheSlotBack(t *testing.T) {
	f := newFixture(t, map[string]string{"go.mod": "module example.com/m\n", "a.go": "package m\n\nfunc A() int {\n\treturn 1\n}\n"},
		modeltest.Rule{Content: "It returns 1."})
	f.cfg.Budget.Hourly = 1
	rec, err := spend.Open(filepath.Join(t.TempDir(), "kimi-lsp"), spend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lg := provider.NewLedger(rec, f.cfg.Budget, nil)
	defer lg.Close()
	gate := jobs.New(jobs.Options{Limit: 1})
	defer gate.Close()
	asked, answer := make(chan string, 1), make(chan bool)
	engine, err := assist.NewEngine(assist.Options{Config: f.cfg, ExplanationDir: t.TempDir(), Ledger: lg, Gate: gate,
		Confirm: func(ctx context.Context, q string) bool { asked <- q; return <-answer }})
	if err != nil {
		t.Fatal(err)
	}
	task, err := engine.BuildTask(f.cfg, f.folders, f.request(config.ActionExplain, "a.go", "\treturn", "1"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mine, err := gate.Acquire(ctx, nil) // the one slot: the task queues
	if err != nil {
		t.Fatal(err)
	}
	sink := &queueSink{queued: make(chan struct{})}
	done := make(chan error, 1)
	go func() {
		_, err := engine.Run(ctx, *task, sink)
		done <- err
	}()
	select {
	case <-sink.queued: // past the check before the queue: nothing was held then
	case err := <-done:
		t.Fatalf("the task ended before it queued: %v", err)
	}
	other := lg.Hold(0.999) // another request in flight takes the rest
	mine()
	var q string
	select {
	case q = <-asked:
	case <-ctx.Done():
		t.Fatal("the task never asked")
	}
	if !strings.Contains(q, "more than is left of the hourly budget") {
		t.Errorf("question %q", q)
	}
	// While the question is open, the slot is free.
	again, err := gate.Acquire(ctx, nil)
	if err != nil {
		t.Fatalf("the asking task kept its stream slot: %v", err)
	}
	again()
	answer <- false
	if err := <-done; !errors.Is(err, provider.ErrNotSent) {
		t.Errorf("Run after Cancel: %v, want ErrNotSent", err)
	}
	other.Release()
	if n := len(f.srv.Requests()); n != 0 {
		t.Errorf("%d requests at the stand-in after Cancel, want 0", n)
	}
	if st, _ := lg.Status(); st.Hour.Held != 0 {
		t.Errorf("$%v held after every request ended", st.Hour.Held)
	}
}
