package assist

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/verify"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestRepairPromptIsBounded: an edit that brings hundreds of errors (a
// renamed type), one of them with a huge message, is sent back to the
// model with at most MaxDiagnostics errors quoted, each message cut.
func TestRepairPromptIsBounded(t *testing.T) {
	r := verify.Result{Helpers: []string{"pyright"}, Verified: true}
	uri := workspace.FileURI("/w/a.py")
	r.NewErrors = append(r.NewErrors, verify.Error{URI: uri, Line: 0, Message: "Type is " + strings.Repeat("é", 100_000)})
	for i := 1; i < 300; i++ {
		r.NewErrors = append(r.NewErrors, verify.Error{URI: uri, Line: i, Message: fmt.Sprintf("\"Old%d\" is not defined", i)})
	}
	p := repairPrompt(r)
	if len(p) > 3*maxDiagnosticBytes+MaxDiagnostics*100 {
		t.Errorf("the repair prompt is %d bytes", len(p))
	}
	if !strings.Contains(p, "300 new errors") || !strings.Contains(p, "and 280 more") {
		t.Errorf("the prompt does not say how many there are: %.500s", p)
	}
	if !strings.Contains(p, `"Old19" is not defined`) || strings.Contains(p, `"Old20" is not defined`) {
		t.Errorf("want the first %d errors quoted", MaxDiagnostics)
	}
	if !strings.Contains(p, "é…") || strings.Contains(p, "\uFFFD") {
		t.Errorf("the long message is not cut at a character")
	}
}
