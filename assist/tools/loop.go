package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
)

// Completer sends a chat request and returns the whole assistant reply.
// *model.Client implements it; a caller that streams the reply to the user
// wraps its stream in one.
type Completer interface {
	Complete(ctx context.Context, req *model.Request) (*model.Response, error)
}

var _ Completer = (*model.Client)(nil)

// MaxRounds is the default bound on model requests in one loop.
const MaxRounds = 8

// ErrTooManyRounds: the model still called tools after the last round.
var ErrTooManyRounds = errors.New("the model kept calling tools past the round limit")

// ErrFailedEdits: edit tool calls failed and the model did not redo them,
// so none of the loop's edits is applied (see Loop).
var ErrFailedEdits = errors.New("edit tool calls failed")

// FailedEditsError lists the edit calls that failed and were never redone.
// Nothing of the loop's edits is applied.
type FailedEditsError struct {
	Failed []FailedCall
	// Succeeded counts the edit calls that had applied to the pending set.
	Succeeded int
}

// Error names every failed call.
func (e *FailedEditsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "edit not applied, nothing was changed: %d edit tool call", len(e.Failed))
	if len(e.Failed) != 1 {
		b.WriteString("s")
	}
	b.WriteString(" failed and the model did not redo them")
	if e.Succeeded > 0 {
		fmt.Fprintf(&b, " (the other %d would have applied)", e.Succeeded)
	}
	for _, f := range e.Failed {
		b.WriteString("; ")
		b.WriteString(f.String())
	}
	return b.String()
}

// Unwrap returns ErrFailedEdits.
func (e *FailedEditsError) Unwrap() error { return ErrFailedEdits }

// CorrectionMode says how the model is asked to correct a reply diff that
// did not apply.
type CorrectionMode uint8

const (
	// CorrectWithDiff asks for another diff, tool choice unchanged (the
	// default: measured as good as forcing replace_text, see
	// bench/README.md, and it asks nothing of the endpoint's tool_choice
	// support).
	CorrectWithDiff CorrectionMode = iota
	// CorrectWithTool forces a replace_text call in the correction round
	// (tool_choice naming the function), when the request offers the
	// tool: one call per place, old_text copied from the quoted lines.
	CorrectWithTool
)

// LoopOptions tunes Loop.
type LoopOptions struct {
	// MaxRounds bounds the model requests (default MaxRounds).
	MaxRounds int
	// ReplyDiff applies a unified diff found in the model's final text (for
	// replies that answer with a diff instead of tool calls).
	ReplyDiff bool
	// DiffRetries is how many correction rounds the loop may spend: a reply
	// diff that does not apply, or edit tool calls that failed and were not
	// redone, are sent back to the model (default 1, negative for none).
	DiffRetries int
	// Correction says how a refused reply diff is corrected.
	Correction CorrectionMode
	// Verify, if set, is called each time the loop would end with its
	// edits applied, with whether a repair round may follow (Repairs and
	// the round limit allow it): a non-empty answer then (the errors the
	// edit brings) is sent back to the model as the next message, in the
	// same conversation, and the loop goes on as after a correction. A
	// repair's diff that does not apply to the files as they are now but
	// applies to their original text restates the change and replaces
	// the earlier edits of its files (patch.EditSet.ApplyDiffToOriginal,
	// Restated). A repair that cannot be applied (its diff refused after the
	// corrections DiffRetries allows, cut off, or its request failed)
	// ends the loop without an error, the edit set as it was before the
	// repair, after one more call of Verify.
	Verify func(ctx context.Context, canRepair bool) string
	// Repairs bounds the rounds Verify may start (0: none).
	Repairs int
	// Call, if set, runs each function call in place of the executor: it
	// gets the call and run, which runs it through the executor, and
	// returns the result sent back to the model. A surface wraps the
	// executor's tools with it (the agent shows each call, answers tools
	// of its own, refuses edits in a read-only mode) without a second
	// loop. ctx is the loop's.
	Call func(ctx context.Context, call model.ToolCall, run func() Result) Result
}

// LoopResult reports how a loop ended.
type LoopResult struct {
	// Final is the model's last message (without tool calls).
	Final model.Message
	// Rounds is the number of model requests made; Calls the number of
	// tool calls run.
	Rounds, Calls int
	// Failed lists the edit calls that failed; when the loop succeeds they
	// were all redone by later edits of the same files (Resolved), and the
	// caller should still say so.
	Failed []FailedCall
}

