package model_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

// sse joins chunk JSON texts into an SSE body ending with [DONE].
func sse(chunks ...string) string {
	var b strings.Builder
	for _, c := range chunks {
		b.WriteString("data: " + c + "\n\n")
	}
	return b.String()
}

func delta(d string) string {
	return `{"id":"c1","model":"kimi-k3.1-pro","created":5,"choices":[{"index":0,"delta":` + d + `,"finish_reason":null}]}`
}

func finish(reason, usage string) string {
	u := ""
	if usage != "" {
		u = `,"usage":` + usage
	}
	return `{"id":"c1","choices":[{"index":0,"delta":{},"finish_reason":"` + reason + `"}]` + u + `}`
}

const usageJSON = `{"prompt_tokens":100,"completion_tokens":30,"total_tokens":130,"prompt_tokens_details":{"cached_tokens":64,"cache_write_tokens":32},"completion_tokens_details":{"reasoning_tokens":20}}`

var wantUsage = model.Usage{PromptTokens: 100, CompletionTokens: 30, TotalTokens: 130, CachedTokens: 64, CacheWriteTokens: 32, ReasoningTokens: 20}

func streamOf(body string) *model.Stream {
	return model.NewStreamReader(io.NopCloser(iotest.OneByteReader(strings.NewReader(body))), false)
}

// kinds lists the kinds of all events and the final error.
func kinds(s *model.Stream) (string, error) {
	var out []string
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return strings.Join(out, " "), nil
		}
		if err != nil {
			return strings.Join(out, " "), err
		}
		out = append(out, ev.Kind.String())
	}
}

