package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// DefaultModels are the model names the stand-in accepts by default.
var DefaultModels = []string{"kimi-k3.1-pro", "kimi-k3.1-pro-highspeed", "kimi-k3"}

// ChatRequest is a request body as the stand-in parsed it. It is its own
// reading of the wire format (not the client's types), so that a mismatch
// between client and API shows up in tests.
type ChatRequest struct {
	Model               string             `json:"model"`
	Messages            []Message          `json:"messages"`
	MaxCompletionTokens *int               `json:"max_completion_tokens"`
	MaxTokens           *int               `json:"max_tokens"`
	ReasoningEffort     *string            `json:"reasoning_effort"`
	Stream              *bool              `json:"stream"`
	Tools               []json.RawMessage  `json:"tools"`
	ToolChoice          json.RawMessage    `json:"tool_choice"`
	PromptCacheOptions  *PromptCacheOption `json:"prompt_cache_options"`
	ResponseFormat      json.RawMessage    `json:"response_format"`
	// StreamOptions is OpenAI's stream_options, which the seed does not
	// define: accepted only with Config.UsageWhenAsked (or
	// AllowUnknownFields).
	StreamOptions json.RawMessage `json:"stream_options"`
}

// outputLimit returns max_completion_tokens, else max_tokens, else 0.
func (r *ChatRequest) outputLimit() int {
	switch {
	case r.MaxCompletionTokens != nil:
		return *r.MaxCompletionTokens
	case r.MaxTokens != nil:
		return *r.MaxTokens
	}
	return 0
}

// includeUsage reports whether the request asks for usage in a stream
// (OpenAI's stream_options.include_usage).
func (r *ChatRequest) includeUsage() bool {
	var o struct {
		IncludeUsage bool `json:"include_usage"`
	}
	return json.Unmarshal(r.StreamOptions, &o) == nil && o.IncludeUsage
}

// PromptCacheOption is prompt_cache_options.
type PromptCacheOption struct {
	Mode *string `json:"mode"`
	TTL  *string `json:"ttl"`
}

// Message is one message as received: the seed's ChatMessage, whose
// properties are role, content, reasoning_content, tool_calls and
// tool_call_id — no "name" (OpenAI's participant name), which is refused
// like any key the seed does not define.
type Message struct {
	Role string `json:"role"`
	// Content is the raw content value: a string, an array or null.
	Content          json.RawMessage `json:"content"`
	ReasoningContent *string         `json:"reasoning_content"`
	ToolCalls        []ToolCall      `json:"tool_calls"`
	ToolCallID       *string         `json:"tool_call_id"`
}

// ToolCall is a tool call inside an assistant message.
type ToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Text returns the message's text: the string content, or the text parts
// joined (images and videos as <image:URL> and <video:URL>).
func (m *Message) Text() string {
	t, _ := contentText(m.Content)
	return t
}

type contentPart struct {
	Type     string          `json:"type"`
	Text     *string         `json:"text"`
	ImageURL json.RawMessage `json:"image_url"`
	VideoURL json.RawMessage `json:"video_url"`
}

// contentText returns the text of a content value and an error if it is
// neither a string, an array of valid parts, nor null. Parts are read
// leniently (unknown keys ignored); validation reads them with strictParts.
func contentText(raw json.RawMessage) (string, error) {
	return readContent(raw, false)
}

func readContent(raw json.RawMessage, strict bool) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	switch raw[0] {
	case '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case '[':
		var parts []contentPart
		if err := decode(raw, &parts, strict); err != nil {
			return "", err
		}
		var b strings.Builder
		for i, p := range parts {
			switch p.Type {
			case "text":
				if p.Text == nil {
					return "", fmt.Errorf("content part %d: text part without text", i)
				}
				b.WriteString(*p.Text)
			case "image_url", "video_url":
				u := p.ImageURL
				if p.Type == "video_url" {
					u = p.VideoURL
				}
				url, err := mediaURL(u, strict)
				if err != nil {
					return "", fmt.Errorf("content part %d: %s: %v", i, p.Type, err)
				}
				fmt.Fprintf(&b, "<%s:%s>", strings.TrimSuffix(p.Type, "_url"), url)
			default:
				return "", fmt.Errorf("content part %d: unknown type %q", i, p.Type)
			}
		}
		return b.String(), nil
	}
	return "", fmt.Errorf("content must be a string, an array of parts or null")
}

func mediaURL(raw json.RawMessage, strict bool) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", fmt.Errorf("missing")
	}
	var s string
	if raw[0] == '"' {
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var o struct {
		URL *string `json:"url"`
	}
	if err := decode(raw, &o, strict); err != nil || o.URL == nil {
		return "", fmt.Errorf("want a URL string or {\"url\": ...}")
	}
	return *o.URL, nil
}