// Loop runs the tool-call conversation: it sends req, appends each
// assistant message back whole (reasoning_content and tool_calls
// included), runs every function call through x and appends one tool
// message per call, and repeats until the model answers without tool calls
// or the round limit is reached. Built-in calls ($web_search) are answered
// as the provider expects.
//
// Edits accumulate in x's edit set. With ReplyDiff, a diff in the final
// text is applied to the same set; when it does not apply, the failure is
// sent back to the model (DiffRetries times, as a request for another diff
// or a forced replace_text call, see CorrectionMode) and then returned as
// the error, a
// *patch.Refusal for the user — also when the model answers the
// correction with neither a diff nor an edit call. A reply the provider reports as cut off
// (finish_reason "length") is never applied as a diff.
//
// Failed edit calls are never hidden. A failed edit call counts as redone
// once an edit call of the same file succeeds in a later round (after the
// model saw the failure; calls of the same round do not count). When the model answers
// while some failed call was not redone, the loop sends it the list once
// (within DiffRetries) and asks it to redo them or answer again; if it
// still has not, Loop returns a *FailedEditsError and the caller applies
// none of the edits. The caller takes x.Set().Changes() at the end and
// applies them whole; LoopResult.Failed lists every failed call.
func Loop(ctx context.Context, c Completer, req *model.Request, x *Executor, opts LoopOptions) (*LoopResult, error) {
	l := &loop{req: req, x: x, opts: opts, res: &LoopResult{}, rounds: opts.MaxRounds, retries: opts.DiffRetries}
	if l.rounds <= 0 {
		l.rounds = MaxRounds
	}
	if l.retries == 0 {
		l.retries = 1
	}
	res := l.res
	defer func() { res.Failed = x.Failed() }()
	choice := req.ToolChoice
	for res.Rounds < l.rounds {
		resp, err := c.Complete(ctx, req)
		res.Rounds++
		req.ToolChoice = choice // a forced choice holds for one round only
		if err != nil {
			// The error goes to the user as it is: which round failed is
			// for the log (and res.Rounds), not an "round 1:" prefix.
			x.log.Debug("model call failed", "round", res.Rounds, "err", err)
			if l.repairing && ctx.Err() == nil {
				return l.keepUnrepaired(ctx, err)
			}
			return res, err
		}
		msg := resp.Message
		req.AppendAssistant(msg)
		builtin := req.AnswerBuiltinCalls()
		pending := req.PendingToolCalls()
		if len(pending) == 0 && builtin > 0 {
			// Only the provider's own calls ($web_search): their answers
			// are appended; the model writes its answer in the next round.
			continue
		}
		if len(pending) == 0 {
			if again, err := l.answered(ctx, resp); !again {
				return res, err
			}
			continue
		}
		if err := l.runCalls(ctx, pending); err != nil {
			return res, err
		}
	}
	return res, fmt.Errorf("%w (%d rounds)", ErrTooManyRounds, l.rounds)
}

// loop is the state of one Loop: the request it grows, the bounds left and
// what the corrections and repairs sent so far decide.
type loop struct {
	req  *model.Request
	x    *Executor
	opts LoopOptions
	res  *LoopResult
	// rounds bounds the model requests; retries is what is left of
	// DiffRetries.
	rounds, retries int
	// refused is the last refusal of a reply diff sent back to the model,
	// and doneThen the edit calls that had succeeded by then: a correction
	// that brings neither a diff nor an edit call ends with the refusal.
	refused  error
	doneThen int
	// repairing is set once Verify's answer was sent back: from then on a
	// repair that cannot be applied (its diff refused, the request failed)
	// leaves the edit as it was before it, checked again, for the caller's
	// policy (ask, apply, refuse), instead of losing the whole edit. A
	// refused diff changes nothing in the set, and neither does a failed
	// request.
	repairing bool
}

// keepUnrepaired ends the loop after a repair that could not be applied
// (err): the edit stays as it was before it, checked again by Verify.
func (l *loop) keepUnrepaired(ctx context.Context, err error) (*LoopResult, error) {
	l.x.log.Info("the repair could not be applied; the edit stays as it was before it", "err", err)
	l.opts.Verify(ctx, false)
	return l.res, nil
}

