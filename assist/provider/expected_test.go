package provider

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

// TestExpectedOutput: the estimate's output is the upper median of a
// surface and model's last five counted answers (cut-off ones included, failed
// ones not), within the request's bound; a new session starts from the
// record an earlier one left; with nothing recorded it is the default.
func TestExpectedOutput(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "kimi-lsp")
	open := func() *Ledger {
		rec, err := spend.Open(dir, spend.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return NewLedger(rec, config.Budget{}, nil)
	}
	l := open()
	if e := l.ExpectedOutput("explain", "m", 0); e.Tokens != DefaultExpectedOutput || !strings.Contains(e.Basis, "no explain answer recorded yet") {
		t.Errorf("nothing recorded: %+v", e)
	}
	if e := l.ExpectedOutput("explain", "m", 1000); e.Tokens != 1000 {
		t.Errorf("bound 1000: %+v", e)
	}
	done := func(surface, m string, out int, err error) {
		l.Done(&Call{Surface: surface}, m, cache.Accounting{Usage: cache.Usage{PromptTokens: 100, CompletionTokens: out}}, err)
	}
	done("explain", "m", 9000, nil) // pushed out by the five after it
	for _, n := range []int{300, 700, 500, 400} {
		done("explain", "m", n, nil)
	}
	done("explain", "m", 8000, errors.New("502")) // failed: not counted
	done("explain", "other", 6000, nil)           // another model
	done("fix", "m", 5000, nil)                   // another surface
	done("explain", "m", 650, model.ErrCutOff)    // cut off: counted
	if e := l.ExpectedOutput("explain", "m", 0); e.Tokens != 500 || e.Basis != "500 output tokens, as the median of the last 5 explain answers" {
		t.Errorf("after six answers: %+v", e)
	}
	if e := l.ExpectedOutput("explain", "m", 450); e.Tokens != 450 {
		t.Errorf("bound 450: %+v", e)
	}
	l.Close()
	l = open()
	defer l.Close()
	if e := l.ExpectedOutput("fix", "m", 0); e.Tokens != 5000 || e.Basis != "5,000 output tokens, as the last fix answer" {
		t.Errorf("a new session: %+v", e)
	}
}
