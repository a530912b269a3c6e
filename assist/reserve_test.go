package assist_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
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