// answered handles a reply without tool calls, resp: its diff applied
// (with ReplyDiff), then the refusal, the failed calls not redone or
// Verify's new errors sent back while the bounds allow. It reports whether
// the loop goes on (again) and, when it ends, its error.
func (l *loop) answered(ctx context.Context, resp *model.Response) (again bool, err error) {
	x, req, opts, res := l.x, l.req, l.opts, l.res
	msg := resp.Message
	res.Final = msg
	// end is how the loop ends with err: a repair that failed keeps the
	// edit as it was before it.
	end := func(err error) (bool, error) {
		if l.repairing {
			_, err = l.keepUnrepaired(ctx, err)
		}
		return false, err
	}
	if opts.ReplyDiff && hasDiff(msg.Content) {
		if resp.FinishReason == model.FinishLength {
			return end(&patch.Refusal{Problems: []*patch.ApplyError{{Err: patch.ErrTruncated,
				Detail: "the reply was cut off at the token limit (finish_reason \"length\"), so its diff is not applied"}}})
		}
		_, err := x.applyDiff(msg.Content)
		if err != nil {
			if l.retries <= 0 || res.Rounds >= l.rounds {
				return end(err)
			}
			l.retries--
			l.refused, l.doneThen = err, x.succeeded
			x.log.Info("reply diff refused; asking the model once more", "err", err)
			req.Messages = append(req.Messages, model.UserMessage(x.correction(req, err, opts.Correction)))
			return true, nil
		}
		l.refused = nil
	}
	if l.refused != nil && x.succeeded == l.doneThen {
		// Asked to correct its diff, the model answered without an
		// edit: the reason nothing applies is the refusal.
		return end(l.refused)
	}
	un := x.Unresolved()
	if len(un) == 0 {
		if opts.Verify != nil {
			can := l.opts.Repairs > 0 && res.Rounds < l.rounds
			if fb := opts.Verify(ctx, can); fb != "" && can {
				l.opts.Repairs--
				l.repairing, x.repairing = true, true
				x.log.Info("the edit brings new errors; asking the model to repair it")
				req.Messages = append(req.Messages, model.UserMessage(fb))
				return true, nil
			}
		}
		return false, nil
	}
	if l.retries <= 0 || res.Rounds >= l.rounds {
		return false, &FailedEditsError{Failed: un, Succeeded: x.succeeded}
	}
	l.retries--
	x.log.Info("edit tool calls failed and were not redone; asking the model", "failed", len(un))
	req.Messages = append(req.Messages, model.UserMessage(failedCallsPrompt(un)))
	return true, nil
}

// runCalls runs one round's function calls through the executor, each
// result appended to the request as a tool message; it stops when ctx
// ends.
func (l *loop) runCalls(ctx context.Context, pending []model.ToolCall) error {
	l.x.round++
	for _, call := range pending {
		if err := ctx.Err(); err != nil {
			return err
		}
		run := func() Result { return l.x.Call(call.Function.Name, call.Function.Arguments) }
		var r Result
		if l.opts.Call != nil {
			r = l.opts.Call(ctx, call, run)
		} else {
			r = run()
		}
		l.res.Calls++
		l.x.log.Debug("tool call", "tool", call.Function.Name, "id", call.ID, "error", r.IsError)
		l.req.AppendToolResult(call.ID, r.Content)
	}
	return nil
}

// correction is the message asking for a corrected edit after a reply diff
// was refused. In CorrectWithTool mode, when the request offers
// replace_text, it forces that tool for the next round.
func (x *Executor) correction(req *model.Request, err error, mode CorrectionMode) string {
	x.quoted(err) // its quoted lines go to the provider with the next request
	fb := x.set.Relative(patch.Feedback(err))
	if mode != CorrectWithTool || !offers(req, ReplaceText) {
		return fb
	}
	req.ToolChoice = model.ToolChoiceFunction(ReplaceText)
	return fb + "\n\nMake the whole change again with replace_text calls instead of a diff, one call per place: " +
		"old_text copied exactly from the current lines quoted above (a few whole lines, enough to occur once), new_text the lines as they should be."
}

// offers reports whether the request offers the named function tool.
func offers(req *model.Request, name string) bool {
	for _, t := range req.Tools {
		if t.Function != nil && t.Function.Name == name {
			return true
		}
	}
	return false
}

// failedCallsPrompt asks the model to redo the failed edit calls.
func failedCallsPrompt(failed []FailedCall) string {
	var b strings.Builder
	b.WriteString("These edit tool calls failed; nothing of them was applied:\n")
	for _, f := range failed {
		b.WriteString("\n- ")
		b.WriteString(f.String())
	}
	b.WriteString("\n\nRedo each of them with a corrected tool call (read the file first if its text is not what you expected). " +
		"If you answer without redoing them, none of your edits will be applied.")
	return b.String()
}

// hasDiff reports whether text seems to hold a unified diff.
func hasDiff(text string) bool {
	return strings.Contains(text, "\n@@") || strings.HasPrefix(text, "@@") ||
		strings.Contains(text, "--- ") && strings.Contains(text, "\n+++ ")
}
