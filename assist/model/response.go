package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// FinishReason says why the model stopped.
type FinishReason string

// Finish reasons.
const (
	FinishStop      FinishReason = "stop"       // the answer is complete
	FinishLength    FinishReason = "length"     // max_completion_tokens reached
	FinishToolCalls FinishReason = "tool_calls" // the model waits for tool results
)

// Known reports whether r is one of the finish reasons the seed's
// ChatCompletionResponse defines ("finish_reason: enum: stop, length,
// tool_calls"), or empty (a server that sends none).
func (r FinishReason) Known() bool {
	switch r {
	case "", FinishStop, FinishLength, FinishToolCalls:
		return true
	}
	return false
}

// CheckFinish tells whether a reply that ended with finish reason r is
// complete. It returns nil for stop, tool_calls and no reason; an error
// wrapping ErrCutOff for length (the reply reached maxCompletionTokens,
// which the error names with its value when it is above zero); and an
// error wrapping ErrFinishReason for a reason outside the seed's enum
// (content_filter…). A length reply without any answer is reported by the
// Stream itself, as ErrNoAnswer.
func CheckFinish(r FinishReason, maxCompletionTokens int) error {
	switch {
	case r == FinishLength && maxCompletionTokens > 0:
		return fmt.Errorf("%w: the model reached maxCompletionTokens (%d tokens, thinking included); raise maxCompletionTokens or lower reasoningEffort", ErrCutOff, maxCompletionTokens)
	case r == FinishLength:
		return fmt.Errorf("%w: the model reached its completion token limit; set maxCompletionTokens higher", ErrCutOff)
	case !r.Known():
		return fmt.Errorf("%w (finish_reason %q): the answer may be incomplete", ErrFinishReason, truncate(string(r), 40))
	}
	return nil
}

// Usage is the token accounting of one reply. The provider's nested
// prompt_tokens_details and completion_tokens_details are flattened.
type Usage struct {
	// PromptTokens counts all input: normal input, cache reads and writes.
	PromptTokens int
	// CompletionTokens counts output, thinking included.
	CompletionTokens int
	// TotalTokens is input plus output.
	TotalTokens int
	// CachedTokens are input tokens served from the prompt cache.
	CachedTokens int
	// CacheWriteTokens are input tokens written to the prompt cache.
	CacheWriteTokens int
	// ReasoningTokens are the thinking tokens inside CompletionTokens.
	ReasoningTokens int
}

// UncachedTokens returns the normal (neither read nor written) input tokens.
func (u Usage) UncachedTokens() int {
	return u.PromptTokens - u.CachedTokens - u.CacheWriteTokens
}

// Response is a complete reply (Client.Complete, or a Stream folded by an
// Accumulator).
type Response struct {
	// ID is the provider's completion id.
	ID string
	// Model is the model that answered.
	Model string
	// Created is the provider's Unix timestamp.
	Created int64
	// Message is the assistant message, ready to be sent back whole.
	Message Message
	// FinishReason says why the model stopped ("" if the provider said nothing).
	FinishReason FinishReason
	// Usage is the token accounting, nil when the provider sent none.
	Usage *Usage
}

// wireUsage is the provider's usage object. Some OpenAI-compatible servers
// (Moonshot's own API) report cached_tokens at the top level.
type wireUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	CachedTokens        int `json:"cached_tokens"`
	PromptTokensDetails *struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (w *wireUsage) usage() *Usage {
	if w == nil {
		return nil
	}
	u := &Usage{PromptTokens: w.PromptTokens, CompletionTokens: w.CompletionTokens, TotalTokens: w.TotalTokens, CachedTokens: w.CachedTokens}
	if d := w.PromptTokensDetails; d != nil {
		if d.CachedTokens != 0 {
			u.CachedTokens = d.CachedTokens
		}
		u.CacheWriteTokens = d.CacheWriteTokens
	}
	if d := w.CompletionTokensDetails; d != nil {
		u.ReasoningTokens = d.ReasoningTokens
	}
	if u.TotalTokens == 0 {
		u.TotalTokens = u.PromptTokens + u.CompletionTokens
	}
	return u
}

// wireToolCallDelta is a piece of a tool call in a stream chunk (or a whole
// call in a JSON reply).
type wireToolCallDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// wireDelta is the delta (stream) or message (JSON) of a choice.
type wireDelta struct {
	Role             string              `json:"role"`
	Content          wireContent         `json:"content"`
	ReasoningContent string              `json:"reasoning_content"`
	Reasoning        string              `json:"reasoning"` // vLLM, Ollama, OpenRouter spelling
	ToolCalls        []wireToolCallDelta `json:"tool_calls"`
}

type wireChoice struct {
	Index        int        `json:"index"`
	Delta        *wireDelta `json:"delta"`
	Message      *wireDelta `json:"message"`
	FinishReason *string    `json:"finish_reason"`
	Usage        *wireUsage `json:"usage"` // Moonshot puts usage inside the choice
}

// wireChunk is a stream chunk or a whole JSON reply.
type wireChunk struct {
	ID      string       `json:"id"`
	Model   string       `json:"model"`
	Created int64        `json:"created"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Error   *wireError   `json:"error"`
}

// wireError is the provider's error object.
type wireError struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"` // string, number or null
}

type wireErrorBody struct {
	Error *wireError `json:"error"`
}

// wireContent is a content value: a string, null or an array of parts
// (their text joined).
type wireContent string

// UnmarshalJSON decodes the value; a plain string without escapes (most
// stream pieces) is taken as it is, without a second decoding pass.
func (c *wireContent) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case len(b) == 0 || string(b) == "null":
		*c = ""
		return nil
	case len(b) >= 2 && b[0] == '"' && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b):
		*c = wireContent(b[1 : len(b)-1])
		return nil
	case b[0] == '"':
		return json.Unmarshal(b, (*string)(c))
	case b[0] == '[':
		var parts []ContentPart
		if err := json.Unmarshal(b, &parts); err != nil {
			return fmt.Errorf("%w: content parts: %v", ErrMalformed, err)
		}
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		*c = wireContent(sb.String())
		return nil
	}
	return fmt.Errorf("%w: content is neither text nor parts: %.20s", ErrMalformed, b)
}

// truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
