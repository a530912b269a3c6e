package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
)

func loopRequest(text string) *model.Request {
	return &model.Request{
		Model:               model.ModelPro,
		Messages:            []model.Message{model.SystemMessage("You edit code with tools."), model.UserMessage(text)},
		ReasoningEffort:     model.EffortHigh,
		MaxCompletionTokens: 8192,
		Tools:               tools.ModelTools(),
	}
}

func client(srv *modeltest.Server) *model.Client {
	return model.New(model.Options{BaseURL: srv.URL, APIKey: srv.Key, FallbackURL: "none"})
}

// The model reads the file, then fixes it with replace_text, then answers.
func TestLoopReadFileRoundTrip(t *testing.T) {
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "Fix Add", Times: 1, Reasoning: "I need to see calc.go first.",
			ToolCalls: []modeltest.ScriptToolCall{{Name: tools.ReadFile, Arguments: `{"path":"calc.go","start_line":null,"end_line":null}`}}},
		{LastRole: "tool", MatchPrompt: "calc.go: lines 1-6 of 6", Times: 1, Reasoning: "Add subtracts; replace the operator.",
			ToolCalls: []modeltest.ScriptToolCall{
				{Name: tools.ReplaceText, Arguments: `{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}`},
				{Name: "format_disk", Arguments: `{}`},
				{Name: tools.ReadFile, Arguments: `{"path": "calc.go"`},
			}},
		{LastRole: "tool", Reasoning: "Done.", Content: "Add now adds."},
	}}})
	defer srv.Close()
	x, d := newExecutor(t, map[string]string{"calc.go": calc})
	req := loopRequest("Fix Add in calc.go")
	res, err := tools.Loop(context.Background(), client(srv), req, x, tools.LoopOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds != 3 || res.Calls != 4 || res.Final.Content != "Add now adds." {
		t.Fatalf("result %+v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for _, r := range reqs {
		if r.Status != 200 {
			t.Fatalf("request %d answered %d: %s", r.Seq, r.Status, r.Error)
		}
	}
	// Round 2 carried the assistant message back whole and the file text
	// as the tool result.
	msgs := reqs[1].Parsed.Messages
	asst, tool := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if asst.Role != "assistant" || asst.ReasoningContent == nil || *asst.ReasoningContent != "I need to see calc.go first." || len(asst.ToolCalls) != 1 {
		t.Errorf("assistant message not sent back whole: %+v", asst)
	}
	if tool.Role != "tool" || tool.ToolCallID == nil || *tool.ToolCallID != asst.ToolCalls[0].ID || !strings.Contains(tool.Text(), "\treturn a - b\n") {
		t.Errorf("tool message: %+v %q", tool, tool.Text())
	}
	// Round 3: one tool message per call, errors included.
	msgs = reqs[2].Parsed.Messages
	var results []string
	for _, m := range msgs[len(msgs)-3:] {
		if m.Role != "tool" {
			t.Fatalf("want three tool messages at the end, got role %s", m.Role)
		}
		results = append(results, m.Text())
	}
	if !strings.Contains(results[0], "replaced in calc.go") || !strings.Contains(results[1], `unknown tool "format_disk"`) || !strings.Contains(results[2], "invalid arguments") {
		t.Errorf("tool results %q", results)
	}
	changes, err := x.Set().Changes()
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 1 || changes[0].After != strings.Replace(calc, "a - b", "a + b", 1) {
		t.Fatalf("changes %+v", changes)
	}
	if err := d.Write(changes); err != nil {
		t.Fatal(err)
	}
}

// A diff in the reply that does not apply goes back to the model once; the
// corrected one applies.
func TestLoopReplyDiffRetry(t *testing.T) {
	bad := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@\n func Add(a, b int) int {\n-\treturn a * b\n+\treturn a + b\n }\n```"
	good := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + b\n }\n```"
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "Fix Add", Times: 1, Reasoning: "Swap the operator.", Content: bad},
		{Match: "was not applied", Times: 1, Reasoning: "Copy the line exactly.", Content: good},
	}}})
	defer srv.Close()
	x, _ := newExecutor(t, map[string]string{"calc.go": calc})
	res, err := tools.Loop(context.Background(), client(srv), loopRequest("Fix Add in calc.go"), x, tools.LoopOptions{ReplyDiff: true})
	if err != nil {
		t.Fatal(patch.Feedback(err))
	}
	if res.Rounds != 2 {
		t.Fatalf("rounds %d, want 2", res.Rounds)
	}
	feedback := srv.Requests()[1].Parsed.Messages
	if last := feedback[len(feedback)-1].Text(); !strings.Contains(last, "calc.go, hunk 1") || !strings.Contains(last, "return a - b") {
		t.Errorf("feedback to the model: %q", last)
	}
	changes, err := x.Set().Changes()
	if err != nil || len(changes) != 1 || !strings.Contains(changes[0].After, "a + b") {
		t.Fatalf("changes %+v %v", changes, err)
	}

	// Twice wrong: the refusal comes back for the user, nothing changes.
	srv2 := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Reasoning: "r", Content: bad}}})
	defer srv2.Close()
	x2, _ := newExecutor(t, map[string]string{"calc.go": calc})
	_, err = tools.Loop(context.Background(), client(srv2), loopRequest("Fix Add in calc.go"), x2, tools.LoopOptions{ReplyDiff: true})
	if !errors.Is(err, patch.ErrNoMatch) || len(srv2.Requests()) != 2 {
		t.Fatalf("got %v after %d requests, want ErrNoMatch after 2", err, len(srv2.Requests()))
	}
	if ch, _ := x2.Set().Changes(); len(ch) != 0 {
		t.Fatalf("refused diff left changes %+v", ch)
	}
}