// toolDef is the seed's FunctionTool (type, function: name, description,
// parameters, strict) or WebSearchTool (type only).
type toolDef struct {
	Type     string `json:"type"`
	Function *struct {
		Name        string          `json:"name"`
		Description *string         `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
		Strict      *bool           `json:"strict"`
	} `json:"function"`
}

// decode unmarshals raw into v; strict refuses keys v does not define, as
// the request's top level does (see parseRequest).
func decode(raw []byte, v any, strict bool) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if strict {
		dec.DisallowUnknownFields()
	}
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}

// validationError is a 400 answer.
type validationError struct {
	msg   string
	param string
}

func (e *validationError) Error() string { return e.msg }

func invalid(param, format string, args ...any) error {
	return &validationError{msg: fmt.Sprintf(format, args...), param: param}
}

var efforts = []string{"low", "high", "max", "medium", "xhigh", "minimal", "none"}

// parseRequest decodes and validates a request body as the seed's schema
// does. The error is a *validationError.
//
// Keys the seed does not define are refused at every level (the top level,
// messages, tool calls, content parts, tools[], tool_choice,
// response_format, prompt_cache_options) unless allowUnknown. That is
// stricter than the seed, whose objects do not say additionalProperties:
// false; it is kept because the client promises to send only what the seed
// lists (optional fields left out when unset, see assist/model), so an
// unknown key is a client bug, and OpenAI's own API refuses unknown
// arguments the same way. stream_options, which OpenAI defines and the seed
// does not, is accepted when usageWhenAsked.
func parseRequest(body []byte, models []string, allowUnknown, usageWhenAsked bool) (*ChatRequest, error) {
	strict := !allowUnknown
	var r ChatRequest
	if err := decode(body, &r, strict); err != nil {
		return nil, invalid("", "invalid request body: %v", err)
	}
	if len(r.StreamOptions) > 0 && strict && !usageWhenAsked {
		return nil, invalid("stream_options", `invalid request body: json: unknown field "stream_options"`)
	}
	if r.Model == "" {
		return nil, invalid("model", "model is required")
	}
	if !slices.Contains(models, r.Model) {
		return nil, invalid("model", "model %q is not supported; use one of %s", r.Model, strings.Join(models, ", "))
	}
	if len(r.Messages) == 0 {
		return nil, invalid("messages", "messages must contain at least 1 item")
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"max_completion_tokens", r.MaxCompletionTokens}, {"max_tokens", r.MaxTokens}} {
		if f.v != nil && (*f.v < 1 || *f.v > 1048576) {
			return nil, invalid(f.name, "%s must be between 1 and 1048576, got %d", f.name, *f.v)
		}
	}
	if r.MaxCompletionTokens != nil && r.MaxTokens != nil {
		// The seed only advises against it ("避免同时设置", avoid setting
		// both); refused here, as OpenAI does, because the two limits may
		// disagree and a client that sends both has lost track of one.
		return nil, invalid("max_tokens", "set max_completion_tokens or the deprecated max_tokens, not both")
	}
	if e := r.ReasoningEffort; e != nil {
		if !slices.Contains(efforts, *e) {
			return nil, invalid("reasoning_effort", "reasoning_effort %q is not one of %s", *e, strings.Join(efforts, ", "))
		}
		if r.Model == "kimi-k3" && *e != "max" {
			return nil, invalid("reasoning_effort", "kimi-k3 supports reasoning_effort max only")
		}
	}
	if err := validateTools(&r, strict); err != nil {
		return nil, err
	}
	if err := validateMessages(r.Messages, strict); err != nil {
		return nil, err
	}
	if o := r.PromptCacheOptions; o != nil {
		if o.Mode != nil && *o.Mode != "implicit" {
			return nil, invalid("prompt_cache_options.mode", "prompt_cache_options.mode must be implicit")
		}
		if o.TTL != nil && *o.TTL != "5m" && *o.TTL != "1h" {
			return nil, invalid("prompt_cache_options.ttl", "prompt_cache_options.ttl must be 5m or 1h, got %q", *o.TTL)
		}
	}
	if len(r.ResponseFormat) > 0 && string(r.ResponseFormat) != "null" {
		var f struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Name   string          `json:"name"`
				Strict *bool           `json:"strict"`
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if err := decode(r.ResponseFormat, &f, strict); err != nil {
			return nil, invalid("response_format", "response_format: %v", err)
		}
		switch f.Type {
		case "text", "json_object":
		case "json_schema":
			if f.JSONSchema == nil || f.JSONSchema.Name == "" || !isObject(f.JSONSchema.Schema) {
				return nil, invalid("response_format.json_schema", "response_format json_schema needs json_schema with a name and an object schema")
			}
		default:
			return nil, invalid("response_format.type", "response_format.type %q is not text, json_object or json_schema", f.Type)
		}
	}
	return &r, nil
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

func validateTools(r *ChatRequest, strict bool) error {
	if len(r.Tools) > 128 {
		return invalid("tools", "tools must contain at most 128 items, got %d", len(r.Tools))
	}
	var names []string
	for i, raw := range r.Tools {
		var t toolDef
		if err := decode(raw, &t, strict); err != nil {
			return invalid("tools", "tools[%d]: %v", i, err)
		}
		switch t.Type {
		case "function":
			if t.Function == nil || t.Function.Name == "" {
				return invalid("tools", "tools[%d]: function.name is required", i)
			}
			if !isObject(t.Function.Parameters) {
				return invalid("tools", "tools[%d]: function.parameters must be a JSON Schema object", i)
			}
			names = append(names, t.Function.Name)
		case "web_search":
			if t.Function != nil && strict {
				return invalid("tools", "tools[%d]: a web_search tool has only a type (seed: {\"type\":\"web_search\"})", i)
			}
		default:
			return invalid("tools", "tools[%d]: type %q is not function or web_search", i, t.Type)
		}
	}
	tc := bytes.TrimSpace(r.ToolChoice)
	if len(tc) == 0 || string(tc) == "null" {
		return nil
	}
	if tc[0] == '"' {
		var s string
		json.Unmarshal(tc, &s)
		if s != "auto" && s != "none" && s != "required" {
			return invalid("tool_choice", "tool_choice %q is not auto, none or required", s)
		}
		if s == "required" && len(r.Tools) == 0 {
			// Not in the seed, which only says tool_choice "controls
			// whether the model calls tools"; refused as OpenAI does,
			// since no reply could satisfy it.
			return invalid("tool_choice", "tool_choice required without tools")
		}
		return nil
	}
	var n struct {
		Type     string `json:"type"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if err := decode(tc, &n, strict); err != nil || n.Type != "function" || n.Function == nil {
		return invalid("tool_choice", "tool_choice must be auto, none, required or {\"type\":\"function\",\"function\":{\"name\":...}}")
	}
	if !slices.Contains(names, n.Function.Name) {
		return invalid("tool_choice", "tool_choice names function %q, which is not among the tools", n.Function.Name)
	}
	return nil
}

// validateMessages checks roles, contents and the tool-call protocol.
func validateMessages(msgs []Message, strict bool) error {
	var pending []string // calls of the last assistant message not yet answered
	for i := range msgs {
		m := &msgs[i]
		if _, err := readContent(m.Content, strict); err != nil {
			return invalid("messages", "messages[%d].content: %v", i, err)
		}
		isNull := len(bytes.TrimSpace(m.Content)) == 0 || string(bytes.TrimSpace(m.Content)) == "null"
		if m.Role != "tool" && len(pending) > 0 {
			return invalid("messages", "messages[%d]: tool_calls %s of the assistant message have no tool message answering them", i, strings.Join(pending, ", "))
		}
		switch m.Role {
		case "system", "user":
			// The seed allows null content only for the assistant:
			// "工具调用场景下 assistant content 可以为 null" (in tool-call
			// turns the assistant's content may be null).
			if isNull {
				return invalid("messages", "messages[%d]: %s message without content", i, m.Role)
			}
		case "assistant":
			if len(m.ToolCalls) > 0 {
				if m.ReasoningContent == nil || *m.ReasoningContent == "" {
					return invalid("messages", "messages[%d]: assistant message with tool_calls must carry its reasoning_content (send the assistant message back whole)", i)
				}
				for j, c := range m.ToolCalls {
					switch {
					case c.ID == "":
						return invalid("messages", "messages[%d].tool_calls[%d]: id is required", i, j)
					case c.Type != "function" && c.Type != "builtin_function":
						return invalid("messages", "messages[%d].tool_calls[%d]: type %q is not function or builtin_function", i, j, c.Type)
					case c.Function.Name == "":
						return invalid("messages", "messages[%d].tool_calls[%d]: function.name is required", i, j)
					case !json.Valid([]byte(c.Function.Arguments)):
						// Seed, ToolCall.function.arguments: "JSON 字符串形式的
						// 函数参数" (the arguments as a JSON string).
						return invalid("messages", "messages[%d].tool_calls[%d]: function.arguments is not valid JSON: %.60q", i, j, c.Function.Arguments)
					}
					if slices.Contains(pending, c.ID) {
						return invalid("messages", "messages[%d].tool_calls[%d]: duplicate id %q", i, j, c.ID)
					}
					pending = append(pending, c.ID)
				}
			} else if isNull {
				return invalid("messages", "messages[%d]: assistant message without content or tool_calls", i)
			}
		case "tool":
			if m.ToolCallID == nil || *m.ToolCallID == "" {
				return invalid("messages", "messages[%d]: tool message without tool_call_id", i)
			}
			k := slices.Index(pending, *m.ToolCallID)
			if k < 0 {
				return invalid("messages", "messages[%d]: tool_call_id %q answers no pending tool call", i, *m.ToolCallID)
			}
			pending = slices.Delete(pending, k, k+1)
		default:
			return invalid("messages", "messages[%d]: role %q is not system, user, assistant or tool", i, m.Role)
		}
	}
	if len(pending) > 0 {
		return invalid("messages", "tool_calls %s of the last assistant message have no tool message answering them", strings.Join(pending, ", "))
	}
	return nil
}