func TestStreamEvents(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		kinds     string
		err       error
		content   string
		reasoning string
		finish    model.FinishReason
		usage     *model.Usage
	}{
		{
			name: "usage in the finish chunk",
			body: sse(delta(`{"role":"assistant","content":""}`), delta(`{"reasoning_content":"think"}`),
				delta(`{"content":"Hel"}`), delta(`{"content":"lo"}`), finish("stop", usageJSON), "[DONE]"),
			kinds: "reasoning content content usage done", content: "Hello", reasoning: "think",
			finish: model.FinishStop, usage: &wantUsage,
		},
		{
			name:  "usage-only chunk after finish (OpenAI include_usage)",
			body:  sse(delta(`{"content":"x"}`), finish("stop", ""), `{"id":"c1","choices":[],"usage":`+usageJSON+`}`, "[DONE]"),
			kinds: "content usage done", content: "x", finish: model.FinishStop, usage: &wantUsage,
		},
		{
			name:  "usage inside the choice (Moonshot)",
			body:  sse(delta(`{"content":"x"}`), `{"choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12,"cached_tokens":8}}]}`, "[DONE]"),
			kinds: "content usage done", content: "x", finish: model.FinishStop,
			usage: &model.Usage{PromptTokens: 10, CompletionTokens: 2, TotalTokens: 12, CachedTokens: 8},
		},
		{
			name:  "no usage at all",
			body:  sse(delta(`{"content":"x"}`), finish("stop", ""), "[DONE]"),
			kinds: "content done", content: "x", finish: model.FinishStop,
		},
		{
			name:  "reasoning spelled reasoning (vLLM, Ollama)",
			body:  sse(delta(`{"reasoning":"hmm"}`), delta(`{"content":"x"}`), finish("stop", ""), "[DONE]"),
			kinds: "reasoning content done", content: "x", reasoning: "hmm", finish: model.FinishStop,
		},
		{
			name:  "empty choices and keep-alives",
			body:  ": keep-alive\n\n" + sse(`{"choices":[]}`, delta(`{"content":"x"}`)) + ": ping\n\n" + sse(finish("stop", ""), "[DONE]"),
			kinds: "content done", content: "x", finish: model.FinishStop,
		},
		{
			name:  "finish reason but no [DONE] is complete",
			body:  sse(delta(`{"content":"x"}`), finish("stop", "")),
			kinds: "content done", content: "x", finish: model.FinishStop,
		},
		{
			name:  "neither [DONE] nor finish reason is truncated",
			body:  sse(delta(`{"content":"x"}`), delta(`{"content":"y"}`)),
			kinds: "content content", err: model.ErrTruncated, content: "xy",
		},
		{
			name:  "torn frame",
			body:  sse(delta(`{"content":"x"}`)) + `data: {"choices":[{"index":0,"del`,
			kinds: "content", err: model.ErrTruncated, content: "x",
		},
		{
			name:  "torn frame after finish is still an error",
			body:  sse(delta(`{"content":"x"}`), finish("stop", "")) + `data: {"id"`,
			kinds: "content", err: model.ErrTruncated, content: "x",
		},
		{
			name:  "length with no answer text",
			body:  sse(delta(`{"reasoning_content":"long thinking"}`), finish("length", usageJSON), "[DONE]"),
			kinds: "reasoning usage done", reasoning: "long thinking", err: model.ErrNoAnswer,
			finish: model.FinishLength, usage: &wantUsage,
		},
		{
			name:  "length with some answer text is a (short) answer",
			body:  sse(delta(`{"content":"partial"}`), finish("length", ""), "[DONE]"),
			kinds: "content done", content: "partial", finish: model.FinishLength,
		},
		{
			name:  "error object in the stream",
			body:  sse(delta(`{"content":"x"}`), `{"error":{"message":"overloaded","type":"server_error","code":null}}`),
			kinds: "content", err: &model.APIError{}, content: "x",
		},
		{
			name:  "malformed chunk",
			body:  sse(delta(`{"content":"x"}`), `{"choices":[`),
			kinds: "content", err: model.ErrMalformed, content: "x",
		},
		{
			name:  "content as parts",
			body:  sse(delta(`{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}`), finish("stop", ""), "[DONE]"),
			kinds: "content done", content: "ab", finish: model.FinishStop,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := streamOf(tc.body)
			var acc model.Accumulator
			var got []string
			var err error
			for {
				var ev model.Event
				ev, err = s.Next()
				if err != nil {
					break
				}
				got = append(got, ev.Kind.String())
				acc.Add(ev)
			}
			if err == io.EOF {
				err = nil
			}
			if g := strings.Join(got, " "); g != tc.kinds {
				t.Errorf("kinds = %q, want %q", g, tc.kinds)
			}
			var apiErr *model.APIError
			switch {
			case tc.err == nil && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.err != nil && errors.As(tc.err, &apiErr):
				if !errors.As(err, &apiErr) || apiErr.Message != "overloaded" {
					t.Errorf("error %v, want an APIError", err)
				}
			case tc.err != nil && !errors.Is(err, tc.err):
				t.Errorf("error %v, want %v", err, tc.err)
			}
			m := acc.Message()
			if m.Content != tc.content || m.ReasoningContent != tc.reasoning {
				t.Errorf("message = %q / %q, want %q / %q", m.Content, m.ReasoningContent, tc.content, tc.reasoning)
			}
			if acc.FinishReason() != tc.finish {
				t.Errorf("finish = %q, want %q", acc.FinishReason(), tc.finish)
			}
			if fmt.Sprint(acc.Usage()) != fmt.Sprint(tc.usage) {
				t.Errorf("usage = %+v, want %+v", acc.Usage(), tc.usage)
			}
			// Errors are sticky.
			if _, err2 := s.Next(); err != nil && err2 == nil {
				t.Errorf("Next after error %v returned no error", err)
			}
		})
	}
}

