package assist

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

// ConverseMaxRounds bounds the model requests of one turn of a
// conversation: an agent reads and searches before it edits, so a turn
// takes more rounds than an action's tools.MaxRounds.
const ConverseMaxRounds = 24

// Turn is one turn of a multi-turn conversation (the agent surface,
// assist/agent): the conversation so far, its new user message last, and
// how the turn's tool calls run.
type Turn struct {
	// Surface names the turn's requests in the record and the budgets
	// (spend.SurfaceAgent).
	Surface string
	// Model answers; Effort and MaxCompletionTokens as an action's.
	Model               string
	Effort              config.Effort
	MaxCompletionTokens int
	// Messages is the whole conversation: its byte-stable prefix (system
	// message, pinned context), the earlier turns as they were sent
	// (reasoning_content and tool calls included), then the new user
	// message.
	Messages []model.Message
	// Tools are the conversation's tool definitions: the same bytes every
	// turn, since they open every request.
	Tools []model.Tool
	// Files reads and confines the files the edit tools touch.
	Files patch.Files
	// Call wraps each tool call (tools.LoopOptions.Call): the surface shows
	// it, runs its own tools, refuses what its mode does not allow.
	Call func(ctx context.Context, call model.ToolCall, run func() tools.Result) tools.Result
	// Reads lists the files whose text the conversation's own tools and
	// earlier turns carried, for the request record.
	Reads func() []tools.FileRead
	// CachedTokens is how many prompt tokens the provider should serve
	// from its cache: the previous request's prompt tokens (0 for the
	// first).
	CachedTokens int
}

// TurnResult is what a turn produced.
type TurnResult struct {
	// Messages is the conversation after the turn: the assistant's
	// messages and the tool results appended as they were sent.
	Messages []model.Message
	// Text is the model's last answer, the API key struck.
	Text string
	// Changes are the checked file changes the turn's edit calls made,
	// pending: the surface lands them (or not).
	Changes []patch.FileChange
	// Verification is the helper's verdict on Changes (nil: not verified).
	Verification *Verification
	// Usage sums the turn's requests; CostUSD is their priced cost.
	Usage   cache.Usage
	CostUSD float64
	// Rounds counts the model requests; LastPromptTokens is the last
	// one's prompt tokens (the next turn's CachedTokens).
	Rounds           int
	LastPromptTokens int
	// Reads are the files whose text the edit tools' results carried.
	Reads []tools.FileRead
	// Redone lists the edit calls that failed and were redone.
	Redone []string
}

