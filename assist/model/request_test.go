package model_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

func TestMessageJSON(t *testing.T) {
	tests := []struct {
		name string
		m    model.Message
		want string
	}{
		{"user", model.UserMessage("a <b> & c"), `{"role":"user","content":"a <b> & c"}`},
		{"system", model.SystemMessage(""), `{"role":"system","content":""}`},
		{"assistant with calls only", model.Message{Role: "assistant", ReasoningContent: "r", ToolCalls: []model.ToolCall{{ID: "c", Type: "function", Function: model.FunctionCall{Name: "f", Arguments: "{}"}}}},
			`{"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}`},
		{"assistant text and calls", model.Message{Role: "assistant", Content: "x", ReasoningContent: "r", ToolCalls: []model.ToolCall{{ID: "c", Type: "function", Function: model.FunctionCall{Name: "f"}}}},
			`{"role":"assistant","content":"x","reasoning_content":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]}`}, // no arguments: "{}", valid JSON as the seed asks
		{"tool", model.ToolMessage("c", "result"), `{"role":"tool","content":"result","tool_call_id":"c"}`},
		{"parts", model.Message{Role: "user", Parts: []model.ContentPart{{Type: "text", Text: "see"}, {Type: "image_url", ImageURL: &model.MediaURL{URL: "data:image/png;base64,AA"}}}},
			`{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA"}}]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := model.Request{Model: "m", Messages: []model.Message{tc.m}}
			b, err := req.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSuffix(strings.TrimPrefix(string(b), `{"model":"m","messages":[`), `]}`)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			var back model.Message
			if err := json.Unmarshal([]byte(got), &back); err != nil {
				t.Fatal(err)
			}
			again, _ := json.Marshal(back)
			if string(again) != strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(tc.want) {
				t.Errorf("round trip: %s", again)
			}
		})
	}
}

func TestToolChoiceJSON(t *testing.T) {
	for _, tc := range []struct {
		c    model.ToolChoice
		want string
	}{
		{model.ToolChoiceAuto, `"auto"`}, {model.ToolChoiceNone, `"none"`}, {model.ToolChoiceRequired, `"required"`},
		{model.ToolChoiceFunction("get_weather"), `{"type":"function","function":{"name":"get_weather"}}`},
	} {
		b, _ := json.Marshal(tc.c)
		if string(b) != tc.want {
			t.Errorf("got %s, want %s", b, tc.want)
		}
		var back model.ToolChoice
		if err := json.Unmarshal(b, &back); err != nil || back != tc.c {
			t.Errorf("round trip of %s: %+v %v", b, back, err)
		}
	}
	req := model.Request{Model: "m", Messages: []model.Message{model.UserMessage("x")}}
	b, _ := req.Marshal()
	if strings.Contains(string(b), "tool_choice") {
		t.Errorf("zero tool choice sent: %s", b)
	}
}

// TestMarshalDeterministic: the same request gives the same bytes, and tool
// schemas go out as the caller wrote them (key order kept).
func TestMarshalDeterministic(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["b","a"],"properties":{"b":{"type":"string"},"a":{"type":"integer"}}}`)
	req := &model.Request{Model: "m", Messages: []model.Message{model.SystemMessage("sys"), model.UserMessage("u")},
		Tools: []model.Tool{model.FunctionTool("f", "d", schema), model.FunctionTool("g", "", nil)}}
	a, _ := req.Marshal()
	for i := 0; i < 20; i++ {
		b, _ := req.Marshal()
		if string(a) != string(b) {
			t.Fatalf("run %d differs", i)
		}
	}
	if !strings.Contains(string(a), string(schema)) || !strings.Contains(string(a), `"name":"g","parameters":{"type":"object","properties":{}}`) {
		t.Errorf("body %s", a)
	}
}

func TestValidate(t *testing.T) {
	ok := func() *model.Request {
		return &model.Request{Model: "m", Messages: []model.Message{model.UserMessage("x")}}
	}
	tests := []struct {
		name string
		mod  func(*model.Request)
		want string
	}{
		{"ok", func(*model.Request) {}, ""},
		{"no model", func(r *model.Request) { r.Model = "" }, "model is empty"},
		{"no messages", func(r *model.Request) { r.Messages = nil }, "no messages"},
		{"both limits", func(r *model.Request) { r.MaxTokens, r.MaxCompletionTokens = 5, 5 }, "not both"},
		{"limit range", func(r *model.Request) { r.MaxCompletionTokens = 2 << 20 }, "out of range"},
		{"bad role", func(r *model.Request) { r.Messages[0].Role = "bot" }, "unknown role"},
		{"tool without id", func(r *model.Request) { r.Messages = append(r.Messages, model.Message{Role: "tool"}) }, "tool_call_id"},
		{"tool without schema", func(r *model.Request) {
			r.Tools = []model.Tool{{Type: "function", Function: &model.FunctionDef{Name: "f"}}}
		}, "no parameters"},
		{"bad schema", func(r *model.Request) { r.Tools = []model.Tool{model.FunctionTool("f", "", json.RawMessage(`{`))} }, "not valid JSON"},
		{"unknown tool type", func(r *model.Request) { r.Tools = []model.Tool{{Type: "x"}} }, "unknown type"},
		{"schema format without schema", func(r *model.Request) { r.ResponseFormat = &model.ResponseFormat{Type: "json_schema"} }, "json_schema"},
		// The seed's json_schema requires "name" and "schema" (issue 13 item 8).
		{"schema format named, no schema", func(r *model.Request) {
			r.ResponseFormat = &model.ResponseFormat{Type: "json_schema", JSONSchema: &model.JSONSchema{Name: "result"}}
		}, "needs a schema"},
		{"schema format, schema not an object", func(r *model.Request) {
			r.ResponseFormat = &model.ResponseFormat{Type: "json_schema", JSONSchema: &model.JSONSchema{Name: "result", Schema: json.RawMessage(`"string"`)}}
		}, "needs a schema"},
		{"schema format whole", func(r *model.Request) {
			r.ResponseFormat = &model.ResponseFormat{Type: "json_schema", JSONSchema: &model.JSONSchema{Name: "result", Schema: json.RawMessage(`{"type":"object"}`)}}
		}, ""},
	}
	for _, tc := range tests {
		r := ok()
		tc.mod(r)
		err := r.Validate()
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestEndpoint(t *testing.T) {
	tests := []struct{ base, want, err string }{
		{"https://direct.evolink.ai", "https://direct.evolink.ai/v1/chat/completions", ""},
		{"https://direct.evolink.ai/", "https://direct.evolink.ai/v1/chat/completions", ""},
		{"https://direct.evolink.ai/v1", "https://direct.evolink.ai/v1/chat/completions", ""},
		{"http://localhost:11434/v1/", "http://localhost:11434/v1/chat/completions", ""},
		{"https://openrouter.ai/api/v1", "https://openrouter.ai/api/v1/chat/completions", ""},
		{"http://127.0.0.1:8080/v1/chat/completions", "http://127.0.0.1:8080/v1/chat/completions", ""},
		{" https://x.test ", "https://x.test/v1/chat/completions", ""},
		{"ftp://x.test", "", "want an http or https URL"},
		{"direct.evolink.ai", "", "want an http or https URL"},
		{"https://user:secret@x.test/v1", "https://user:secret@x.test/v1/chat/completions", ""},
	}
	for _, tc := range tests {
		got, shown, err := model.Endpoint(tc.base)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: got %q, %v", tc.base, got, err)
			}
			continue
		}
		if err != nil || got != tc.want || strings.Contains(shown, "secret") {
			t.Errorf("%q: got %q (shown %q), %v; want %q", tc.base, got, shown, err, tc.want)
		}
	}
	c := model.New(model.Options{BaseURL: "nope://"})
	if _, err := c.Complete(t.Context(), &model.Request{Model: "m", Messages: []model.Message{model.UserMessage("x")}}); err == nil {
		t.Error("bad base URL accepted")
	}
}

// TestRequiredEffort: seed 003, "kimi-k3 仅支持 max": kimi-k3 takes max
// only; the K3.1 models take any effort.
func TestRequiredEffort(t *testing.T) {
	if e, ok := model.RequiredEffort(model.ModelK3); !ok || e != model.EffortMax {
		t.Errorf("kimi-k3: %q %v", e, ok)
	}
	for _, m := range []string{model.ModelPro, model.ModelHighspeed, "llama3"} {
		if e, ok := model.RequiredEffort(m); ok {
			t.Errorf("%s: forced to %q", m, e)
		}
	}
}

// TestDefaultURLTable: the one table of default endpoints, and which base
// URLs have a fallback.
func TestDefaultURLTable(t *testing.T) {
	for base, want := range map[string]string{
		"":                               model.DefaultFallbackURL,
		model.DefaultBaseURL:             model.DefaultFallbackURL,
		"https://direct.evolink.ai/":     model.DefaultFallbackURL,
		"https://direct.evolink.ai/v1":   model.DefaultFallbackURL,
		"https://direct.evolink.ai/v1/":  model.DefaultFallbackURL,
		"http://localhost:11434":         "",
		"https://api.evolink.ai":         "",
		"https://direct.evolink.ai.evil": "",
	} {
		if got := model.FallbackFor(base); got != want {
			t.Errorf("FallbackFor(%q) = %q, want %q", base, got, want)
		}
	}
}

// TestInvalidArgumentsOnTheWire: a call whose arguments are not JSON goes
// on the wire as {} (the seed: arguments are a JSON string) while the
// conversation keeps the model's text for the tool that reports it; valid
// arguments go back byte for byte.
func TestInvalidArgumentsOnTheWire(t *testing.T) {
	calls := []model.ToolCall{
		{ID: "a", Type: "function", Function: model.FunctionCall{Name: "f", Arguments: `{"x": 1}`}},
		{ID: "b", Type: "function", Function: model.FunctionCall{Name: "g", Arguments: `{"path":"a.go","ol`}},
		{ID: "c", Type: "function", Function: model.FunctionCall{Name: "h"}},
	}
	r := model.Request{Model: "m", Messages: []model.Message{model.UserMessage("q")}}
	r.AppendAssistant(model.Message{ReasoningContent: "r", ToolCalls: calls})
	b, err := r.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := `"tool_calls":[{"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\": 1}"}},{"id":"b","type":"function","function":{"name":"g","arguments":"{}"}},{"id":"c","type":"function","function":{"name":"h","arguments":"{}"}}]`
	if !strings.Contains(string(b), want) {
		t.Errorf("wire:\n%s\nwant it to contain\n%s", b, want)
	}
	if got := r.PendingToolCalls(); got[1].Function.Arguments != `{"path":"a.go","ol` {
		t.Errorf("the conversation lost the model's text: %+v", got)
	}
}
