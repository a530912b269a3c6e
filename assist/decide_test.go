package assist_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/verify"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestDecideNewErrors: the one new-errors policy, for each setting, with
// a surface that asks (and what it answers) and one that never asks.
func TestDecideNewErrors(t *testing.T) {
	broken := &assist.Verification{Result: verify.Result{Verified: true, Helpers: []string{"gopls"},
		NewErrors: []verify.Error{{URI: workspace.FileURI("/w/a.go"), Message: "undefined: x"}}}}
	line := broken.Line()
	yes := func(context.Context) (bool, error) { return true, nil }
	no := func(context.Context) (bool, error) { return false, nil }
	cannot := func(context.Context) (bool, error) { return false, errors.New("no showMessageRequest") }
	for _, tc := range []struct {
		name, setting string
		v             *assist.Verification
		ask           func(context.Context) (bool, error)
		land, failed  bool
		note          string
	}{
		{"clean", config.OnNewErrorsRefuse, &assist.Verification{Result: verify.Result{Verified: true, Helpers: []string{"gopls"}}}, nil, true, false, ""},
		{"not verified", config.OnNewErrorsAsk, nil, nil, true, false, ""},
		{"apply", config.OnNewErrorsApply, broken, nil, true, false, " (applied: verify.onNewErrors = apply)"},
		{"refuse", config.OnNewErrorsRefuse, broken, yes, false, true, " (verify.onNewErrors = refuse)"},
		{"ask yes", config.OnNewErrorsAsk, broken, yes, true, false, " (kept by your choice)"},
		{"repair no", config.OnNewErrorsRepair, broken, no, false, false, " (discarded by your choice)"},
		{"editor cannot ask", config.OnNewErrorsAsk, broken, cannot, false, false, " (the editor could not ask whether to apply it"},
		{"command line", config.OnNewErrorsRepair, broken, nil, false, false, " (no one to ask"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vd := tc.v.Decide(context.Background(), tc.setting, tc.ask)
			if vd.Land != tc.land || vd.Failed != tc.failed {
				t.Errorf("verdict %+v, want land %v, failed %v", vd, tc.land, tc.failed)
			}
			want := tc.v.Line() + tc.note
			if tc.v == broken {
				want = line + tc.note
			}
			if !strings.HasPrefix(vd.Line, want) {
				t.Errorf("line %q, want it to start with %q", vd.Line, want)
			}
			if (vd.AskErr != nil) != (tc.name == "editor cannot ask") {
				t.Errorf("AskErr %v", vd.AskErr)
			}
		})
	}
}
