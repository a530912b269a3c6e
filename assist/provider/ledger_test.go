package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

func TestFilesAndOutcome(t *testing.T) {
	got := Held(&cache.Prompt{Files: []cache.Shown{{Path: "a.go", Bytes: 5}, {Path: "b.go", Bytes: 2}, {Path: "b.go", Bytes: 3}}})
	if fmt.Sprint(got) != "[{a.go 5} {b.go 5}]" {
		t.Errorf("Held = %v: one per path, with the bytes of all its parts", got)
	}
	if more := AddFiles(got, spend.File{Path: "c.go", Bytes: 1}, spend.File{Path: "a.go", Bytes: 1}); fmt.Sprint(more) != "[{a.go 6} {b.go 5} {c.go 1}]" || fmt.Sprint(got) != "[{a.go 5} {b.go 5}]" {
		t.Errorf("AddFiles = %v (from %v): a new path appended, a known one added to, the list given unchanged", more, got)
	}
	for err, want := range map[error]string{
		nil: spend.OutcomeOK, context.Canceled: spend.OutcomeCancelled, model.ErrCutOff: spend.OutcomeCutOff,
		fmt.Errorf("x: %w", model.ErrNoAnswer): spend.OutcomeNoAnswer, errors.New("502"): spend.OutcomeError,
	} {
		if got := Outcome(err); got != want {
			t.Errorf("Outcome(%v) = %q, want %q", err, got, want)
		}
	}
}

// TestLedgerAskAndBackground: the budget gates, and a nil ledger, which
// gates nothing.
func TestLedgerAskAndBackground(t *testing.T) {
	var nilLedger *Ledger
	if _, err := nilLedger.Ask(context.Background(), 1, 100, "", nil); nilLedger.Background("x") != nil || err != nil {
		t.Error("a nil ledger stopped a request")
	}
	l := NewLedger(spend.Memory(spend.Options{}), config.Budget{Hourly: 0.01, ConfirmAbove: 0.10}, nil)
	var notices []string
	l.OnNotice(func(m string) { notices = append(notices, m) })
	no := func(context.Context, string) bool { return false }
	yes := func(context.Context, string) bool { return true }
	if _, err := l.Ask(context.Background(), 1000, 0.005, "", no); err != nil {
		t.Errorf("a cheap request under the budget asked: %v", err)
	}
	if _, err := l.Ask(context.Background(), 10000, 0.05, "", no); !errors.Is(err, ErrNotSent) {
		t.Errorf("a request whose estimate passes what is left of the hourly budget did not ask: %v", err)
	}
	if _, err := l.Ask(context.Background(), 60000, 0.12, "", no); !errors.Is(err, ErrNotSent) || !errors.Is(err, ErrBudget) {
		t.Errorf("above confirmAbove, answered no: %v", err)
	}
	if _, err := l.Ask(context.Background(), 60000, 0.12, "", yes); err != nil {
		t.Errorf("answered yes: %v", err)
	}
	if _, err := l.Ask(context.Background(), 60000, 0.12, "", nil); err != nil {
		t.Errorf("the command line (nil confirm) was stopped: %v", err)
	}
	l.Done(&Call{Surface: "explain"}, "m", cache.Accounting{Usage: cache.Usage{PromptTokens: 10}, Priced: true, InputCostUSD: 0.02}, nil)
	for range 3 {
		if err := l.Background("inline completion"); !errors.Is(err, ErrBudget) {
			t.Fatalf("past the hourly budget: %v", err)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "inline completion is paused until") {
		t.Errorf("notices %q, want one", notices)
	}
	if _, err := l.Ask(context.Background(), 10, 0.0001, "", no); !errors.Is(err, ErrNotSent) {
		t.Errorf("past the budget an action must ask: %v", err)
	}
	if st, b := l.Status(); !st.Capped || b.Hourly != 0.01 {
		t.Errorf("Status = %+v, %+v", st, b)
	}
}

// TestLedgerComplete: a request sent without streaming (doctor) is kept
// as the last prompt, byte for byte but for the key, and recorded.
func TestLedgerComplete(t *testing.T) {
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Content: "OK"}}})
	defer srv.Close()
	cfg := withEnv(t, map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL})
	l := NewLedger(spend.Memory(spend.Options{}), cfg.Budget, nil)
	client := NewClient(cfg, ClientOptions{})
	req := &model.Request{Model: "kimi-k3.1-pro", Messages: []model.Message{model.UserMessage("my key is " + srv.Key)}, MaxCompletionTokens: 64, ReasoningEffort: "low"}
	if _, err := l.Complete(context.Background(), cfg, client, req, &Call{Surface: "doctor", Key: srv.Key}); err != nil {
		t.Fatal(err)
	}
	lp := l.LastPrompt()
	sent := string(srv.Requests()[0].Body)
	if lp == nil || lp.Surface != "doctor" || strings.Contains(lp.Body, srv.Key) || !strings.Contains(sent, srv.Key) ||
		lp.Body != strings.ReplaceAll(sent, srv.Key, "[REDACTED]") {
		t.Errorf("last prompt %+v\nsent %s", lp, sent)
	}
	if st, _ := l.Status(); st.Hour.Spent <= 0 {
		t.Errorf("the request was not counted: %+v", st)
	}
}

