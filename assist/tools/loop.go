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

// LoopOptions tunes Loop.
type LoopOptions struct {
	// MaxRounds bounds the model requests (default MaxRounds).
	MaxRounds int
	// ReplyDiff applies a unified diff found in the model's final text (for
	// replies that answer with a diff instead of tool calls).
	ReplyDiff bool
	// DiffRetries is how many times a reply diff that does not apply is sent
	// back to the model for a corrected one (default 1, negative for none).
	DiffRetries int
}

// LoopResult reports how a loop ended.
type LoopResult struct {
	// Final is the model's last message (without tool calls).
	Final model.Message
	// Rounds is the number of model requests made; Calls the number of
	// tool calls run.
	Rounds, Calls int
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
// sent back to the model (DiffRetries times) and then returned as the
// error, a *patch.Refusal for the user. The caller takes x.Set().Changes()
// at the end and applies them whole.
func Loop(ctx context.Context, c Completer, req *model.Request, x *Executor, opts LoopOptions) (*LoopResult, error) {
	rounds := opts.MaxRounds
	if rounds <= 0 {
		rounds = MaxRounds
	}
	retries := opts.DiffRetries
	if retries == 0 {
		retries = 1
	}
	res := &LoopResult{}
	for res.Rounds < rounds {
		resp, err := c.Complete(ctx, req)
		res.Rounds++
		if err != nil {
			// The error goes to the user as it is: which round failed is
			// for the log (and res.Rounds), not an "round 1:" prefix.
			x.log.Debug("model call failed", "round", res.Rounds, "err", err)
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
			res.Final = msg
			if !opts.ReplyDiff || !hasDiff(msg.Content) {
				return res, nil
			}
			err := x.set.ApplyDiff(msg.Content)
			if err == nil {
				return res, nil
			}
			if retries <= 0 || res.Rounds >= rounds {
				return res, err
			}
			retries--
			x.log.Info("reply diff refused; asking the model once more", "err", err)
			req.Messages = append(req.Messages, model.UserMessage(patch.Feedback(err)))
			continue
		}
		for _, call := range pending {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			r := x.Call(call.Function.Name, call.Function.Arguments)
			res.Calls++
			x.log.Debug("tool call", "tool", call.Function.Name, "id", call.ID, "error", r.IsError)
			req.AppendToolResult(call.ID, r.Content)
		}
	}
	return res, fmt.Errorf("%w (%d rounds)", ErrTooManyRounds, rounds)
}

// hasDiff reports whether text seems to hold a unified diff.
func hasDiff(text string) bool {
	return strings.Contains(text, "\n@@") || strings.HasPrefix(text, "@@") ||
		strings.Contains(text, "--- ") && strings.Contains(text, "\n+++ ")
}
