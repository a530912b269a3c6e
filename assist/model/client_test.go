package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// newPair starts a stand-in with the given rules and a client for it.
func newPair(t *testing.T, opts model.Options, rules ...modeltest.Rule) (*modeltest.Server, *model.Client) {
	t.Helper()
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: rules}})
	t.Cleanup(srv.Close)
	opts.BaseURL = srv.URL
	if opts.APIKey == "" {
		opts.APIKey = srv.Key
	}
	return srv, model.New(opts)
}

func userReq(text string) *model.Request {
	return &model.Request{Model: model.ModelPro, Messages: []model.Message{model.UserMessage(text)}, ReasoningEffort: model.EffortLow, MaxCompletionTokens: 4096}
}

func waitCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestStreamDeliversEventsBeforeTheEnd: the first events reach the caller
// while the stand-in is still sending (its handler has not finished), and
// events are spread over time as the chunks are paced.
func TestStreamDeliversEventsBeforeTheEnd(t *testing.T) {
	srv, c := newPair(t, model.Options{}, modeltest.Rule{
		Match: "Explain", Reasoning: "Let me read the code first.", Content: "This function adds two numbers and returns the sum.",
		Chunks: 10, IntervalMS: 20,
	})
	s, err := c.Stream(context.Background(), userReq("Explain this"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var acc model.Accumulator
	var times []time.Time
	finishedAtFirstEvent := -1
	for ev, err := range s.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if finishedAtFirstEvent < 0 {
			finishedAtFirstEvent = len(srv.Requests())
		}
		if ev.Kind == model.EventContent || ev.Kind == model.EventReasoning {
			times = append(times, time.Now())
		}
		acc.Add(ev)
	}
	if finishedAtFirstEvent != 0 {
		t.Errorf("the first event arrived after the stand-in finished the reply (%d requests done)", finishedAtFirstEvent)
	}
	if got := acc.Message().Content; got != "This function adds two numbers and returns the sum." {
		t.Errorf("content = %q", got)
	}
	if len(times) != 20 {
		t.Fatalf("%d text events, want 20 (10 chunks each)", len(times))
	}
	spread := times[len(times)-1].Sub(times[0])
	t.Logf("20 text events over %v (chunks paced 20ms apart)", spread)
	if spread <= 0 {
		t.Errorf("events were not spread over time")
	}
	u := acc.Usage()
	if u == nil || u.PromptTokens == 0 || u.ReasoningTokens == 0 || u.CompletionTokens <= u.ReasoningTokens {
		t.Errorf("usage = %+v", u)
	}
}

// TestStreamToolCallsAndMultiTurn: tool calls streamed in many pieces are
// assembled; the assistant message goes back whole with one tool message per
// call; the stand-in (which checks reasoning_content and pending calls)
// accepts the next turn.
func TestStreamToolCallsAndMultiTurn(t *testing.T) {
	args := `{"path":"calc/add.go","diff":"--- a/calc/add.go\n+++ b/calc/add.go\n@@ -1 +1 @@\n-return a - b\n+return a + b\n"}`
	srv, c := newPair(t, model.Options{},
		modeltest.Rule{LastRole: "tool", Reasoning: "Both applied.", Content: "Fixed."},
		modeltest.Rule{Match: "Fix", Reasoning: "The sign is wrong; read then patch.", Chunks: 25, ToolCalls: []modeltest.ScriptToolCall{
			{ID: "call_read", Name: "read_file", Arguments: `{"path":"calc/add.go"}`},
			{ID: "call_patch", Name: "apply_diff", Arguments: args},
		}},
	)
	req := userReq("Fix the bug")
	req.Tools = []model.Tool{
		model.FunctionTool("read_file", "Read a file", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)),
		model.FunctionTool("apply_diff", "Apply a unified diff", json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"diff":{"type":"string"}}}`)),
	}
	req.ToolChoice = model.ToolChoiceAuto
	s, err := c.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var deltas int
	var acc model.Accumulator
	for ev, err := range s.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == model.EventToolCallDelta {
			deltas++
		}
		acc.Add(ev)
	}
	s.Close()
	msg := acc.Message()
	if acc.FinishReason() != model.FinishToolCalls || len(msg.ToolCalls) != 2 {
		t.Fatalf("finish %q, calls %+v", acc.FinishReason(), msg.ToolCalls)
	}
	if deltas < 25 {
		t.Errorf("%d tool-call pieces, want at least 25", deltas)
	}
	if got := msg.ToolCalls[1]; got.ID != "call_patch" || got.Type != "function" || got.Function.Name != "apply_diff" || got.Function.Arguments != args {
		t.Errorf("call 1 = %+v", got)
	}

	req.AppendAssistant(msg)
	if p := req.PendingToolCalls(); len(p) != 2 {
		t.Fatalf("pending = %+v", p)
	}
	req.AppendToolResult("call_read", "package calc\nfunc Add(a, b int) int { return a - b }\n")
	req.AppendToolResult("call_patch", "applied")
	if p := req.PendingToolCalls(); len(p) != 0 {
		t.Fatalf("pending after answers = %+v", p)
	}
	resp, err := c.Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Fixed." {
		t.Errorf("second turn = %+v", resp.Message)
	}
	reqs := srv.Requests()
	var second struct {
		Messages []map[string]any `json:"messages"`
	}
	json.Unmarshal(reqs[1].Body, &second)
	asst := second.Messages[1]
	if asst["role"] != "assistant" || asst["reasoning_content"] != "The sign is wrong; read then patch." || asst["content"] != nil {
		t.Errorf("assistant message sent back = %v", asst)
	}
	if second.Messages[2]["tool_call_id"] != "call_read" || second.Messages[3]["tool_call_id"] != "call_patch" {
		t.Errorf("tool messages = %v", second.Messages[2:])
	}
	// The second prompt extends the first, so the simulated cache serves
	// part of it.
	if reqs[1].Usage.CachedTokens == 0 || resp.Usage.CachedTokens != reqs[1].Usage.CachedTokens {
		t.Errorf("second turn cached %d (client saw %+v)", reqs[1].Usage.CachedTokens, resp.Usage)
	}

	// Dropping reasoning_content, or a tool answer, is rejected by the
	// provider with a message that says so.
	bad := *req
	bad.Messages = append([]model.Message(nil), req.Messages...)
	bad.Messages[1].ReasoningContent = ""
	_, err = c.Complete(context.Background(), &bad)
	if !errors.Is(err, model.ErrBadRequest) || !strings.Contains(err.Error(), "reasoning_content") {
		t.Errorf("without reasoning_content: %v", err)
	}
	bad.Messages = append([]model.Message(nil), req.Messages[:3]...)
	bad.Messages = append(bad.Messages, model.UserMessage("go on"))
	_, err = c.Complete(context.Background(), &bad)
	if !errors.Is(err, model.ErrBadRequest) || !strings.Contains(err.Error(), "call_patch") {
		t.Errorf("with an unanswered call: %v", err)
	}
}

func TestStreamFaults(t *testing.T) {
	tests := []struct {
		name string
		rule modeltest.Rule
		want error
	}{
		{"cut mid-frame", modeltest.Rule{Content: "abcdefgh", Chunks: 8, Fault: "cut", FaultAfter: 4}, model.ErrTruncated},
		{"connection reset mid-frame", modeltest.Rule{Content: "abcdefgh", Chunks: 8, Fault: "reset", FaultAfter: 4}, nil},
		{"clean end without finish or [DONE]", modeltest.Rule{Content: "abcdefgh", Chunks: 8, Fault: "no_done", FaultAfter: 4}, model.ErrTruncated},
		{"length with no text", modeltest.Rule{Reasoning: "thinking and thinking", FinishReason: "length"}, model.ErrNoAnswer},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, c := newPair(t, model.Options{}, tc.rule)
			s, err := c.Stream(context.Background(), userReq("go"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := model.Collect(s)
			if err == nil {
				t.Fatalf("no error; reply %+v", resp.Message)
			}
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("error %v, want %v", err, tc.want)
			}
			if tc.want == model.ErrNoAnswer {
				if resp.Usage == nil || resp.Usage.ReasoningTokens == 0 || resp.FinishReason != model.FinishLength {
					t.Errorf("length reply: usage %+v finish %q", resp.Usage, resp.FinishReason)
				}
				if !strings.Contains(err.Error(), "maxCompletionTokens") {
					t.Errorf("error does not say what to change: %v", err)
				}
			} else if strings.Contains(resp.Message.Content, "efgh") {
				t.Errorf("content %q after a fault at chunk 4", resp.Message.Content)
			}
		})
	}
}

// TestCompleteLengthNoAnswer: the non-streaming path reports it too.
func TestCompleteLengthNoAnswer(t *testing.T) {
	_, c := newPair(t, model.Options{}, modeltest.Rule{Reasoning: "all budget", FinishReason: "length"})
	resp, err := c.Complete(context.Background(), userReq("go"))
	if !errors.Is(err, model.ErrNoAnswer) || resp == nil || resp.Usage == nil {
		t.Errorf("got %+v, %v", resp, err)
	}
}

// TestCancelHangsUp: cancelling the context returns from a blocked Next
// (the stand-in stalls forever, so only the cancel can end it), and the
// stand-in sees the client go. How fast is not asserted: under load a
// wall-clock bound is a coin toss; the 5 s bound only catches a hang.
func TestCancelHangsUp(t *testing.T) {
	srv, c := newPair(t, model.Options{}, modeltest.Rule{Content: "one two three four five", Chunks: 5, Fault: "stall", FaultAfter: 3})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := c.Stream(ctx, userReq("go"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 2; i++ { // the role chunk gives no event; then 2 content chunks
		if _, err := s.Next(); err != nil {
			t.Fatal(err)
		}
	}
	type result struct {
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		_, err := s.Next() // blocks: the stand-in stalls
		done <- result{err, time.Now()}
	}()
	time.Sleep(50 * time.Millisecond) // let Next block on the network
	start := time.Now()
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Next did not return within 5s of cancel")
	}
	t.Logf("Next returned %v after cancel", r.at.Sub(start))
	if !errors.Is(r.err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", r.err)
	}
	reqs, err := srv.WaitRequests(waitCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reqs[0].HungUp {
		t.Errorf("the stand-in did not see the hang-up: %+v", reqs[0])
	}
}

// TestCloseHangsUp: closing a stream without cancelling also hangs up.
func TestCloseHangsUp(t *testing.T) {
	srv, c := newPair(t, model.Options{}, modeltest.Rule{Content: "a b c d", Chunks: 4, Fault: "stall", FaultAfter: 2})
	s, err := c.Stream(context.Background(), userReq("go"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	reqs, err := srv.WaitRequests(waitCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	if !reqs[0].HungUp {
		t.Errorf("no hang-up seen: %+v", reqs[0])
	}
	if _, err := s.Next(); err == nil {
		t.Error("Next after Close returned no error")
	}
}

// TestTimeouts: first byte and silence between chunks are bounded; a long
// stream whose chunks keep coming is not (no total timeout); time the
// caller spends between reads does not count as silence.
func TestTimeouts(t *testing.T) {
	t.Run("first byte", func(t *testing.T) {
		t.Parallel()
		srv, c := newPair(t, model.Options{FirstByteTimeout: 150 * time.Millisecond, MaxAttempts: 1}, modeltest.Rule{DelayMS: 3000})
		_, err := c.Stream(context.Background(), userReq("go"))
		if !errors.Is(err, model.ErrTimeout) || !strings.Contains(err.Error(), "first-byte") {
			t.Errorf("got %v", err)
		}
		reqs, _ := srv.WaitRequests(waitCtx(t), 1)
		if !reqs[0].HungUp {
			t.Errorf("stand-in did not see the hang-up")
		}
	})
	t.Run("silence between chunks", func(t *testing.T) {
		t.Parallel()
		_, c := newPair(t, model.Options{ChunkTimeout: 150 * time.Millisecond}, modeltest.Rule{Content: "a b c", Chunks: 3, Fault: "stall", FaultAfter: 2})
		s, err := c.Stream(context.Background(), userReq("go"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = model.Collect(s)
		if !errors.Is(err, model.ErrTimeout) || !strings.Contains(err.Error(), "chunk timeout") {
			t.Errorf("got %v", err)
		}
	})
	t.Run("no total timeout", func(t *testing.T) {
		// 16 chunks 150ms apart: 2.4s in all, longer than either timeout,
		// with each gap a tenth of them (so that load cannot make a gap
		// look like silence). TestWatchdogFakeClock checks the same rule
		// on a fake clock.
		t.Parallel()
		_, c := newPair(t, model.Options{ChunkTimeout: 1500 * time.Millisecond, FirstByteTimeout: 1500 * time.Millisecond, WaitTimeout: -1},
			modeltest.Rule{Reasoning: strings.Repeat("think ", 8), Content: strings.Repeat("word ", 8), Chunks: 8, IntervalMS: 150})
		s, err := c.Stream(context.Background(), userReq("go"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := model.Collect(s); err != nil {
			t.Errorf("long stream: %v", err)
		}
	})
	t.Run("slow reader is not silence", func(t *testing.T) {
		t.Parallel()
		_, c := newPair(t, model.Options{ChunkTimeout: 500 * time.Millisecond}, modeltest.Rule{Content: "a b", Chunks: 2})
		s, err := c.Stream(context.Background(), userReq("go"))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for {
			_, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("slow reader: %v", err)
			}
			time.Sleep(700 * time.Millisecond)
		}
	})
}

// TestWaitTimeoutBoundsTheWholeWait: an endpoint that never answers is
// given up on once WaitTimeout has passed, however many attempts are left
// (issue 15 item 6: 3 × 120 s of silence was six minutes), with one
// sentence naming the setting; the Trace hears of each retry.
func TestWaitTimeoutBoundsTheWholeWait(t *testing.T) {
	srv, c := newPair(t, model.Options{FirstByteTimeout: 400 * time.Millisecond, WaitTimeout: 2 * time.Second, MaxAttempts: 10, RetryBaseDelay: 10 * time.Millisecond},
		modeltest.Rule{DelayMS: 60_000}) // no status line, no headers: nothing at all
	var mu sync.Mutex
	var retries []model.RetryInfo
	ctx := model.WithTrace(context.Background(), &model.Trace{Retry: func(i model.RetryInfo) {
		mu.Lock()
		defer mu.Unlock()
		retries = append(retries, i)
	}})
	_, err := c.Stream(ctx, userReq("go"))
	if !errors.Is(err, model.ErrTimeout) || !strings.Contains(err.Error(), "waitTimeout") || !strings.Contains(err.Error(), "did not start answering within 2s") {
		t.Errorf("got %v", err)
	}
	reqs, _ := srv.WaitRequests(waitCtx(t), 1)
	if len(reqs) >= 10 {
		t.Errorf("%d attempts: every attempt was made, the total wait is not bounded", len(reqs))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(retries) == 0 || retries[0].Attempt != 1 || retries[0].MaxAttempts != 10 || !errors.Is(retries[0].Err, model.ErrTimeout) {
		t.Errorf("trace: %+v", retries)
	}
}

// TestRetryAfter429: a 429 with Retry-After: 1 is retried no sooner than a
// second later, and the reply then arrives.
func TestRetryAfter429(t *testing.T) {
	srv, c := newPair(t, model.Options{},
		modeltest.Rule{Fault: "429", RetryAfter: "1", Times: 1, Message: "Rate limit reached"},
		modeltest.Rule{Content: "after the wait"})
	resp, err := c.Complete(context.Background(), userReq("go"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "after the wait" {
		t.Errorf("content %q", resp.Message.Content)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Status != 429 || reqs[1].Status != 200 {
		t.Fatalf("requests: %d", len(reqs))
	}
	if gap := reqs[1].Time.Sub(reqs[0].Time); gap < time.Second {
		t.Errorf("retried after %v, before the Retry-After of 1s", gap)
	}
}

// TestRetryBounded: persistent 429s end after MaxAttempts with a clear
// error; a Retry-After beyond the total wait budget ends at once.
func TestRetryBounded(t *testing.T) {
	srv, c := newPair(t, model.Options{MaxAttempts: 3, RetryBaseDelay: 5 * time.Millisecond},
		modeltest.Rule{Fault: "429", Message: "quota exceeded"})
	_, err := c.Complete(context.Background(), userReq("go"))
	if !errors.Is(err, model.ErrRateLimited) || !strings.Contains(err.Error(), "quota exceeded") || !strings.Contains(err.Error(), "3 attempts") {
		t.Errorf("got %v", err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}

	srv, c = newPair(t, model.Options{MaxAttempts: 5, MaxRetryWait: 2 * time.Second},
		modeltest.Rule{Fault: "429", RetryAfter: "30"})
	start := time.Now()
	_, err = c.Complete(context.Background(), userReq("go"))
	var apiErr *model.APIError
	if !errors.As(err, &apiErr) || apiErr.RetryAfter != 30*time.Second || !strings.Contains(err.Error(), "retry after 30s") {
		t.Errorf("got %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests, want 1 (the wait asked exceeds the budget)", n)
	}
	t.Logf("gave up after %v", time.Since(start))
}

// TestRetryCancelDuringBackoff: cancelling while waiting to retry returns.
func TestRetryCancelDuringBackoff(t *testing.T) {
	_, c := newPair(t, model.Options{}, modeltest.Rule{Fault: "429", RetryAfter: "20"})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.Complete(ctx, userReq("go"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v", err)
	}
}

// TestFallbackAfter5xx: 5xx on the base URL is retried a bounded number of
// times, then the fallback URL answers.
func TestFallbackAfter5xx(t *testing.T) {
	for _, fault := range []string{"500", "503", "hangup"} {
		t.Run(fault, func(t *testing.T) {
			primary := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Fault: fault}}})
			defer primary.Close()
			fallback := modeltest.NewServer(modeltest.Config{Key: primary.Key, Script: &modeltest.Script{Default: &modeltest.Rule{Content: "from the fallback"}}})
			defer fallback.Close()
			var logs strings.Builder
			c := model.New(model.Options{BaseURL: primary.URL, FallbackURL: fallback.URL + "/v1", APIKey: primary.Key,
				MaxAttempts: 2, RetryBaseDelay: 5 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			s, err := c.Stream(context.Background(), userReq("go"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := model.Collect(s)
			if err != nil || resp.Message.Content != "from the fallback" {
				t.Fatalf("got %+v, %v", resp, err)
			}
			if n := len(primary.Requests()); n != 2 {
				t.Errorf("primary saw %d requests, want 2", n)
			}
			if n := len(fallback.Requests()); n != 1 {
				t.Errorf("fallback saw %d requests, want 1", n)
			}
			if !strings.Contains(logs.String(), "fallback") || strings.Contains(logs.String(), primary.Key) {
				t.Errorf("logs: %s", logs.String())
			}
		})
	}
	// Connection refused on the base URL: straight on to the fallback
	// after the bounded retries.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	fb := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Content: "alive"}}})
	defer fb.Close()
	c := model.New(model.Options{BaseURL: dead, FallbackURL: fb.URL, APIKey: fb.Key, MaxAttempts: 2, RetryBaseDelay: time.Millisecond})
	if resp, err := c.Complete(context.Background(), userReq("go")); err != nil || resp.Message.Content != "alive" {
		t.Errorf("refused base: %+v, %v", resp, err)
	}
	c = model.New(model.Options{BaseURL: dead, FallbackURL: "none", APIKey: fb.Key, MaxAttempts: 2, RetryBaseDelay: time.Millisecond})
	if _, err := c.Complete(context.Background(), userReq("go")); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Errorf("refused without fallback: %v", err)
	}

	// Both failing: the last error, naming the fallback.
	primary := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{Fault: "500", Message: "primary down"}}})
	defer primary.Close()
	fallback := modeltest.NewServer(modeltest.Config{Key: primary.Key, Script: &modeltest.Script{Default: &modeltest.Rule{Fault: "502", Message: "fallback down"}}})
	defer fallback.Close()
	c = model.New(model.Options{BaseURL: primary.URL, FallbackURL: fallback.URL, APIKey: primary.Key, MaxAttempts: 2, RetryBaseDelay: time.Millisecond})
	_, err = c.Complete(context.Background(), userReq("go"))
	if !errors.Is(err, model.ErrServer) || !strings.Contains(err.Error(), "fallback down") {
		t.Errorf("got %v", err)
	}
}

// TestErrorsNameTheKeyVariableNeverTheKey: 401 names KIMI_API_KEY; 400
// shows the provider's message; no error text carries the key, even when
// the provider echoes it.
func TestErrorsNameTheKeyVariableNeverTheKey(t *testing.T) {
	const secret = "sk-very-secret-key-42"
	srv := modeltest.NewServer(modeltest.Config{})
	defer srv.Close()
	c := model.New(model.Options{BaseURL: srv.URL, APIKey: secret})
	_, err := c.Complete(context.Background(), userReq("go"))
	if !errors.Is(err, model.ErrUnauthorized) || !strings.Contains(err.Error(), "KIMI_API_KEY") || strings.Contains(err.Error(), secret) {
		t.Errorf("401: %v", err)
	}
	c = model.New(model.Options{BaseURL: srv.URL})
	_, err = c.Complete(context.Background(), userReq("go"))
	// One reason per message: no key, not also "the provider refused the
	// API key" (issue 15 item 4).
	if !strings.Contains(err.Error(), "no API key is configured") || !strings.Contains(err.Error(), "KIMI_API_KEY") ||
		strings.Contains(err.Error(), "refused") || !errors.Is(err, model.ErrUnauthorized) {
		t.Errorf("401 without key: %v", err)
	}

	srv2 := modeltest.NewServer(modeltest.Config{Key: secret, Script: &modeltest.Script{Default: &modeltest.Rule{
		Fault: "400", Message: "Invalid API key provided: " + secret + " is not allowed here"}}})
	defer srv2.Close()
	c = model.New(model.Options{BaseURL: srv2.URL, APIKey: secret})
	_, err = c.Complete(context.Background(), userReq("go"))
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "Invalid API key provided: [REDACTED]") {
		t.Errorf("400 echoing the key: %v", err)
	}
	// The provider's own validation message reaches the caller.
	req := userReq("go")
	req.Model = "kimi-k9"
	_, err = c.Complete(context.Background(), req)
	if !errors.Is(err, model.ErrBadRequest) || !strings.Contains(err.Error(), `model "kimi-k9" is not supported`) {
		t.Errorf("400: %v", err)
	}
	// A key with a control character is refused before anything is sent.
	c = model.New(model.Options{BaseURL: srv2.URL, APIKey: secret + "\n"})
	_, err = c.Complete(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "KIMI_API_KEY") || strings.Contains(err.Error(), secret) {
		t.Errorf("bad key: %v", err)
	}
}

// TestOptionalFieldsLeftOut: what is not configured is not sent (the
// stand-in rejects fields the seed does not define, as strict local servers
// do), and baseURL works with or without /v1.
func TestOptionalFieldsLeftOut(t *testing.T) {
	srv := modeltest.NewServer(modeltest.Config{})
	defer srv.Close()
	for _, base := range []string{srv.URL, srv.URL + "/", srv.URL + "/v1", srv.URL + "/v1/", srv.URL + "/v1/chat/completions"} {
		c := model.New(model.Options{BaseURL: base, APIKey: srv.Key})
		req := &model.Request{Model: model.ModelPro, Messages: []model.Message{model.UserMessage("hi")}}
		if _, err := c.Complete(context.Background(), req); err != nil {
			t.Errorf("base %q: %v", base, err)
		}
	}
	reqs := srv.Requests()
	for _, r := range reqs {
		if string(r.Body) != `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}]}` || r.Path != "/v1/chat/completions" {
			t.Errorf("sent %s to %s", r.Body, r.Path)
		}
	}
	// OpenAI's stream_options goes out only when asked for; the Kimi
	// stand-in then needs AllowUnknownFields, as OpenAI itself would.
	c := model.New(model.Options{BaseURL: srv.URL, APIKey: srv.Key})
	req := userReq("hi")
	req.StreamOptions = &model.StreamOptions{IncludeUsage: true}
	s, err := c.Stream(context.Background(), req)
	if !errors.Is(err, model.ErrBadRequest) || !strings.Contains(err.Error(), "stream_options") {
		t.Errorf("stream_options to a strict server: %v", err)
	}
	if err == nil {
		s.Close()
	}
	lenient := modeltest.NewServer(modeltest.Config{AllowUnknownFields: true})
	defer lenient.Close()
	c = model.New(model.Options{BaseURL: lenient.URL, APIKey: lenient.Key})
	if s, err = c.Stream(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	model.Collect(s)
	if b := lenient.Requests()[0].Body; !strings.Contains(string(b), `"stream":true,"stream_options":{"include_usage":true}`) {
		t.Errorf("sent %s", b)
	}
}

// TestKeepAlive: sequential requests reuse one connection, streamed or not.
func TestKeepAlive(t *testing.T) {
	srv, c := newPair(t, model.Options{}, modeltest.Rule{Content: "hello there", Chunks: 3})
	for i := 0; i < 4; i++ {
		if i%2 == 0 {
			s, err := c.Stream(context.Background(), userReq("go"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := model.Collect(s); err != nil {
				t.Fatal(err)
			}
		} else if _, err := c.Complete(context.Background(), userReq("go")); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.Connections(); n != 1 {
		t.Errorf("4 requests used %d connections, want 1", n)
	}
}

// TestConcurrentStreams: one client serves several streams at once.
func TestConcurrentStreams(t *testing.T) {
	srv, c := newPair(t, model.Options{}, modeltest.Rule{Content: "concurrent reply text", Chunks: 6, IntervalMS: 2})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := c.Stream(context.Background(), userReq("go"))
			if err != nil {
				errs <- err
				return
			}
			resp, err := model.Collect(s)
			if err == nil && resp.Message.Content != "concurrent reply text" {
				err = errors.New("wrong content " + resp.Message.Content)
			}
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := len(srv.Requests()); n != 8 {
		t.Errorf("%d requests", n)
	}
}

// TestPromptCacheThroughClient: a repeated long prefix is reported cached
// through the client's Usage; the 1h TTL outlives the 5m one.
func TestPromptCacheThroughClient(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	srv := modeltest.NewServer(modeltest.Config{Now: clock, Cache: modeltest.CacheConfig{BlockTokens: 16}})
	defer srv.Close()
	c := model.New(model.Options{BaseURL: srv.URL, APIKey: srv.Key})
	system := model.SystemMessage(strings.Repeat("You are a careful Go reviewer. ", 40))
	ask := func(q, ttl string) model.Usage {
		req := &model.Request{Model: model.ModelPro, Messages: []model.Message{system, model.UserMessage(q)}}
		if ttl != "" {
			req.PromptCache = model.ImplicitCache(ttl)
		}
		resp, err := c.Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return *resp.Usage
	}
	first := ask("What does f do?", "")
	if first.CachedTokens != 0 || first.CacheWriteTokens == 0 {
		t.Errorf("first: %+v", first)
	}
	second := ask("And g?", "")
	if second.CachedTokens == 0 || second.CachedTokens < first.PromptTokens/2 {
		t.Errorf("second: %+v (first %+v)", second, first)
	}
	advance(10 * time.Minute)
	if u := ask("And h?", "1h"); u.CachedTokens != 0 {
		t.Errorf("after 10 minutes the 5m entries should be gone: %+v", u)
	}
	advance(30 * time.Minute)
	if u := ask("And i?", "1h"); u.CachedTokens == 0 {
		t.Errorf("the 1h entries should survive 30 minutes: %+v", u)
	}
}

// TestRealStreamShapes: the client reads what real streams send, as the
// stand-in now sends it (issue 13 item 10): null content, calls announced
// together with interleaved arguments, content in the finish chunk, a
// $web_search call without type, finish reasons to check, and no usage
// from a server that sends it only when asked.
func TestRealStreamShapes(t *testing.T) {
	srv := modeltest.NewServer(modeltest.Config{UsageWhenAsked: true})
	t.Cleanup(srv.Close)
	c := model.New(model.Options{BaseURL: srv.URL, APIKey: srv.Key})
	collect := func(rule modeltest.Rule) *model.Response {
		t.Helper()
		srv.Push(rule)
		s, err := c.Stream(context.Background(), userReq("go"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := model.Collect(s)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := collect(modeltest.Rule{Reasoning: "think", Content: "the whole answer", Chunks: 3, NullContent: true, ContentInFinish: true})
	if resp.Message.Content != "the whole answer" || resp.Message.ReasoningContent != "think" || resp.FinishReason != model.FinishStop {
		t.Errorf("null content / content in finish: %+v", resp)
	}
	if resp.Usage != nil {
		t.Errorf("usage %+v from a server that sends it only when asked", resp.Usage)
	}
	resp = collect(modeltest.Rule{Reasoning: "r", Chunks: 3, Interleave: true, NullContent: true, ToolCalls: []modeltest.ScriptToolCall{
		{ID: "a", Name: "read_file", Arguments: `{"path":"main.go"}`},
		{ID: "b", Name: "$web_search", Arguments: `{"query":"kimi"}`, OmitType: true},
		{ID: "c", Name: "replace_text", Arguments: `{"path":"x","old":"1","new":"2"}`},
	}})
	want := []model.ToolCall{
		{ID: "a", Type: "function", Function: model.FunctionCall{Name: "read_file", Arguments: `{"path":"main.go"}`}},
		{ID: "b", Type: "builtin_function", Function: model.FunctionCall{Name: "$web_search", Arguments: `{"query":"kimi"}`}},
		{ID: "c", Type: "function", Function: model.FunctionCall{Name: "replace_text", Arguments: `{"path":"x","old":"1","new":"2"}`}},
	}
	if fmt.Sprint(resp.Message.ToolCalls) != fmt.Sprint(want) {
		t.Errorf("interleaved calls:\n got %+v\nwant %+v", resp.Message.ToolCalls, want)
	}
	resp = collect(modeltest.Rule{Content: "Half an ans", FinishReason: "length"})
	if err := model.CheckFinish(resp.FinishReason, 4096); !errors.Is(err, model.ErrCutOff) || resp.Message.Content != "Half an ans" {
		t.Errorf("length with text: %q, %v", resp.Message.Content, err)
	}
	resp = collect(modeltest.Rule{Content: "Some", FinishReason: "content_filter"})
	if err := model.CheckFinish(resp.FinishReason, 4096); !errors.Is(err, model.ErrFinishReason) {
		t.Errorf("content_filter: %v", err)
	}
}
