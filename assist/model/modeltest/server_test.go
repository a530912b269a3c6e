package modeltest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func post(t *testing.T, srv *Server, key, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestValidation(t *testing.T) {
	srv := NewServer(Config{})
	defer srv.Close()
	const asstCall = `{"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	tests := []struct {
		name, body, want string // want: "" for 200, else a substring of the 400 message
	}{
		{"minimal", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}]}`, ""},
		{"all seed fields", `{"model":"kimi-k3.1-pro-highspeed","messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]}],
			"reasoning_effort":"high","max_completion_tokens":10,"stream":false,"tools":[{"type":"web_search"},{"type":"function","function":{"name":"f","description":"d","parameters":{"type":"object"},"strict":true}}],
			"tool_choice":{"type":"function","function":{"name":"f"}},"prompt_cache_options":{"mode":"implicit","ttl":"1h"},"response_format":{"type":"json_object"}}`, ""},
		{"tool turn", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},` + asstCall + `,{"role":"tool","tool_call_id":"c1","content":"r"}]}`, ""},
		{"not json", `{"model":`, "invalid request body"},
		{"unknown field", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"temperature":0.2}`, `unknown field "temperature"`},
		{"unknown model", `{"model":"gpt-4","messages":[{"role":"user","content":"hi"}]}`, `model "gpt-4" is not supported`},
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`, "model is required"},
		{"no messages", `{"model":"kimi-k3.1-pro","messages":[]}`, "at least 1"},
		{"bad role", `{"model":"kimi-k3.1-pro","messages":[{"role":"bot","content":"hi"}]}`, `role "bot"`},
		{"content number", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":5}]}`, "content must be"},
		{"bad part", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":[{"type":"audio"}]}]}`, `unknown type "audio"`},
		{"user null", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":null}]}`, "without content"},
		{"max tokens range", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":0}`, "between 1 and 1048576"},
		{"max tokens too big", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":1048577}`, "between 1 and 1048576"},
		{"both limits", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":5,"max_tokens":5}`, "not both"},
		{"effort", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"extreme"}`, "reasoning_effort"},
		{"k3 effort", `{"model":"kimi-k3","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"low"}`, "max only"},
		{"k3 max", `{"model":"kimi-k3","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"max"}`, ""},
		{"tool type", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"retrieval"}]}`, `type "retrieval"`},
		{"tool params", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}]}`, "parameters"},
		{"tool choice unknown", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"tool_choice":"always"}`, "tool_choice"},
		{"tool choice missing fn", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_search"}],"tool_choice":{"type":"function","function":{"name":"g"}}}`, `"g"`},
		{"cache ttl", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"prompt_cache_options":{"mode":"implicit","ttl":"2h"}}`, "5m or 1h"},
		{"cache mode", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"prompt_cache_options":{"mode":"explicit"}}`, "implicit"},
		{"format", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"yaml"}}`, "response_format.type"},
		{"schema without name", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}`, "name"},
		{"tool call without reasoning", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, "reasoning_content"},
		{"unanswered call", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},` + asstCall + `,{"role":"user","content":"next"}]}`, "c1"},
		{"unanswered at end", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},` + asstCall + `]}`, "c1"},
		{"tool answers nothing", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},{"role":"tool","tool_call_id":"zz","content":"r"}]}`, `"zz" answers no pending`},
		{"answered twice", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},` + asstCall + `,{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, "answers no pending"},
		{"tool without id", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},` + asstCall + `,{"role":"tool","content":"r"}]}`, "without tool_call_id"},
		{"call type", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","reasoning_content":"r","tool_calls":[{"id":"c1","type":"x","function":{"name":"f"}}]}]}`, `type "x"`},
		// Issue 13 item 10: as strict inside as at the top level.
		{"name on a message", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","name":"bob","content":"hi"}]}`, `unknown field "name"`},
		{"unknown key in a function tool", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"},"examples":[]}}]}`, `unknown field "examples"`},
		{"unknown key beside a tool", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","cache_control":{},"function":{"name":"f","parameters":{"type":"object"}}}]}`, `unknown field "cache_control"`},
		{"web_search with a function", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"web_search","function":{"name":"s","parameters":{}}}]}`, "only a type"},
		{"unknown key in tool_choice", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"f","strict":true}}}`, "tool_choice"},
		{"unknown key in response_format", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object","schema":{}}}`, `unknown field "schema"`},
		{"unknown key in json_schema", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{},"description":"d"}}}`, `unknown field "description"`},
		{"schema without schema", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"r"}}}`, "object schema"},
		{"unknown key in a content part", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":[{"type":"text","text":"a","cache_control":{}}]}]}`, `unknown field "cache_control"`},
		{"unknown key in a sent-back call", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","reasoning_content":"r","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]}`, `unknown field "index"`},
		{"arguments not JSON", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]}`, "not valid JSON"},
		{"arguments missing", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]}`, "not valid JSON"},
		{"stream_options", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`, `unknown field "stream_options"`},
		{"context window", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":1048576}`, "exceed the context window of 1048576"},
		{"context window, max_tokens", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"max_tokens":1048575}`, "context window"},
		{"window just fits", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"max_completion_tokens":1048500}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := post(t, srv, srv.Key, tc.body)
			if tc.want == "" {
				if resp.StatusCode != 200 {
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
				return
			}
			if resp.StatusCode != 400 {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, b)
			}
			var e errorJSON
			if err := json.Unmarshal(b, &e); err != nil || !strings.Contains(e.Error.Message, tc.want) || e.Error.Type != "invalid_request_error" {
				t.Errorf("error body %s, want message containing %q", b, tc.want)
			}
		})
	}
}

// TestAllowUnknownFields relaxes every level, not the protocol: unknown
// keys pass, invalid tool-call arguments still do not.
func TestAllowUnknownFields(t *testing.T) {
	srv := NewServer(Config{AllowUnknownFields: true})
	defer srv.Close()
	for _, body := range []string{
		`{"model":"kimi-k3.1-pro","temperature":0,"messages":[{"role":"user","name":"bob","content":[{"type":"text","text":"a","cache_control":{}}]}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"},"examples":[]}}],"tool_choice":{"type":"function","function":{"name":"f","x":1}},"response_format":{"type":"json_object","y":2},"stream_options":{"include_usage":true}}`,
	} {
		if resp, b := post(t, srv, srv.Key, body); resp.StatusCode != 200 {
			t.Errorf("status %d: %s", resp.StatusCode, b)
		}
	}
	bad := `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"q"},{"role":"assistant","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"nope"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]}`
	if resp, _ := post(t, srv, srv.Key, bad); resp.StatusCode != 400 {
		t.Errorf("invalid arguments: status %d", resp.StatusCode)
	}
}

// frame is one decoded SSE data event of a reply.
type frame struct {
	raw     string
	Choices []struct {
		Delta struct {
			Content          json.RawMessage `json:"content"`
			ReasoningContent string          `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int     `json:"index"`
				ID       string  `json:"id"`
				Type     *string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
}

// frames posts body and decodes the SSE reply's data events, [DONE] left out.
func frames(t *testing.T, srv *Server, body string) []frame {
	t.Helper()
	_, b := post(t, srv, srv.Key, body)
	var out []frame
	for _, line := range strings.Split(string(b), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || data == "[DONE]" {
			continue
		}
		var f frame
		if err := json.Unmarshal([]byte(data), &f); err != nil {
			t.Fatalf("frame %q: %v", data, err)
		}
		f.raw = data
		out = append(out, f)
	}
	return out
}

// TestUsageWhenAsked: in that mode a stream carries usage only when
// stream_options.include_usage asks for it, as OpenAI's streams do.
func TestUsageWhenAsked(t *testing.T) {
	srv := NewServer(Config{UsageWhenAsked: true})
	defer srv.Close()
	const plain = `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"stream":true}`
	const asked = `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`
	usage := func(fs []frame) bool {
		for _, f := range fs {
			if f.Usage != nil {
				return true
			}
		}
		return false
	}
	if fs := frames(t, srv, plain); len(fs) == 0 || usage(fs) {
		t.Errorf("not asked: %d frames, usage %v", len(fs), usage(fs))
	}
	if fs := frames(t, srv, asked); !usage(fs) {
		t.Errorf("asked: no usage")
	}
}

// TestStreamShapes: what real streams send and the stand-in can now send
// too: content null in deltas, several calls announced in one chunk and
// their arguments interleaved, the last content in the finish chunk, a
// call without type, a finish reason outside the enum, length after text.
func TestStreamShapes(t *testing.T) {
	srv := NewServer(Config{})
	defer srv.Close()
	const body = `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"stream":true}`

	srv.Push(Rule{Reasoning: "abc", Content: "hello", Chunks: 2, NullContent: true, ContentInFinish: true})
	fs := frames(t, srv, body)
	var nulls, text int
	last := fs[len(fs)-1]
	for _, f := range fs {
		for _, c := range f.Choices {
			switch string(c.Delta.Content) {
			case "null":
				nulls++
			case "":
				t.Errorf("a delta without content: %s", f.raw)
			default:
				text++
			}
		}
	}
	if nulls < 3 || text != 2 || string(last.Choices[0].Delta.Content) != `"llo"` || *last.Choices[0].FinishReason != "stop" {
		t.Errorf("null content %d, text pieces %d, finish chunk %s", nulls, text, last.raw)
	}

	srv.Push(Rule{Chunks: 2, Interleave: true, ToolCalls: []ScriptToolCall{
		{Name: "f", Arguments: `{"a":1}`}, {Name: "$web_search", Arguments: `{"q":"x"}`, OmitType: true}}})
	fs = frames(t, srv, body)
	args := map[int]string{}
	multi := 0
	for _, f := range fs {
		for _, c := range f.Choices {
			if len(c.Delta.ToolCalls) > 1 {
				multi++
			}
			for _, tc := range c.Delta.ToolCalls {
				args[tc.Index] += tc.Function.Arguments
				if tc.Function.Name == "$web_search" && tc.Type != nil {
					t.Errorf("omit_type: %s", f.raw)
				}
			}
		}
	}
	if multi < 2 || args[0] != `{"a":1}` || args[1] != `{"q":"x"}` {
		t.Errorf("%d chunks with several calls; args %v", multi, args)
	}

	srv.Push(Rule{Content: "partial", FinishReason: "content_filter"}, Rule{Content: "cut he", FinishReason: "length"})
	for _, want := range []string{"content_filter", "length"} {
		fs = frames(t, srv, body)
		if f := fs[len(fs)-1]; f.Choices[0].FinishReason == nil || *f.Choices[0].FinishReason != want {
			t.Errorf("finish chunk %s, want %s", f.raw, want)
		}
	}
}

func TestAuth(t *testing.T) {
	srv := NewServer(Config{Key: "k-123456"})
	defer srv.Close()
	for _, key := range []string{"", "wrong"} {
		resp, b := post(t, srv, key, `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}]}`)
		if resp.StatusCode != 401 || !strings.Contains(string(b), "invalid_api_key") {
			t.Errorf("key %q: %d %s", key, resp.StatusCode, b)
		}
	}
	resp, _ := post(t, srv, "k-123456", `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}]}`)
	if resp.StatusCode != 200 {
		t.Errorf("good key: %d", resp.StatusCode)
	}
	r, _ := http.Get(srv.URL + "/v1/models")
	if r.StatusCode != 404 {
		t.Errorf("unknown path: %d", r.StatusCode)
	}
	r.Body.Close()
}

// TestScriptSelection: rules match by last user message, prompt, last role
// and model; times bounds uses; pushed rules go first; default last.
func TestScriptSelection(t *testing.T) {
	srv := NewServer(Config{Script: &Script{
		Rules: []Rule{
			{LastRole: "tool", Content: "after tool"},
			{Match: "limited", Times: 1, Content: "once"},
			{Match: "Explain", Model: "kimi-k3.1-pro-highspeed", Content: "fast explain"},
			{Match: "Explain", Content: "explain"},
			{MatchPrompt: "SYSTEM-MARK", Content: "by prompt"},
		},
		Default: &Rule{Content: "default"},
	}})
	defer srv.Close()
	ask := func(model string, msgs string) string {
		resp, b := post(t, srv, srv.Key, `{"model":"`+model+`","messages":`+msgs+`}`)
		if resp.StatusCode != 200 {
			t.Fatalf("%d %s", resp.StatusCode, b)
		}
		var c completionJSON
		json.Unmarshal(b, &c)
		return *c.Choices[0].Message.Content
	}
	user := func(s string) string { return `[{"role":"user","content":"` + s + `"}]` }
	checks := []struct{ got, want string }{
		{ask("kimi-k3.1-pro", user("Explain x")), "explain"},
		{ask("kimi-k3.1-pro-highspeed", user("Explain x")), "fast explain"},
		{ask("kimi-k3.1-pro", user("limited")), "once"},
		{ask("kimi-k3.1-pro", user("limited")), "default"},
		{ask("kimi-k3.1-pro", `[{"role":"system","content":"SYSTEM-MARK"},{"role":"user","content":"q"}]`), "by prompt"},
		{ask("kimi-k3.1-pro", `[{"role":"user","content":"Explain"},{"role":"assistant","reasoning_content":"r","tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"a","content":"x"}]`), "after tool"},
	}
	srv.Push(Rule{Content: "pushed"})
	checks = append(checks, struct{ got, want string }{ask("kimi-k3.1-pro", user("Explain")), "pushed"})
	checks = append(checks, struct{ got, want string }{ask("kimi-k3.1-pro", user("Explain")), "explain"})
	for i, c := range checks {
		if c.got != c.want {
			t.Errorf("%d: got %q, want %q", i, c.got, c.want)
		}
	}
	if reqs := srv.Requests(); len(reqs) != len(checks) || reqs[2].Rule != 1 || reqs[6].Rule != -1 {
		t.Errorf("records: %d, rules %d %d", len(reqs), reqs[2].Rule, reqs[6].Rule)
	}
}

