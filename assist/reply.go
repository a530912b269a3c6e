package assist

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

// This file holds the engine's rules for one model call that the seed's API
// asks for: how much output fits the context window, when to tell the user
// the provider is slow to answer, what a cut-off or unknown finish means,
// (what to record when a reply carries no usage is provider.EstimateUsage).

// Output budget and the context window.
const (
	// windowMargin is the share of the prompt's estimate added as a safety
	// margin when fitting the output budget into the context window (the
	// estimate is bytes per token, corrected by the replies seen so far).
	windowMargin = 0.05
	// windowSlack is added to the margin, in tokens: message framing and
	// the tool definitions' rendering.
	windowSlack = 1024
	// minAnswerTokens is the least output budget worth sending: thinking
	// counts against it, so less leaves no room for an answer.
	minAnswerTokens = 1024
)

// fitWindow returns the output budget to send for a prompt estimated at
// promptTokens when want is configured: want, or less when prompt and
// budget together would pass the context window (seed: max_completion_tokens
// is "同时受剩余上下文限制", also bounded by the context left, in a
// 1,048,576-token window). note says what was lowered, for the user; err is
// set when the prompt leaves no useful room at all.
func fitWindow(promptTokens, want int) (budget int, note string, err error) {
	room := windowRoom(promptTokens)
	if want <= room {
		return want, "", nil
	}
	if room < minAnswerTokens {
		return 0, "", fmt.Errorf("the prompt (about %d tokens) leaves no room for an answer in the model's %d-token context window: select less code, or lower context.maxTokens", promptTokens, model.ContextWindow)
	}
	return room, fmt.Sprintf("maxCompletionTokens lowered from %d to %d: the prompt (about %d tokens) and the answer must fit the model's %d-token context window", want, room, promptTokens, model.ContextWindow), nil
}

// windowRoom is the output budget left in the context window by a prompt
// estimated at promptTokens, with a margin for the estimate's error.
func windowRoom(promptTokens int) int {
	return model.ContextWindow - promptTokens - int(windowMargin*float64(promptTokens)) - windowSlack
}

// retryTokensCap bounds the one retry of an edit cut off at its output
// budget: twice the budget, at most the provider's default output limit
// (the seed: "默认最大输出 131,072 tokens").
const retryTokensCap = 131072

// retryBudget returns the output budget of the one retry of an edit cut off
// at budget, within room (the context window's rest), or 0 when no larger
// budget is possible.
func retryBudget(budget, room int) int {
	next := min(2*budget, max(retryTokensCap, budget), room)
	if next <= budget {
		return 0
	}
	return next
}

// waitNotice is how long a call waits for the provider's first event
// before the user is told; waitNoticeEvery how often the line is renewed.
var (
	waitNotice      = 2 * time.Second
	waitNoticeEvery = 5 * time.Second
)

// waiter tells the user, through sink.Status, that a call is waiting for the
// provider to start answering: after waitNotice, then every
// waitNoticeEvery, and at each retry the client makes. It is the only
// caller of the sink until stop returns, so sinks need not be safe for
// concurrent use.
type waiter struct {
	sink      Sink
	modelName string
	limit     time.Duration // waitTimeout, 0 if none
	start     time.Time
	nudge     chan struct{}
	quit      chan struct{}
	done      chan struct{}

	// mu guards retry, the last retry the client reported.
	mu    sync.Mutex
	retry *model.RetryInfo
}

func startWaiter(sink Sink, modelName string, limit time.Duration) *waiter {
	w := &waiter{sink: sink, modelName: modelName, limit: limit, start: time.Now(),
		nudge: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// trace is the model.Trace that reports the client's retries to w.
func (w *waiter) trace() *model.Trace {
	return &model.Trace{Retry: func(i model.RetryInfo) {
		w.mu.Lock()
		w.retry = &i
		w.mu.Unlock()
		select {
		case w.nudge <- struct{}{}:
		default:
		}
	}}
}

func (w *waiter) run() {
	defer close(w.done)
	t := time.NewTimer(waitNotice)
	defer t.Stop()
	for {
		select {
		case <-w.quit:
			return
		case <-t.C:
			t.Reset(waitNoticeEvery)
		case <-w.nudge:
		}
		w.sink.Status(w.line())
	}
}

// line is the status shown while waiting.
func (w *waiter) line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "waiting for %s to start answering (%ds", w.modelName, int(time.Since(w.start).Seconds()))
	if w.limit > 0 {
		fmt.Fprintf(&b, " of at most %v", w.limit)
	}
	b.WriteString(")")
	w.mu.Lock()
	r := w.retry
	w.mu.Unlock()
	switch {
	case r == nil:
	case r.Fallback:
		fmt.Fprintf(&b, "; %s, trying the fallback URL", model.Brief(r.Err))
	default:
		fmt.Fprintf(&b, "; %s, trying again (attempt %d of %d)", model.Brief(r.Err), r.Attempt+1, r.MaxAttempts)
	}
	return b.String()
}

// stop ends the notices and returns once no more will be sent.
func (w *waiter) stop() {
	select {
	case <-w.quit:
	default:
		close(w.quit)
	}
	<-w.done
}

// messagesText is the text of msgs a request adds to its prompt, for the
// estimate of a follow-up request's size.
func messagesText(msgs []model.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Role)
		b.WriteString(m.ReasoningContent)
		b.WriteString(m.Content)
		for _, c := range m.ToolCalls {
			b.WriteString(c.ID)
			b.WriteString(c.Function.Name)
			b.WriteString(c.Function.Arguments)
		}
	}
	return b.String()
}

// ttlName is a cache lifetime as prompt_cache_options.ttl spells it.
func ttlName(d time.Duration) string {
	if d == time.Hour {
		return "1h"
	}
	return "5m"
}
