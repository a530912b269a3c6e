package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Model names served by the default provider.
const (
	ModelPro       = "kimi-k3.1-pro"
	ModelHighspeed = "kimi-k3.1-pro-highspeed"
	ModelK3        = "kimi-k3"
)

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Reasoning efforts the provider recommends (it also accepts the OpenAI
// aliases medium, xhigh, minimal and none).
const (
	EffortLow  = "low"
	EffortHigh = "high"
	EffortMax  = "max"
)

// RequiredEffort returns the only reasoning effort a model accepts, if it
// accepts only one. The seed's quick-start (003) says of reasoning_effort:
// "kimi-k3 仅支持 max" (kimi-k3 supports max only); the K3.1 models take low,
// high and max. Callers force the effort for such a model (and say so).
func RequiredEffort(model string) (string, bool) {
	if model == ModelK3 {
		return EffortMax, true
	}
	return "", false
}

// Tool and tool-call types.
const (
	ToolTypeFunction     = "function"
	ToolTypeWebSearch    = "web_search"
	ToolCallTypeFunction = "function"
	ToolCallTypeBuiltin  = "builtin_function"
	// WebSearchName is the name of the provider's built-in web search
	// function in tool calls (seed: "内置 `$web_search` 为
	// `builtin_function`").
	WebSearchName = "$web_search"
)

// ContextWindow is the models' context window in tokens. The seed: "上下文
// 窗口为 1,048,576 tokens" (all three models), and max_completion_tokens is
// "同时受剩余上下文限制" (also limited by the context left): the prompt and
// max_completion_tokens together must fit in it.
const ContextWindow = 1048576

// MaxCompletionTokensMax is the largest max_completion_tokens the provider
// accepts (seed: "maximum: 1048576", the context window).
const MaxCompletionTokensMax = ContextWindow

const maxToolsPerRequest = 128

// emptyObjectSchema is the parameters schema of a function without arguments.
var emptyObjectSchema = json.RawMessage(`{"type":"object","properties":{}}`)

// Request is one chat-completions request. Field order is the order of the
// JSON keys on the wire; zero-valued optional fields are omitted.
type Request struct {
	// Model is the model name, e.g. ModelPro.
	Model string `json:"model"`
	// Messages is the conversation, oldest first. At least one.
	Messages []Message `json:"messages"`
	// ReasoningEffort is low, high or max ("" leaves it to the provider).
	ReasoningEffort string `json:"reasoning_effort,omitempty"`
	// MaxCompletionTokens bounds thinking plus answer (1..1048576; 0 omits it).
	MaxCompletionTokens int `json:"max_completion_tokens,omitempty"`
	// MaxTokens is the deprecated alias some older OpenAI-compatible servers
	// still need. Never set together with MaxCompletionTokens.
	MaxTokens int `json:"max_tokens,omitempty"`
	// Stream asks for an SSE reply. Client.Stream and Client.Complete set it.
	Stream bool `json:"stream,omitempty"`
	// StreamOptions is OpenAI's stream_options; the Kimi API does not define
	// it, so it is sent only when set (e.g. {IncludeUsage: true} for OpenAI).
	StreamOptions *StreamOptions `json:"stream_options,omitempty"`
	// Tools are function tools and the built-in web search (at most 128).
	Tools []Tool `json:"tools,omitempty"`
	// ToolChoice is auto, none, required or a named function; zero omits it.
	ToolChoice ToolChoice `json:"tool_choice,omitzero"`
	// PromptCache sets prompt_cache_options (implicit, ttl 5m or 1h).
	PromptCache *PromptCacheOptions `json:"prompt_cache_options,omitempty"`
	// ResponseFormat is text, json_object or json_schema.
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
}

// StreamOptions is OpenAI's stream_options object.
type StreamOptions struct {
	// IncludeUsage asks for a final usage-only chunk.
	IncludeUsage bool `json:"include_usage"`
}

// PromptCacheOptions is the provider's prompt_cache_options object.
type PromptCacheOptions struct {
	// Mode is "implicit" (the only mode the provider defines).
	Mode string `json:"mode"`
	// TTL is "5m" or "1h".
	TTL string `json:"ttl"`
}

// ImplicitCache returns prompt cache options for the given TTL ("5m" or "1h").
func ImplicitCache(ttl string) *PromptCacheOptions {
	return &PromptCacheOptions{Mode: "implicit", TTL: ttl}
}

// ResponseFormat selects plain text, a JSON object or JSON-Schema output.
type ResponseFormat struct {
	// Type is "text", "json_object" or "json_schema".
	Type string `json:"type"`
	// JSONSchema is required when Type is "json_schema".
	JSONSchema *JSONSchema `json:"json_schema,omitempty"`
}

// JSONSchema names a schema for structured output.
type JSONSchema struct {
	// Name identifies the schema.
	Name string `json:"name"`
	// Strict asks the provider to follow the schema strictly (its default is
	// true; nil omits the field).
	Strict *bool `json:"strict,omitempty"`
	// Schema is the JSON Schema, sent as the caller's bytes.
	Schema json.RawMessage `json:"schema"`
}

// Tool is a function tool or the built-in web search.
type Tool struct {
	// Type is ToolTypeFunction or ToolTypeWebSearch.
	Type string `json:"type"`
	// Function describes a function tool; nil for web search.
	Function *FunctionDef `json:"function,omitempty"`
}

// FunctionDef describes a function the model may call.
type FunctionDef struct {
	// Name is the function name.
	Name string `json:"name"`
	// Description helps the model decide when to call it.
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments, sent as the caller's
	// bytes (keep them byte-stable: they sit at the very start of the prompt).
	Parameters json.RawMessage `json:"parameters"`
	// Strict asks that arguments follow Parameters strictly.
	Strict bool `json:"strict,omitempty"`
}

// FunctionTool returns a function tool. Nil parameters stand for a
// function without arguments ({"type":"object","properties":{}}).
func FunctionTool(name, description string, parameters json.RawMessage) Tool {
	if parameters == nil {
		parameters = emptyObjectSchema
	}
	return Tool{Type: ToolTypeFunction, Function: &FunctionDef{Name: name, Description: description, Parameters: parameters}}
}

// WebSearchTool returns the provider's built-in web search tool, which is
// opt-in: add it to Request.Tools only when web search is wanted.
func WebSearchTool() Tool { return Tool{Type: ToolTypeWebSearch} }

// ToolChoice is "auto", "none", "required" or a named function. The zero
// value is omitted from the request.
type ToolChoice struct {
	// Mode is auto, none or required; ignored when Function is set.
	Mode string
	// Function forces a call of the named function.
	Function string
}

// Tool choices.
var (
	ToolChoiceAuto     = ToolChoice{Mode: "auto"}
	ToolChoiceNone     = ToolChoice{Mode: "none"}
	ToolChoiceRequired = ToolChoice{Mode: "required"}
)

// ToolChoiceFunction forces a call of the named function.
func ToolChoiceFunction(name string) ToolChoice { return ToolChoice{Function: name} }

// IsZero reports whether c is unset.
func (c ToolChoice) IsZero() bool { return c.Mode == "" && c.Function == "" }

type namedToolChoice struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// MarshalJSON writes a string or a named-function object.
func (c ToolChoice) MarshalJSON() ([]byte, error) {
	if c.Function != "" {
		var n namedToolChoice
		n.Type = "function"
		n.Function.Name = c.Function
		return marshal(n)
	}
	return marshal(c.Mode)
}

// UnmarshalJSON reads a string or a named-function object.
func (c *ToolChoice) UnmarshalJSON(b []byte) error {
	*c = ToolChoice{}
	if len(b) > 0 && b[0] == '"' {
		return json.Unmarshal(b, &c.Mode)
	}
	var n namedToolChoice
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	c.Function = n.Function.Name
	return nil
}

// Message is one message of a conversation.
type Message struct {
	// Role is system, user, assistant or tool.
	Role string
	// Content is the text. For an assistant message that only calls tools it
	// may be empty, and is then sent as null.
	Content string
	// Parts, when not nil, replaces Content with multimodal content parts.
	Parts []ContentPart
	// ReasoningContent is the assistant's thinking; send it back unchanged.
	ReasoningContent string
	// ToolCalls are the assistant's tool calls; send them back unchanged.
	ToolCalls []ToolCall
	// ToolCallID links a tool message to the call it answers.
	ToolCallID string
}

// ContentPart is one multimodal content part.
type ContentPart struct {
	// Type is "text", "image_url" or "video_url".
	Type string `json:"type"`
	// Text is set for text parts.
	Text string `json:"text,omitempty"`
	// ImageURL is set for image parts.
	ImageURL *MediaURL `json:"image_url,omitempty"`
	// VideoURL is set for video parts.
	VideoURL *MediaURL `json:"video_url,omitempty"`
}

// MediaURL is an image or video URL (often a base64 data URL).
type MediaURL struct {
	// URL is the address or data URL.
	URL string `json:"url"`
}

// ToolCall is one tool call made by the assistant.
type ToolCall struct {
	// ID links the tool message that answers it.
	ID string `json:"id"`
	// Type is "function", or "builtin_function" for the built-in $web_search.
	Type string `json:"type"`
	// Function is the called function and its JSON arguments.
	Function FunctionCall `json:"function"`
}

// FunctionCall is a function name and its arguments as a JSON string.
type FunctionCall struct {
	// Name is the function name.
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments.
	Arguments string `json:"arguments"`
}

// wireMessage is Message on the wire. Content is a string, an array of parts
// or null.
type wireMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall      `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
}

var jsonNull = json.RawMessage("null")

// wireCalls returns calls with invalid JSON arguments replaced by "{}" (a
// copy when one is replaced).
func wireCalls(calls []ToolCall) []ToolCall {
	copied := false
	for i, c := range calls {
		if !json.Valid([]byte(c.Function.Arguments)) {
			if !copied {
				calls, copied = slices.Clone(calls), true
			}
			calls[i].Function.Arguments = "{}"
		}
	}
	return calls
}

// MarshalJSON writes the message in the provider's form: content as a
// string, as an array when Parts is set, or null for an assistant message
// that only calls tools.
//
// The one change to what the model sent: a tool call whose arguments are
// not valid JSON (a call cut off by the output limit, a model's typo) goes
// on the wire with "{}", because the seed defines arguments as "JSON
// 字符串形式的函数参数" (the arguments as a JSON string) and a strict provider
// refuses anything else. The Message itself keeps the model's text, so the
// tool that runs the call can tell the model what was wrong with it.
func (m Message) MarshalJSON() ([]byte, error) {
	w := wireMessage{Role: m.Role, ReasoningContent: m.ReasoningContent, ToolCalls: wireCalls(m.ToolCalls), ToolCallID: m.ToolCallID}
	var err error
	switch {
	case m.Parts != nil:
		w.Content, err = marshal(m.Parts)
	case m.Content == "" && m.Role == RoleAssistant && len(m.ToolCalls) > 0:
		w.Content = jsonNull
	default:
		w.Content, err = marshal(m.Content)
	}
	if err != nil {
		return nil, err
	}
	return marshal(w)
}

// UnmarshalJSON reads a message whose content is a string, parts or null.
func (m *Message) UnmarshalJSON(b []byte) error {
	var w wireMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	*m = Message{Role: w.Role, ReasoningContent: w.ReasoningContent, ToolCalls: w.ToolCalls, ToolCallID: w.ToolCallID}
	c := bytes.TrimSpace(w.Content)
	switch {
	case len(c) == 0 || bytes.Equal(c, jsonNull):
	case c[0] == '"':
		return json.Unmarshal(c, &m.Content)
	case c[0] == '[':
		if err := json.Unmarshal(c, &m.Parts); err != nil {
			return err
		}
		for _, p := range m.Parts {
			m.Content += p.Text
		}
	default:
		return fmt.Errorf("message content: want a string, an array or null, got %.20s", c)
	}
	return nil
}

// SystemMessage returns a system message.
func SystemMessage(text string) Message { return Message{Role: RoleSystem, Content: text} }

// UserMessage returns a user message.
func UserMessage(text string) Message { return Message{Role: RoleUser, Content: text} }

// ToolMessage returns the tool message answering the call with id callID.
func ToolMessage(callID, content string) Message {
	return Message{Role: RoleTool, Content: content, ToolCallID: callID}
}

// AppendAssistant appends the assistant's reply to the conversation whole,
// with its reasoning_content and tool_calls, as the provider requires for the
// next turn.
func (r *Request) AppendAssistant(m Message) {
	m.Role = RoleAssistant
	r.Messages = append(r.Messages, m)
}

// IsBuiltin reports whether c is a call of the provider's built-in
// function: type builtin_function, or the name $web_search with no type
// (some streams leave the type out of the call's first piece).
func (c ToolCall) IsBuiltin() bool {
	return c.Type == ToolCallTypeBuiltin || (c.Type == "" || c.Type == ToolCallTypeFunction) && c.Function.Name == WebSearchName
}

// AppendToolResult appends one tool message answering the call with id
// callID.
func (r *Request) AppendToolResult(callID, content string) {
	r.Messages = append(r.Messages, ToolMessage(callID, content))
}

// AnswerBuiltinCalls appends, for each pending builtin_function call of
// the last assistant message (the provider's $web_search), the tool message
// the provider expects: the call's own arguments, under its tool_call_id.
// It returns how many it appended; function calls are left to the caller.
func (r *Request) AnswerBuiltinCalls() int {
	n := 0
	for _, c := range r.PendingToolCalls() {
		if c.IsBuiltin() {
			r.AppendToolResult(c.ID, c.Function.Arguments)
			n++
		}
	}
	return n
}

// PendingToolCalls returns the tool calls of the last assistant message that
// no later tool message answers yet, in call order.
func (r *Request) PendingToolCalls() []ToolCall {
	last := -1
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == RoleAssistant {
			last = i
			break
		}
	}
	if last < 0 {
		return nil
	}
	answered := make([]bool, len(r.Messages[last].ToolCalls))
	for _, m := range r.Messages[last+1:] {
		if m.Role != RoleTool {
			continue
		}
		for i, c := range r.Messages[last].ToolCalls {
			if c.ID == m.ToolCallID {
				answered[i] = true
			}
		}
	}
	var out []ToolCall
	for i, c := range r.Messages[last].ToolCalls {
		if !answered[i] {
			out = append(out, c)
		}
	}
	return out
}

// Validate checks what any OpenAI-compatible server would reject, before
// a request is sent. It does not restrict the model name.
func (r *Request) Validate() error {
	switch {
	case r.Model == "":
		return errors.New("request: model is empty")
	case len(r.Messages) == 0:
		return errors.New("request: no messages")
	case r.MaxCompletionTokens < 0 || r.MaxCompletionTokens > MaxCompletionTokensMax:
		return fmt.Errorf("request: max_completion_tokens %d out of range 1..%d", r.MaxCompletionTokens, MaxCompletionTokensMax)
	case r.MaxTokens < 0 || r.MaxTokens > MaxCompletionTokensMax:
		return fmt.Errorf("request: max_tokens %d out of range 1..%d", r.MaxTokens, MaxCompletionTokensMax)
	case r.MaxTokens > 0 && r.MaxCompletionTokens > 0:
		return errors.New("request: set max_completion_tokens or max_tokens, not both")
	case len(r.Tools) > maxToolsPerRequest:
		return fmt.Errorf("request: %d tools, at most %d", len(r.Tools), maxToolsPerRequest)
	}
	for i, m := range r.Messages {
		switch m.Role {
		case RoleSystem, RoleUser, RoleAssistant:
		case RoleTool:
			if m.ToolCallID == "" {
				return fmt.Errorf("request: message %d: tool message without tool_call_id", i)
			}
		default:
			return fmt.Errorf("request: message %d: unknown role %q", i, m.Role)
		}
	}
	for i, t := range r.Tools {
		switch t.Type {
		case ToolTypeFunction:
			if t.Function == nil || t.Function.Name == "" {
				return fmt.Errorf("request: tool %d: function tool without a name", i)
			}
			if len(t.Function.Parameters) == 0 {
				return fmt.Errorf("request: tool %q: no parameters schema (use FunctionTool)", t.Function.Name)
			}
			if !json.Valid(t.Function.Parameters) {
				return fmt.Errorf("request: tool %q: parameters are not valid JSON", t.Function.Name)
			}
		case ToolTypeWebSearch:
		default:
			return fmt.Errorf("request: tool %d: unknown type %q", i, t.Type)
		}
	}
	if f := r.ResponseFormat; f != nil && f.Type == "json_schema" {
		// The seed's json_schema object: "required: - name - schema", and
		// schema is "type: object".
		switch s := f.JSONSchema; {
		case s == nil || s.Name == "":
			return errors.New("request: response_format json_schema needs a named json_schema")
		case !isJSONObject(s.Schema):
			return fmt.Errorf("request: response_format json_schema %q needs a schema (a JSON object)", s.Name)
		}
	}
	return nil
}

// isJSONObject reports whether raw is a valid JSON object.
func isJSONObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{' && json.Valid(raw)
}

// Marshal returns the request's JSON body: deterministic (struct field
// order, no maps) and without HTML escaping.
func (r *Request) Marshal() ([]byte, error) {
	return marshal(r)
}

// marshal encodes v as compact JSON without HTML escaping, so code in
// prompts keeps its <, > and & (fewer bytes, same tokens for the provider).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return b[:len(b)-1], nil // drop Encode's newline
}