// TestSSEFormat: the stream has a role chunk, paced pieces, tool calls by
// index, a finish chunk with usage, and [DONE]; CRLF and keep-alive
// options change only the framing.
func TestSSEFormat(t *testing.T) {
	srv := NewServer(Config{})
	defer srv.Close()
	body := `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"stream":true}`
	for _, rule := range []Rule{
		{Reasoning: "abc", Content: "héllo wörld", Chunks: 3, ToolCalls: []ScriptToolCall{{Name: "f", Arguments: `{"a":1}`}}},
		{Content: "x", CRLF: true, KeepAlive: true, Usage: "separate"},
	} {
		srv.Push(rule)
		resp, b := post(t, srv, srv.Key, body)
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("content type %q", ct)
		}
		text := string(b)
		if rule.CRLF {
			if strings.Count(text, "\r\n") == 0 || strings.Count(text, ": keep-alive") == 0 {
				t.Errorf("no CRLF or keep-alive: %q", text)
			}
			text = strings.ReplaceAll(text, "\r\n", "\n")
		}
		var content, reasoning, args string
		var finish string
		var usage *usageJSON
		sc := bufio.NewScanner(strings.NewReader(text))
		var frames []string
		for sc.Scan() {
			line := sc.Text()
			if !strings.HasPrefix(line, "data: ") {
				continue
			}
			frames = append(frames, line[6:])
			if line == "data: [DONE]" {
				continue
			}
			var c struct {
				Choices []struct {
					Delta struct {
						Content          string
						ReasoningContent string `json:"reasoning_content"`
						ToolCalls        []struct {
							Index    int
							Function struct{ Arguments string }
						} `json:"tool_calls"`
					}
					FinishReason *string `json:"finish_reason"`
				}
				Usage *usageJSON
			}
			if err := json.Unmarshal([]byte(line[6:]), &c); err != nil {
				t.Fatalf("frame %q: %v", line, err)
			}
			for _, ch := range c.Choices {
				content += ch.Delta.Content
				reasoning += ch.Delta.ReasoningContent
				for _, tc := range ch.Delta.ToolCalls {
					args += tc.Function.Arguments
				}
				if ch.FinishReason != nil {
					finish = *ch.FinishReason
				}
			}
			if c.Usage != nil {
				usage = c.Usage
			}
		}
		if content != rule.Content || reasoning != rule.Reasoning || frames[len(frames)-1] != "[DONE]" || usage == nil {
			t.Errorf("content %q reasoning %q usage %v last %q", content, reasoning, usage, frames[len(frames)-1])
		}
		if len(rule.ToolCalls) > 0 && (args != rule.ToolCalls[0].Arguments || finish != "tool_calls") {
			t.Errorf("args %q finish %q", args, finish)
		}
	}
}