func TestLoopRoundLimit(t *testing.T) {
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Reasoning: "again",
		ToolCalls: []modeltest.ScriptToolCall{{Name: tools.ReadFile, Arguments: `{"path":"calc.go","start_line":1,"end_line":1}`}}}}})
	defer srv.Close()
	x, _ := newExecutor(t, map[string]string{"calc.go": calc})
	res, err := tools.Loop(context.Background(), client(srv), loopRequest("loop forever"), x, tools.LoopOptions{})
	if !errors.Is(err, tools.ErrTooManyRounds) || res.Rounds != tools.MaxRounds || len(srv.Requests()) != tools.MaxRounds {
		t.Fatalf("got %v after %d rounds", err, res.Rounds)
	}
}

// Issue 12 item 10: two replace_text calls, the second fails, the model
// says "Done". The loop asks it once to redo the failed call; when it does
// not, nothing is applied and the error names the failed call.
func TestLoopFailedEditNotHidden(t *testing.T) {
	calls := []modeltest.ScriptToolCall{
		{Name: tools.ReplaceText, Arguments: `{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}`},
		{Name: tools.ReplaceText, Arguments: `{"path":"calc.go","old_text":"// Sub subtracts.","new_text":"// Sub returns a minus b."}`},
	}
	redo := modeltest.ScriptToolCall{Name: tools.ReplaceText, Arguments: `{"path":"calc.go","old_text":"// Add adds.","new_text":"// Add returns a plus b."}`}
	swapped := []modeltest.ScriptToolCall{calls[1], calls[0]}
	tests := []struct {
		name    string
		calls   []modeltest.ScriptToolCall
		redo    bool
		wantErr bool
	}{
		{"not redone: nothing applied", calls, false, true},
		// A later call of the same round was written before the model saw
		// the failure: it does not redo it.
		{"failing call first, same file edited after it in the same round", swapped, false, true},
		{"redone: applied, failure still listed", calls, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			second := modeltest.Rule{Match: "nothing of them was applied", Times: 1, Reasoning: "It is fine.", Content: "Done."}
			if tc.redo {
				second = modeltest.Rule{Match: "nothing of them was applied", Times: 1, Reasoning: "Sub is not in this file; document Add instead.",
					ToolCalls: []modeltest.ScriptToolCall{redo}}
			}
			srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
				{Match: "Fix calc.go", Times: 1, Reasoning: "Two edits.", ToolCalls: tc.calls},
				{LastRole: "tool", Reasoning: "Done.", Content: "Done."},
				second,
			}}})
			defer srv.Close()
			x, _ := newExecutor(t, map[string]string{"calc.go": calc})
			res, err := tools.Loop(context.Background(), client(srv), loopRequest("Fix calc.go"), x, tools.LoopOptions{})
			if len(res.Failed) != 1 || res.Failed[0].Tool != tools.ReplaceText || res.Failed[0].Path != "calc.go" || res.Failed[0].Resolved != tc.redo {
				t.Fatalf("failed calls %+v", res.Failed)
			}
			if tc.wantErr {
				var fe *tools.FailedEditsError
				if !errors.As(err, &fe) || !errors.Is(err, tools.ErrFailedEdits) {
					t.Fatalf("got %v, want a FailedEditsError", err)
				}
				if msg := err.Error(); !strings.Contains(msg, "nothing was changed") || !strings.Contains(msg, "replace_text calc.go") || !strings.Contains(msg, "1 edit tool call failed") {
					t.Errorf("error text %q", msg)
				}
				if n := len(srv.Requests()); n != 3 {
					t.Errorf("%d requests, want 3 (the model was asked once)", n)
				}
				prompt := srv.Requests()[2].Parsed.Messages
				if last := prompt[len(prompt)-1].Text(); !strings.Contains(last, "replace_text calc.go") {
					t.Errorf("the model was not told which call failed: %q", last)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ch, err := x.Set().Changes()
			if err != nil || len(ch) != 1 || !strings.Contains(ch[0].After, "a + b") || !strings.Contains(ch[0].After, "// Add returns a plus b.") {
				t.Fatalf("changes %+v %v", ch, err)
			}
		})
	}
}