// TestStreamToolCallAssembly: calls arrive as many pieces by index (id, type
// and name first, arguments in pieces); complete calls come out whole, in
// index order, after the pieces.
func TestStreamToolCallAssembly(t *testing.T) {
	args0 := `{"path":"main.go","old":"a := 1","new":"a := 2"}`
	args1 := `{"city":"北京"}`
	var chunks []string
	chunks = append(chunks, delta(`{"reasoning_content":"Two edits."}`))
	chunks = append(chunks, delta(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"replace_text","arguments":""}}]}`))
	for _, r := range args0 {
		chunks = append(chunks, delta(fmt.Sprintf(`{"tool_calls":[{"index":0,"function":{"arguments":%q}}]}`, string(r))))
	}
	chunks = append(chunks, delta(`{"tool_calls":[{"index":1,"id":"call_b","type":"builtin_function","function":{"name":"$web_search"}}]}`))
	for _, r := range args1 {
		chunks = append(chunks, delta(fmt.Sprintf(`{"tool_calls":[{"index":1,"function":{"arguments":%q}}]}`, string(r))))
	}
	chunks = append(chunks, finish("tool_calls", usageJSON), "[DONE]")
	resp, err := model.Collect(streamOf(sse(chunks...)))
	if err != nil {
		t.Fatal(err)
	}
	want := []model.ToolCall{
		{ID: "call_a", Type: "function", Function: model.FunctionCall{Name: "replace_text", Arguments: args0}},
		{ID: "call_b", Type: "builtin_function", Function: model.FunctionCall{Name: "$web_search", Arguments: args1}},
	}
	if fmt.Sprint(resp.Message.ToolCalls) != fmt.Sprint(want) {
		t.Errorf("calls = %+v\nwant %+v", resp.Message.ToolCalls, want)
	}
	if resp.FinishReason != model.FinishToolCalls || resp.Message.ReasoningContent != "Two edits." {
		t.Errorf("finish %q reasoning %q", resp.FinishReason, resp.Message.ReasoningContent)
	}

	// The event order: deltas first, then complete calls once finished.
	s := streamOf(sse(chunks...))
	got, err := kinds(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(got, "tool_call_delta tool_call tool_call usage done") {
		t.Errorf("kinds end %q", got[max(0, len(got)-80):])
	}
}

// TestStreamWebSearchWithoutType: a $web_search call streamed without
// "type" is the provider's builtin (issue 13 item 4): it is assembled as
// builtin_function and answered by AnswerBuiltinCalls, not left to the
// client's tools; a function without type stays a function.
func TestStreamWebSearchWithoutType(t *testing.T) {
	body := sse(
		delta(`{"reasoning_content":"Search first."}`),
		delta(`{"tool_calls":[{"index":0,"id":"call_s","function":{"name":"$web_search","arguments":"{\"query\":"}}]}`),
		delta(`{"tool_calls":[{"index":0,"function":{"arguments":"\"kimi\"}"}},{"index":1,"id":"call_f","function":{"name":"read_file","arguments":"{}"}}]}`),
		finish("tool_calls", ""), "[DONE]")
	resp, err := model.Collect(streamOf(body))
	if err != nil {
		t.Fatal(err)
	}
	calls := resp.Message.ToolCalls
	if len(calls) != 2 || calls[0].Type != model.ToolCallTypeBuiltin || calls[1].Type != model.ToolCallTypeFunction {
		t.Fatalf("calls = %+v", calls)
	}
	req := &model.Request{Model: "m", Messages: []model.Message{model.UserMessage("q")}}
	req.AppendAssistant(resp.Message)
	if n := req.AnswerBuiltinCalls(); n != 1 {
		t.Errorf("answered %d builtin calls, want 1", n)
	}
	pending := req.PendingToolCalls()
	if len(pending) != 1 || pending[0].ID != "call_f" {
		t.Errorf("left for the client: %+v", pending)
	}
	last := req.Messages[len(req.Messages)-1]
	if last.Role != model.RoleTool || last.ToolCallID != "call_s" || last.Content != `{"query":"kimi"}` {
		t.Errorf("builtin answer %+v", last)
	}
	// A call already assembled with no type (a recorded reply) is known by
	// its name too.
	req = &model.Request{Model: "m", Messages: []model.Message{model.UserMessage("q")}}
	req.AppendAssistant(model.Message{ReasoningContent: "r", ToolCalls: []model.ToolCall{{ID: "x", Function: model.FunctionCall{Name: "$web_search", Arguments: "{}"}}}})
	if n := req.AnswerBuiltinCalls(); n != 1 {
		t.Errorf("typeless recorded call: answered %d", n)
	}
}

// TestCheckFinish: stop, tool_calls and no reason are complete; length is
// a cut-off answer naming the budget; anything outside the seed's enum is
// reported with its value (issue 13 items 1 and 2).
func TestCheckFinish(t *testing.T) {
	for _, r := range []model.FinishReason{"", model.FinishStop, model.FinishToolCalls} {
		if err := model.CheckFinish(r, 100); err != nil {
			t.Errorf("%q: %v", r, err)
		}
	}
	err := model.CheckFinish(model.FinishLength, 8192)
	if !errors.Is(err, model.ErrCutOff) || !strings.Contains(err.Error(), "maxCompletionTokens (8192 tokens") {
		t.Errorf("length: %v", err)
	}
	err = model.CheckFinish("content_filter", 8192)
	if !errors.Is(err, model.ErrFinishReason) || !strings.Contains(err.Error(), `"content_filter"`) {
		t.Errorf("content_filter: %v", err)
	}
}

// TestStreamToolCallsWithoutIndexOrID: some local servers send neither
// index nor id; calls are still assembled and get ids to answer.
func TestStreamToolCallsWithoutIndexOrID(t *testing.T) {
	body := sse(
		delta(`{"tool_calls":[{"type":"function","function":{"name":"f","arguments":"{\"a\""}}]}`),
		delta(`{"tool_calls":[{"function":{"arguments":":1}"}}]}`),
		finish("tool_calls", ""), "[DONE]")
	resp, err := model.Collect(streamOf(body))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].ID != "call_0" || resp.Message.ToolCalls[0].Function.Arguments != `{"a":1}` {
		t.Errorf("calls = %+v", resp.Message.ToolCalls)
	}
}

// TestStreamJSONBody: a whole JSON reply read through a Stream gives the
// same events a stream would.
func TestStreamJSONBody(t *testing.T) {
	body := `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,"reasoning_content":"r",
	"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":` + usageJSON + `}`
	s := model.NewStreamReader(io.NopCloser(strings.NewReader(body)), true)
	got, err := kinds(s)
	if err != nil || got != "reasoning tool_call usage done" {
		t.Errorf("kinds %q, err %v", got, err)
	}
	resp, err := model.Collect(model.NewStreamReader(io.NopCloser(strings.NewReader(body)), true))
	if err != nil || len(resp.Message.ToolCalls) != 1 || *resp.Usage != wantUsage || resp.Message.Content != "" {
		t.Errorf("resp %+v, err %v", resp, err)
	}
	// A truncated JSON body is an error, not an empty reply.
	_, err = model.Collect(model.NewStreamReader(io.NopCloser(strings.NewReader(body[:40])), true))
	if !errors.Is(err, model.ErrMalformed) {
		t.Errorf("truncated JSON: %v", err)
	}
}

// TestStreamEventsIterator: the iterator yields events, then the error.
func TestStreamEventsIterator(t *testing.T) {
	s := streamOf(sse(delta(`{"content":"a"}`), delta(`{"content":"b"}`)))
	var text string
	var last error
	for ev, err := range s.Events() {
		if err != nil {
			last = err
			break
		}
		text += ev.Text
	}
	if text != "ab" || !errors.Is(last, model.ErrTruncated) {
		t.Errorf("text %q, err %v", text, last)
	}
	s = streamOf(sse(delta(`{"content":"a"}`), finish("stop", ""), "[DONE]"))
	n := 0
	for _, err := range s.Events() {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 2 {
		t.Errorf("%d events, want 2", n)
	}
}

// FuzzStream: any body, SSE or JSON, gives events and an error, never a
// panic; and a stream that ends without error has EventDone.
func FuzzStream(f *testing.F) {
	f.Add([]byte(sse(delta(`{"content":"x"}`), finish("stop", usageJSON), "[DONE]")), false)
	f.Add([]byte(sse(delta(`{"tool_calls":[{"index":3,"id":"a","function":{"name":"n","arguments":"{"}}]}`), finish("tool_calls", ""))), false)
	f.Add([]byte(`{"choices":[{"index":0,"message":{"content":"hi"},"finish_reason":"stop"}]}`), true)
	f.Add([]byte(sse(`{"error":{"message":"m","code":5}}`)), false)
	f.Fuzz(func(t *testing.T, body []byte, isJSON bool) {
		s := model.NewStreamReader(io.NopCloser(bytes.NewReader(body)), isJSON)
		sawDone := false
		for {
			ev, err := s.Next()
			if err != nil {
				if err == io.EOF && !sawDone {
					t.Fatal("clean end without EventDone")
				}
				return
			}
			if ev.Kind == model.EventDone {
				sawDone = true
			}
			if ev.Kind == model.EventToolCall && ev.ToolCall.ID == "" {
				t.Fatal("complete tool call without id")
			}
		}
	})
}
