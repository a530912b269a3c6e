package tools_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
)

// TestLoopRefusalNotLostToProse: a reply diff that does not apply goes
// back to the model once; when the model then answers with prose and no
// edit, the loop returns the refusal (when nothing applies, the reason goes
// to the user), not a success with no change that would show
// only the model's prose ("OK") and hide why nothing was applied.
func TestLoopRefusalNotLostToProse(t *testing.T) {
	bad := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@\n func Add(a, b int) int {\n-\treturn a * b\n+\treturn a + b\n }\n```"
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "Fix Add", Times: 1, Reasoning: "Swap the operator.", Content: bad},
		{Match: "was not applied", Times: 1, Reasoning: "Hmm.", Content: "OK"},
	}}})
	defer srv.Close()
	x, _ := newExecutor(t, map[string]string{"calc.go": calc})
	_, err := tools.Loop(context.Background(), client(srv), loopRequest("Fix Add in calc.go"), x, tools.LoopOptions{ReplyDiff: true})
	if !errors.Is(err, patch.ErrNoMatch) || !strings.Contains(err.Error(), "calc.go, hunk 1") {
		t.Fatalf("got %v, want the refusal of the first diff", err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// TestReadFileErrorsSpeakOfReading: a read_file that fails says the file
// could not be read — not "The edit was not applied … Send one corrected
// edit", which told the model to send an edit it never tried and could
// derail it.
func TestReadFileErrorsSpeakOfReading(t *testing.T) {
	x, _ := newExecutor(t, map[string]string{"calc.go": calc, ".git/config": "[core]\n"})
	for _, path := range []string{"nope.go", "../../etc/passwd", ".git/config"} {
		r := x.Call(tools.ReadFile, `{"path": "`+path+`", "start_line": null, "end_line": null}`)
		if !r.IsError || !strings.Contains(r.Content, "could not read "+path) || strings.Contains(strings.ToLower(r.Content), "edit") {
			t.Errorf("read_file %s: %q", path, r.Content)
		}
	}
	if len(x.Failed()) != 0 {
		t.Errorf("failed reads counted as failed edits: %v", x.Failed())
	}
}