// Converse runs one turn of a conversation through the engine's units:
// the budgets' question, the stream slot, every request reserved, recorded
// (t.Surface) and settled in the ledger, the answer streamed to sink with
// the API key struck, the tool loop over one pending edit set, and the
// edit verified by the language's helper with one repair round
// (verify.onNewErrors). The edit is not applied: the result carries its
// changes. On an error (ctx cancelled included) the result holds the
// conversation as far as it went, for the surface to close it.
func (e *Engine) Converse(ctx context.Context, t Turn, sink Sink) (res *TurnResult, err error) {
	if err := e.setup(); err != nil {
		return nil, err
	}
	cfg, client := e.current()
	key, err := provider.Key(cfg)
	if err != nil {
		return nil, err
	}
	rs := newRedactingSink(sink, key)
	defer func() {
		if r := recover(); r != nil {
			res, err = nil, provider.Recovered(e.log, "a conversation turn", r, "surface", t.Surface)
		}
	}()
	defer rs.flush()
	prompt := &cache.Prompt{Model: t.Model, TTL: cfg.CacheTTLDuration(), PredictedCachedTokens: t.CachedTokens,
		EstimatedTokens: e.prompts.EstimateTokens(messagesText(t.Messages)) + e.prompts.EstimateTokens(toolsText(t.Tools))}
	prompt.PredictedCachedTokens = min(prompt.PredictedCachedTokens, prompt.EstimatedTokens)
	budget, note, err := fitWindow(prompt.EstimatedTokens, t.MaxCompletionTokens)
	if err != nil {
		return nil, err
	}
	if note != "" {
		rs.Status(note)
	}
	exp := e.ledger.ExpectedOutput(t.Surface, t.Model, budget)
	past, err := e.ledger.Ask(ctx, prompt.EstimatedTokens, provider.Estimate(cfg, t.Model, prompt, exp.Tokens), exp.Basis, e.confirmFor(ctx))
	if err != nil {
		return nil, err
	}
	effort, _ := config.EffortFor(t.Model, t.Effort)
	req := &model.Request{
		Model:               t.Model,
		Messages:            append([]model.Message(nil), t.Messages...),
		ReasoningEffort:     string(effort),
		MaxCompletionTokens: budget,
		Tools:               t.Tools,
		ToolChoice:          model.ToolChoiceAuto,
		PromptCache:         model.ImplicitCache(ttlName(prompt.TTL)),
	}
	set := patch.NewEditSet(t.Files, patch.Options{AllowBrokenGo: cfg.AllowInvalidGo})
	exec := tools.NewExecutor(set, e.log).RedactWith(rs.r)
	out := &Outcome{Model: t.Model}
	sc := &streamingCompleter{e: e, client: client, sink: rs, prompt: prompt, out: out, exec: exec,
		rec:       &provider.Call{Surface: t.Surface, Key: key},
		waitLimit: cmp.Or(cfg.WaitTimeout, model.DefaultWaitTimeout), room: windowRoom(prompt.EstimatedTokens),
		repairFrom: -1, cfg: cfg, past: past, edit: true, conversation: true, base: len(t.Messages), reads: t.Reads}
	defer sc.release()
	lopts := tools.LoopOptions{MaxRounds: ConverseMaxRounds, DiffRetries: 1}
	if t.Call != nil {
		// The surface's own tools answer too: no key in their results.
		lopts.Call = func(ctx context.Context, mc model.ToolCall, run func() tools.Result) tools.Result {
			r := t.Call(ctx, mc, run)
			r.Content = rs.r.Keys(r.Content)
			return r
		}
	}
	if e.verifying(cfg) {
		lopts.Verify = e.verifyHook(cfg, set, sc, rs, out)
		lopts.Repairs = 1
	}
	loop, err := tools.Loop(ctx, sc, req, exec, lopts)
	sc.release()
	res = &TurnResult{Messages: req.Messages, Usage: out.Usage, CostUSD: sc.costUSD, Rounds: sc.rounds,
		LastPromptTokens: sc.lastIn, Reads: exec.Reads(), Verification: out.Verification}
	if out.Verification != nil && err == nil && ctx.Err() == nil {
		e.verifyCounts.add(out.Verification)
	}
	if e.statsFile != "" && sc.rounds > 0 {
		e.saveStats()
	}
	if err != nil {
		return res, err
	}
	res.Text = rs.redact(loop.Final.Content)
	for _, f := range loop.Failed {
		if f.Resolved {
			res.Redone = append(res.Redone, rs.redact(f.String()))
		}
	}
	changes, err := set.Changes()
	if err != nil {
		return res, err
	}
	for _, c := range changes {
		if rs.holdsKey(c.After) && !rs.holdsKey(c.Before) {
			return res, fmt.Errorf("%w: the edit of %s writes your API key into the file", ErrKeyInEdit, c.Path)
		}
	}
	res.Changes = changes
	return res, nil
}

// toolsText is the text of tool definitions, for the estimate of a
// conversation's prompt.
func toolsText(defs []model.Tool) string {
	var b strings.Builder
	for _, d := range defs {
		if d.Function != nil {
			b.WriteString(d.Function.Name)
			b.WriteString(d.Function.Description)
			b.Write(d.Function.Parameters)
		}
	}
	return b.String()
}

// CloseTurn makes msgs, a conversation a turn left unfinished (cancelled,
// failed), one the provider accepts as the start of the next request:
// every tool call still pending is answered with note, and a user message
// left without an answer gets an assistant message saying note. The
// messages before stay byte for byte, so the next turn's prefix is cached.
func CloseTurn(msgs []model.Message, note string) []model.Message {
	r := model.Request{Messages: append([]model.Message(nil), msgs...)}
	for _, c := range r.PendingToolCalls() {
		r.AppendToolResult(c.ID, note)
	}
	if n := len(r.Messages); n > 0 && r.Messages[n-1].Role != model.RoleAssistant {
		r.AppendAssistant(model.Message{Content: note})
	}
	return r.Messages
}