// TestLedgerWarnsOnce: at 80 % of a budget the user is told once per
// window, by whichever surface's request finds it.
func TestLedgerWarnsOnce(t *testing.T) {
	l := NewLedger(spend.Memory(spend.Options{}), config.Budget{Daily: 1}, nil)
	var warns []string
	l.OnWarn(func(m string) { warns = append(warns, m) })
	l.Done(&Call{Surface: "completion"}, "m", cache.Accounting{Priced: true, InputCostUSD: 0.79}, nil)
	if l.Background("inline completion") != nil || len(warns) != 0 {
		t.Fatalf("under 80 %%: warned %q", warns)
	}
	l.Done(&Call{Surface: "completion"}, "m", cache.Accounting{Priced: true, InputCostUSD: 0.02}, nil)
	for range 3 {
		if err := l.Background("inline completion"); err != nil {
			t.Fatal(err)
		}
		l.Ask(context.Background(), 10, 0.001, "", nil)
	}
	if len(warns) != 1 || !strings.Contains(warns[0], "of the daily budget of $1.00 spent (81 %)") {
		t.Errorf("warnings %q, want one", warns)
	}
}

// TestLedgerOneClock: the ledger records and gates by its record's clock
// (spend.Options.Now), not the wall clock: a request recorded in a window
// is the spend of that window, whatever hour the wall clock shows.
func TestLedgerOneClock(t *testing.T) {
	at := time.Date(2026, 3, 4, 10, 59, 0, 0, time.UTC) // far from the wall clock's hour
	l := NewLedger(spend.Memory(spend.Options{Location: time.UTC, Now: func() time.Time { return at }}), config.Budget{Hourly: 0.01}, nil)
	l.Done(&Call{Surface: "explain"}, "m", cache.Accounting{Usage: cache.Usage{PromptTokens: 10}, Priced: true, InputCostUSD: 0.02}, nil)
	err := l.Background("inline completion")
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("the request was not counted in its clock's hour: %v", err)
	}
	if !strings.Contains(err.Error(), "paused until 11:00") {
		t.Errorf("%v: the end of the window is not the record's clock's", err)
	}
}

// TestLedgerTellsOfUnpricedModel (#25.1): a request of a model without a
// price, while a budget is set, counts $0 against it; the user is told
// once per model (before, the budget silently never bound such a model).
func TestLedgerTellsOfUnpricedModel(t *testing.T) {
	unpriced := cache.Accounting{Usage: cache.Usage{PromptTokens: 5000, CompletionTokens: 100}}
	l := NewLedger(spend.Memory(spend.Options{}), config.Budget{Hourly: 0.5}, nil)
	var warns []string
	l.OnWarn(func(m string) { warns = append(warns, m) })
	for range 3 {
		l.Done(&Call{Surface: "explain"}, "my-model", unpriced, nil)
	}
	l.Done(&Call{Surface: "explain"}, "kimi-k3.1-pro", cache.Accounting{Usage: unpriced.Usage, Priced: true, InputCostUSD: 0.01}, nil)
	if len(warns) != 1 || !strings.Contains(warns[0], "my-model has no price") || !strings.Contains(warns[0], "budget.hourly") {
		t.Errorf("warnings %q, want one naming the model", warns)
	}
	// Without an hourly or daily budget there is nothing to tell.
	quiet := NewLedger(spend.Memory(spend.Options{}), config.Budget{ConfirmAbove: 0.1}, nil)
	quiet.OnWarn(func(m string) { t.Errorf("told %q without a budget", m) })
	quiet.Done(&Call{Surface: "explain"}, "my-model", unpriced, nil)
}

// TestBudgetNoticeNamesEveryBackgroundSurface (#33 item 7): the one
// notice of a window, given when the first background surface is stopped,
// names the others it stops too (it named inline completion, not next
// edits).
func TestBudgetNoticeNamesEveryBackgroundSurface(t *testing.T) {
	l := NewLedger(spend.Memory(spend.Options{}), config.Budget{Hourly: 0.01}, nil)
	l.Backgrounds("inline completion", "next edits")
	var notices []string
	l.OnNotice(func(m string) { notices = append(notices, m) })
	l.Done(&Call{Surface: "explain"}, "m", cache.Accounting{Usage: cache.Usage{PromptTokens: 10}, Priced: true, InputCostUSD: 0.02}, nil)
	for _, what := range []string{"next edits", "inline completion", "next edits"} {
		if err := l.Background(what); !errors.Is(err, ErrBudget) {
			t.Fatalf("%s past the budget: %v", what, err)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "next edits are paused until") || !strings.HasSuffix(notices[0], ", and so is inline completion.") {
		t.Errorf("notices %q, want one naming both surfaces", notices)
	}
}
