package modeltest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Script scripts the stand-in's replies; see the package doc for the JSON
// format.
type Script struct {
	// Rules are tried in order; the first that matches and has uses left
	// answers.
	Rules []Rule `json:"rules"`
	// Default answers when no rule matches (nil: the reply "OK").
	Default *Rule `json:"default,omitempty"`
}

// Rule is one scripted reply with the conditions under which it is used.
type Rule struct {
	// Match is a substring of the last user message's text.
	Match string `json:"match,omitempty"`
	// MatchPrompt is a substring of the rendered prompt (see Render).
	MatchPrompt string `json:"match_prompt,omitempty"`
	// LastRole is the role the last message must have.
	LastRole string `json:"last_role,omitempty"`
	// Model is the model the request must name.
	Model string `json:"model,omitempty"`
	// Times bounds how many requests the rule answers (0: no bound).
	Times int `json:"times,omitempty"`

	// Reasoning and Content are the reply's texts.
	Reasoning string `json:"reasoning,omitempty"`
	Content   string `json:"content,omitempty"`
	// ToolCalls are the reply's tool calls.
	ToolCalls []ScriptToolCall `json:"tool_calls,omitempty"`
	// FinishReason overrides the finish reason: stop, length, tool_calls,
	// or a value outside the seed's enum (content_filter…) to test a
	// client against it.
	FinishReason string `json:"finish_reason,omitempty"`
	// Chunks is how many pieces each text is streamed in (default 4).
	Chunks int `json:"chunks,omitempty"`
	// IntervalMS is the pause before each chunk, in milliseconds.
	IntervalMS int `json:"interval_ms,omitempty"`
	// DelayMS is the pause before the reply starts, in milliseconds.
	DelayMS int `json:"delay_ms,omitempty"`
	// Usage places the usage in a stream: final (default), separate, none.
	Usage string `json:"usage,omitempty"`
	// CRLF ends SSE lines with CRLF instead of LF.
	CRLF bool `json:"crlf,omitempty"`
	// KeepAlive sends a comment line before each chunk.
	KeepAlive bool `json:"keepalive,omitempty"`
	// NullContent sends "content": null in every delta without answer
	// text (the role chunk, reasoning and tool-call pieces, the finish
	// chunk), as many OpenAI-compatible servers do.
	NullContent bool `json:"null_content,omitempty"`
	// Interleave streams several tool calls at once: one chunk announces
	// every call, then each chunk carries the next argument piece of every
	// call.
	Interleave bool `json:"interleave,omitempty"`
	// ContentInFinish sends the last content piece in the finish chunk,
	// beside finish_reason.
	ContentInFinish bool `json:"content_in_finish,omitempty"`

	// Fault injects a failure: a status code ("429", "500"…), or hangup,
	// cut, reset, stall, no_done.
	Fault string `json:"fault,omitempty"`
	// FaultAfter is how many SSE chunks go out before cut, reset, stall or
	// no_done.
	FaultAfter int `json:"fault_after,omitempty"`
	// RetryAfter is the Retry-After header sent with a status fault.
	RetryAfter string `json:"retry_after,omitempty"`
	// Message is the error message of a status fault.
	Message string `json:"message,omitempty"`
}

// ScriptToolCall is a scripted tool call.
type ScriptToolCall struct {
	// ID defaults to call_<n>.
	ID string `json:"id,omitempty"`
	// Type defaults to "function" ("builtin_function" for $web_search).
	Type string `json:"type,omitempty"`
	// OmitType leaves "type" out of the streamed call, as some streams do.
	OmitType bool `json:"omit_type,omitempty"`
	// Name is the function name.
	Name string `json:"name"`
	// Arguments is the JSON text of the arguments.
	Arguments string `json:"arguments"`
}

var faults = map[string]bool{"hangup": true, "cut": true, "reset": true, "stall": true, "no_done": true}

// ParseScript reads a JSON script and checks it.
func ParseScript(b []byte) (*Script, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("script: %w", err)
	}
	if err := s.Check(); err != nil {
		return nil, err
	}
	return &s, nil
}

// LoadScript reads a JSON script file.
func LoadScript(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseScript(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// Check reports the first rule with a field value the stand-in cannot use.
func (s *Script) Check() error {
	check := func(name string, r *Rule) error {
		if r.Fault != "" && !faults[r.Fault] {
			if n, err := strconv.Atoi(r.Fault); err != nil || n < 400 || n > 599 {
				return fmt.Errorf("script: %s: fault %q is not a 4xx/5xx status, hangup, cut, reset, stall or no_done", name, r.Fault)
			}
		}
		switch r.Usage {
		case "", "final", "separate", "none":
		default:
			return fmt.Errorf("script: %s: usage %q is not final, separate or none", name, r.Usage)
		}
		if !isWord(r.FinishReason) {
			return fmt.Errorf("script: %s: finish_reason %q is not a lower-case word such as stop, length, tool_calls or content_filter", name, r.FinishReason)
		}
		if r.Chunks < 0 || r.IntervalMS < 0 || r.DelayMS < 0 || r.Times < 0 || r.FaultAfter < 0 {
			return fmt.Errorf("script: %s: negative count or duration", name)
		}
		for i, c := range r.ToolCalls {
			if c.Name == "" {
				return fmt.Errorf("script: %s: tool_calls[%d] has no name", name, i)
			}
		}
		return nil
	}
	for i := range s.Rules {
		if err := check(fmt.Sprintf("rules[%d]", i), &s.Rules[i]); err != nil {
			return err
		}
	}
	if s.Default != nil {
		return check("default", s.Default)
	}
	return nil
}

// isWord reports whether s is empty or a lower-case snake_case word.
func isWord(s string) bool {
	for _, r := range s {
		if (r < 'a' || r > 'z') && r != '_' {
			return false
		}
	}
	return true
}

// matches reports whether r applies to the request.
func (r *Rule) matches(req *ChatRequest, prompt []byte) bool {
	if r.Model != "" && r.Model != req.Model {
		return false
	}
	last := &req.Messages[len(req.Messages)-1]
	if r.LastRole != "" && r.LastRole != last.Role {
		return false
	}
	if r.Match != "" {
		user := ""
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if req.Messages[i].Role == "user" {
				user = req.Messages[i].Text()
				break
			}
		}
		if !strings.Contains(user, r.Match) {
			return false
		}
	}
	if r.MatchPrompt != "" && !bytes.Contains(prompt, []byte(r.MatchPrompt)) {
		return false
	}
	return true
}