// Issue 13 item 11: the correction round of a refused reply diff forces a
// replace_text call (tool_choice naming the function) for that round only.
func TestLoopCorrectionForcesReplaceText(t *testing.T) {
	bad := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@\n func Add(a, b int) int {\n-\treturn a * b\n+\treturn a + b\n }\n```"
	for _, mode := range []tools.CorrectionMode{tools.CorrectWithTool, tools.CorrectWithDiff} {
		srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
			{Match: "Fix Add", Times: 1, Reasoning: "Swap the operator.", Content: bad},
			{Match: "was not applied", Times: 1, Reasoning: "Copy the line.", ToolCalls: []modeltest.ScriptToolCall{
				{Name: tools.ReplaceText, Arguments: `{"path":"calc.go","old_text":"\treturn a - b\n","new_text":"\treturn a + b\n"}`}}},
			{LastRole: "tool", Reasoning: "Done.", Content: "Add adds now."},
		}}})
		x, _ := newExecutor(t, map[string]string{"calc.go": calc})
		req := loopRequest("Fix Add in calc.go")
		req.ToolChoice = model.ToolChoiceAuto
		if _, err := tools.Loop(context.Background(), client(srv), req, x, tools.LoopOptions{ReplyDiff: true, Correction: mode}); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		srv.Close()
		if len(reqs) != 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		got := []string{string(reqs[0].Parsed.ToolChoice), string(reqs[1].Parsed.ToolChoice), string(reqs[2].Parsed.ToolChoice)}
		want := []string{`"auto"`, `{"type":"function","function":{"name":"replace_text"}}`, `"auto"`}
		if mode == tools.CorrectWithDiff {
			want[1] = `"auto"`
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("mode %d: request %d tool_choice %s, want %s", mode, i+1, got[i], want[i])
			}
		}
		if ch, err := x.Set().Changes(); err != nil || len(ch) != 1 {
			t.Fatalf("changes %+v %v", ch, err)
		}
	}
}

// A reply cut off at the token limit is never applied as a diff, though its
// text reads as a complete diff (counts are only hints).
func TestLoopCutOffReplyNotApplied(t *testing.T) {
	cut := "--- a/calc.go\n+++ b/calc.go\n@@ -4,3 +4,5 @@\n func Add(a, b int) int {\n-\treturn a - b\n+\tif a == 0 {\n"
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Reasoning: "r", Content: cut, FinishReason: "length"}}})
	defer srv.Close()
	x, _ := newExecutor(t, map[string]string{"calc.go": calc})
	_, err := tools.Loop(context.Background(), client(srv), loopRequest("Fix Add in calc.go"), x, tools.LoopOptions{ReplyDiff: true})
	if !errors.Is(err, patch.ErrTruncated) {
		t.Fatalf("got %v, want ErrTruncated", err)
	}
	if ch, _ := x.Set().Changes(); len(ch) != 0 {
		t.Fatalf("cut-off diff left changes %+v", ch)
	}
}

// TestLoopVerifyRepairRound: the Verify hook's answer goes back to the
// model once, in the same conversation; its repair applies on top of the
// first edit; a second answer of the hook starts no further round.
func TestLoopVerifyRepairRound(t *testing.T) {
	first := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + c\n }\n```"
	repair := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@\n func Add(a, b int) int {\n-\treturn a + c\n+\treturn a + b\n }\n```"
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "undefined: c", Times: 1, Content: repair},
		{Match: "Fix Add", Times: 1, Content: first},
	}}})
	defer srv.Close()
	x, _ := newExecutor(t, map[string]string{"calc.go": calc})
	var calls []bool
	verify := func(_ context.Context, canRepair bool) string {
		calls = append(calls, canRepair)
		return "calc.go:4: undefined: c"
	}
	res, err := tools.Loop(context.Background(), client(srv), loopRequest("Fix Add in calc.go"), x,
		tools.LoopOptions{ReplyDiff: true, Verify: verify, Repairs: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Rounds != 2 || len(calls) != 2 || !calls[0] || calls[1] {
		t.Fatalf("rounds %d, verify calls %v; want 2 rounds, a repair possible at the first call only", res.Rounds, calls)
	}
	reqs := srv.Requests()
	msgs := reqs[1].Parsed.Messages
	if last := msgs[len(msgs)-1].Text(); last != "calc.go:4: undefined: c" || len(msgs) != len(reqs[0].Parsed.Messages)+2 {
		t.Errorf("the repair request: %d messages, last %q; want the first request's, the answer and the errors", len(msgs), last)
	}
	changes, err := x.Set().Changes()
	if err != nil || len(changes) != 1 || !strings.Contains(changes[0].After, "return a + b") {
		t.Fatalf("changes %+v %v", changes, err)
	}
}

// TestLoopRepairThatDoesNotApply: a repair whose diff is refused, and
// refused again after the correction, leaves the first edit as it was (it
// is not lost), checked once more by Verify; so does a repair request
// that fails.
func TestLoopRepairThatDoesNotApply(t *testing.T) {
	first := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + c\n }\n```"
	stale := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@\n func Add(a, b int) int {\n-\treturn a * b\n+\treturn a + b\n }\n```"
	for _, tc := range []struct {
		name  string
		rules []modeltest.Rule
	}{
		{"refused twice", []modeltest.Rule{
			{Match: "Fix Add", Times: 1, Content: first},
			{Content: stale},
		}},
		{"request fails", []modeltest.Rule{
			{Match: "Fix Add", Times: 1, Content: first},
			{Fault: "400", Message: "bad request"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: tc.rules}})
			defer srv.Close()
			x, _ := newExecutor(t, map[string]string{"calc.go": calc})
			var calls []bool
			verify := func(_ context.Context, canRepair bool) string {
				calls = append(calls, canRepair)
				return "calc.go:4: undefined: c"
			}
			_, err := tools.Loop(context.Background(), client(srv), loopRequest("Fix Add in calc.go"), x,
				tools.LoopOptions{ReplyDiff: true, Verify: verify, Repairs: 1})
			if err != nil {
				t.Fatalf("got %v, want the first edit kept", err)
			}
			if len(calls) != 2 || !calls[0] || calls[1] {
				t.Errorf("verify calls %v; want a repair possible at the first only", calls)
			}
			changes, err := x.Set().Changes()
			if err != nil || len(changes) != 1 || !strings.Contains(changes[0].After, "return a + c") {
				t.Fatalf("changes %+v %v; want the first edit", changes, err)
			}
		})
	}
}

// TestLoopRepairRestatedAgainstTheOriginal: a repair written as the whole
// corrected change against the original text (it does not apply to the
// file as the first edit left it) replaces the first edit, as a reply's
// diff and as an apply_diff call, and the set says it was restated.
func TestLoopRepairRestatedAgainstTheOriginal(t *testing.T) {
	first := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + c\n }\n```"
	whole := "--- a/calc.go\n+++ b/calc.go\n@@ -4,3 +4,3 @@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a + b\n }\n"
	args, _ := json.Marshal(map[string]string{"diff": whole})
	for _, tc := range []struct {
		name   string
		repair modeltest.Rule
	}{
		{"reply diff", modeltest.Rule{Match: "undefined: c", Times: 1, Content: "```diff\n" + whole + "```"}},
		{"apply_diff call", modeltest.Rule{Match: "undefined: c", Times: 1,
			ToolCalls: []modeltest.ScriptToolCall{{Name: tools.ApplyDiff, Arguments: string(args)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
				{Match: "original text, in place of", Times: 1, Content: "Done."},
				tc.repair,
				{Match: "Fix Add", Times: 1, Content: first},
			}}})
			defer srv.Close()
			x, _ := newExecutor(t, map[string]string{"calc.go": calc})
			var calls []bool
			verify := func(_ context.Context, canRepair bool) string {
				calls = append(calls, canRepair)
				return "calc.go:4: undefined: c"
			}
			if _, err := tools.Loop(context.Background(), client(srv), loopRequest("Fix Add in calc.go"), x,
				tools.LoopOptions{ReplyDiff: true, Verify: verify, Repairs: 1}); err != nil {
				t.Fatal(err)
			}
			if len(calls) != 2 {
				t.Errorf("verify calls %v, want 2 (the edit, the restated repair)", calls)
			}
			changes, err := x.Set().Changes()
			if err != nil || len(changes) != 1 || changes[0].After != strings.Replace(calc, "a - b", "a + b", 1) || changes[0].Before != calc {
				t.Fatalf("changes %+v %v; want the restated change against the original", changes, err)
			}
			if !x.Set().Restated() {
				t.Error("the set does not say the change was restated")
			}
		})
	}
}

// TestLoopNoRestatementOutsideARepair: a first diff that does not apply
// is never taken against the original text: the restatement is the
// repair's only (here the diff is stale against a file the model's own
// earlier call changed).
func TestLoopNoRestatementOutsideARepair(t *testing.T) {
	stale := "```diff\n--- a/calc.go\n+++ b/calc.go\n@@\n func Add(a, b int) int {\n-\treturn a - b\n+\treturn a * b\n }\n```"
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: "Fix Add", Times: 1, ToolCalls: []modeltest.ScriptToolCall{{Name: tools.ReplaceText,
			Arguments: `{"path":"calc.go","old_text":"return a - b","new_text":"return a + b"}`}}},
		{Content: stale},
	}}})
	defer srv.Close()
	x, _ := newExecutor(t, map[string]string{"calc.go": calc})
	_, err := tools.Loop(context.Background(), client(srv), loopRequest("Fix Add in calc.go"), x, tools.LoopOptions{ReplyDiff: true})
	if err == nil {
		t.Fatal("a stale diff applied outside a repair")
	}
	if x.Set().Restated() {
		t.Error("the set says restated")
	}
}