// TestStatusFaults: status faults answer the provider's error body, with
// Retry-After when scripted; hangup closes the connection.
func TestStatusFaults(t *testing.T) {
	srv := NewServer(Config{})
	defer srv.Close()
	body := `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}]}`
	srv.Push(Rule{Fault: "429", RetryAfter: "7", Message: "slow down"})
	resp, b := post(t, srv, srv.Key, body)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "7" || !strings.Contains(string(b), `"rate_limit_error"`) || !strings.Contains(string(b), "slow down") {
		t.Errorf("429: %d %v %s", resp.StatusCode, resp.Header, b)
	}
	srv.Push(Rule{Fault: "500"})
	if resp, b = post(t, srv, srv.Key, body); resp.StatusCode != 500 || !strings.Contains(string(b), "server_error") {
		t.Errorf("500: %d %s", resp.StatusCode, b)
	}
	srv.Push(Rule{Fault: "hangup"})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+srv.Key)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Errorf("hangup: got status %d", resp.StatusCode)
	}
}

// TestJSONFaults: a cut JSON reply is half a body; a stalled one waits for
// the client to go.
func TestJSONFaults(t *testing.T) {
	srv := NewServer(Config{})
	defer srv.Close()
	body := `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}]}`
	srv.Push(Rule{Content: "a long enough answer", Fault: "cut"})
	_, b := post(t, srv, srv.Key, body)
	if json.Valid(b) || len(b) == 0 {
		t.Errorf("cut body is valid JSON or empty: %s", b)
	}
	srv.Push(Rule{Fault: "stall"})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+srv.Key)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		io.ReadAll(resp.Body)
		resp.Body.Close()
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	reqs, err := srv.WaitRequests(wctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reqs[1].HungUp {
		t.Errorf("stall: hang-up not recorded: %+v", reqs[1])
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want []string
	}{
		{"", 3, nil},
		{"abcdef", 3, []string{"ab", "cd", "ef"}},
		{"abcde", 2, []string{"ab", "cde"}},
		{"ab", 5, []string{"a", "b"}},
		{"日本語テキスト", 3, []string{"日本", "語テ", "キスト"}},
	}
	for _, tc := range tests {
		got := split(tc.s, tc.n)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("split(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// TestRender: deterministic, tools first, and a longer conversation renders
// as an extension of the shorter one.
func TestRender(t *testing.T) {
	parse := func(body string) *ChatRequest {
		r, err := parseRequest([]byte(body), DefaultModels, false, false)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	short := parse(`{"model":"kimi-k3.1-pro","tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"messages":[{"role":"system","content":"S"},{"role":"user","content":"U"}]}`)
	long := parse(`{"model":"kimi-k3.1-pro","tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"messages":[{"role":"system","content":"S"},{"role":"user","content":"U"},
		{"role":"assistant","content":null,"reasoning_content":"R","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"T"}]}`)
	a, b := Render(short), Render(long)
	if !bytes.Equal(a, Render(short)) {
		t.Error("not deterministic")
	}
	if !bytes.HasPrefix(b, a) {
		t.Errorf("the longer conversation does not extend the shorter:\n%s\n%s", a, b)
	}
	want := "<|tool|>{\"type\":\"function\",\"function\":{\"name\":\"f\",\"parameters\":{\"type\":\"object\"}}}<|end|>\n<|system|>\nS<|end|>\n<|user|>\nU<|end|>\n" +
		"<|assistant|>\n<think>R</think>\n<tool_call>c function f {}</tool_call><|end|>\n<|tool|>[c]\nT<|end|>\n"
	if string(b) != want {
		t.Errorf("render =\n%q\nwant\n%q", b, want)
	}
}

func TestParseScript(t *testing.T) {
	good := `{"rules":[{"match":"Explain","reasoning":"r","content":"c","chunks":60,"interval_ms":25},{"fault":"429","retry_after":"1","times":2}],"default":{"content":"OK"}}`
	if _, err := ParseScript([]byte(good)); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"rules":[{"fault":"boom"}]}`,
		`{"rules":[{"fault":"200"}]}`,
		`{"rules":[{"usage":"sometimes"}]}`,
		`{"rules":[{"finish_reason":"Stop!"}]}`,
		`{"rules":[{"chunks":-1}]}`,
		`{"rules":[{"tool_calls":[{"arguments":"{}"}]}]}`,
		`{"rules":[{"matches":"typo"}]}`,
		`{"default":{"fault":"x"}}`,
	} {
		if _, err := ParseScript([]byte(bad)); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// TestRequestLog: every request body, even a rejected one, is one JSON line.
func TestRequestLog(t *testing.T) {
	var log bytes.Buffer
	srv := NewServer(Config{RequestLog: &log})
	defer srv.Close()
	post(t, srv, srv.Key, "{\n  \"model\": \"kimi-k3.1-pro\",\n  \"messages\": [{\"role\":\"user\",\"content\":\"hi\"}]\n}")
	post(t, srv, "bad", `not json`)
	lines := strings.Split(strings.TrimSpace(log.String()), "\n")
	if len(lines) != 2 || lines[0] != `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}]}` || !json.Valid([]byte(lines[1])) {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestCacheSimulation: prompt, cached and written tokens come from the
// simulation, per model, and Reset forgets them.
func TestCacheSimulation(t *testing.T) {
	srv := NewServer(Config{Cache: CacheConfig{BlockTokens: 8}})
	defer srv.Close()
	sys := strings.Repeat("stable system prompt ", 20)
	body := func(model, q string) string {
		return `{"model":"` + model + `","messages":[{"role":"system","content":"` + sys + `"},{"role":"user","content":"` + q + `"}]}`
	}
	post(t, srv, srv.Key, body("kimi-k3.1-pro", "one"))
	post(t, srv, srv.Key, body("kimi-k3.1-pro", "two"))
	post(t, srv, srv.Key, body("kimi-k3.1-pro-highspeed", "two"))
	reqs := srv.Requests()
	u0, u1, u2 := reqs[0].Usage, reqs[1].Usage, reqs[2].Usage
	if u0.CachedTokens != 0 || u0.CacheWriteTokens == 0 || u0.CacheWriteTokens%8 != 0 {
		t.Errorf("first: %+v", u0)
	}
	if u1.CachedTokens == 0 || u1.CachedTokens+u1.CacheWriteTokens > u1.PromptTokens {
		t.Errorf("second: %+v", u1)
	}
	if u2.CachedTokens != 0 {
		t.Errorf("another model shares the cache: %+v", u2)
	}
	if tot := srv.CacheTotals(); tot["kimi-k3.1-pro"].Requests != 2 || tot["kimi-k3.1-pro-highspeed"].Requests != 1 {
		t.Errorf("totals %+v", tot)
	}
	srv.Reset()
	post(t, srv, srv.Key, body("kimi-k3.1-pro", "two"))
	if u := srv.Requests()[0].Usage; u.CachedTokens != 0 {
		t.Errorf("after Reset: %+v", u)
	}
}

// TestOpenCounts: Open counts the requests being answered; a stream stops
// counting before its final [DONE] reaches the client.
func TestOpenCounts(t *testing.T) {
	srv := NewServer(Config{Script: &Script{Rules: []Rule{{Content: "slow", Chunks: 10, IntervalMS: 50}}}})
	defer srv.Close()
	body := `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}],"stream":true}`
	done := make(chan struct{})
	for i := 0; i < 3; i++ {
		go func() {
			post(t, srv, srv.Key, body)
			if open, _ := srv.Open(); open > 2 {
				t.Errorf("%d open after a stream was read whole", open)
			}
			done <- struct{}{}
		}()
	}
	for i := 0; i < 3; i++ {
		<-done
	}
	if open, peak := srv.Open(); open != 0 || peak != 3 {
		t.Errorf("Open() = %d, %d; want 0 open, 3 at most", open, peak)
	}
	srv.Reset()
	if _, peak := srv.Open(); peak != 0 {
		t.Errorf("MaxOpen after Reset = %d", peak)
	}
}

// FuzzParseRequest: no request body makes the validator panic, and what
// it accepts it renders.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{
		`{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"hi"}]}`,
		`{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":"u"}]}],"tools":[{"type":"web_search"},{"type":"function","function":{"name":"f","parameters":{"type":"object"}}}],"tool_choice":{"type":"function","function":{"name":"f"}}}`,
		`{"model":"kimi-k3","messages":[{"role":"user","content":"q"},{"role":"assistant","reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}],"reasoning_effort":"max","response_format":{"type":"json_schema","json_schema":{"name":"r","schema":{}}}}`,
	} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, body []byte, lenient bool) {
		r, err := parseRequest(body, DefaultModels, lenient, lenient)
		if err == nil {
			Render(r)
		}
	})
}
