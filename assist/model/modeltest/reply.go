package modeltest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

type usageJSON struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u Usage) json() *usageJSON {
	j := &usageJSON{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, TotalTokens: u.PromptTokens + u.CompletionTokens}
	j.PromptTokensDetails.CachedTokens = u.CachedTokens
	j.PromptTokensDetails.CacheWriteTokens = u.CacheWriteTokens
	j.CompletionTokensDetails.ReasoningTokens = u.ReasoningTokens
	return j
}

type fnJSON struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type toolCallJSON struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function fnJSON `json:"function"`
}

type deltaJSON struct {
	Role string `json:"role,omitempty"`
	// Content is a JSON string, null, or nil (left out).
	Content          json.RawMessage `json:"content,omitempty"`
	ReasoningContent string          `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallJSON  `json:"tool_calls,omitempty"`
}

type chunkChoiceJSON struct {
	Index        int       `json:"index"`
	Delta        deltaJSON `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type chunkJSON struct {
	ID      string            `json:"id"`
	Object  string            `json:"object"`
	Created int64             `json:"created"`
	Model   string            `json:"model"`
	Choices []chunkChoiceJSON `json:"choices"`
	Usage   *usageJSON        `json:"usage,omitempty"`
}

type messageJSON struct {
	Role             string         `json:"role"`
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content,omitempty"`
	ToolCalls        []toolCallJSON `json:"tool_calls,omitempty"`
}

type completionJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index        int         `json:"index"`
		Message      messageJSON `json:"message"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
}

// toolCalls returns the rule's calls with ids and types filled in.
func (r *Rule) toolCalls() []ScriptToolCall {
	out := make([]ScriptToolCall, len(r.ToolCalls))
	for i, c := range r.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d", i)
		}
		if c.Type == "" {
			c.Type = "function"
		}
		out[i] = c
	}
	return out
}

func (r *Rule) finishReason() string {
	switch {
	case r.FinishReason != "":
		return r.FinishReason
	case len(r.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (r *Rule) chunks() int {
	if r.Chunks <= 0 {
		return 4
	}
	return r.Chunks
}

// split cuts s into n pieces of about equal rune counts (fewer if s is
// short); none for an empty s. Pieces never split a UTF-8 sequence.
func split(s string, n int) []string {
	if s == "" {
		return nil
	}
	runes := utf8.RuneCountInString(s)
	if n > runes {
		n = runes
	}
	out := make([]string, 0, n)
	start, seen := 0, 0
	for i := 1; i <= n; i++ {
		end := runes * i / n
		j := start
		for seen < end {
			_, size := utf8.DecodeRuneInString(s[j:])
			j += size
			seen++
		}
		out = append(out, s[start:j])
		start = j
	}
	return out
}

func (s *Server) completionID(rec *Request) string {
	return fmt.Sprintf("chatcmpl-modeltest-%06d", rec.Seq)
}

func jsonString(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

var jsonNull = json.RawMessage("null")

// sseFrames returns the data of each SSE event of the rule's reply.
func (s *Server) sseFrames(rec *Request, req *ChatRequest, rule *Rule) [][]byte {
	base := chunkJSON{ID: s.completionID(rec), Object: "chat.completion.chunk", Created: rec.Time.Unix(), Model: req.Model}
	var frames [][]byte
	add := func(d deltaJSON, finish *string, u *usageJSON, noChoices bool) {
		c := base
		if !noChoices {
			if d.Content == nil && rule.NullContent {
				d.Content = jsonNull // as many OpenAI-compatible servers stream
			}
			c.Choices = []chunkChoiceJSON{{Index: 0, Delta: d, FinishReason: finish}}
		} else {
			c.Choices = []chunkChoiceJSON{}
		}
		c.Usage = u
		b, _ := json.Marshal(c)
		frames = append(frames, b)
	}
	role := deltaJSON{Role: "assistant", Content: jsonString("")}
	if rule.NullContent {
		role.Content = jsonNull
	}
	add(role, nil, nil, false)
	n := rule.chunks()
	for _, p := range split(rule.Reasoning, n) {
		add(deltaJSON{ReasoningContent: p}, nil, nil, false)
	}
	content := split(rule.Content, n)
	var last deltaJSON // the finish chunk's delta
	if rule.ContentInFinish && len(content) > 0 {
		last.Content = jsonString(content[len(content)-1])
		content = content[:len(content)-1]
	}
	for _, p := range content {
		add(deltaJSON{Content: jsonString(p)}, nil, nil, false)
	}
	calls := rule.toolCalls()
	head := func(i int, c ScriptToolCall) toolCallJSON {
		idx := i
		t := toolCallJSON{Index: &idx, ID: c.ID, Type: c.Type, Function: fnJSON{Name: c.Name}}
		if c.OmitType {
			t.Type = ""
		}
		return t
	}
	piece := func(i int, args string) toolCallJSON {
		idx := i
		return toolCallJSON{Index: &idx, Function: fnJSON{Arguments: args}}
	}
	if rule.Interleave && len(calls) > 0 {
		// Every call announced in one chunk, then one chunk per round
		// carrying the next argument piece of each call still going.
		var heads []toolCallJSON
		pieces := make([][]string, len(calls))
		for i, c := range calls {
			heads = append(heads, head(i, c))
			pieces[i] = split(c.Arguments, n)
		}
		add(deltaJSON{ToolCalls: heads}, nil, nil, false)
		for k := 0; ; k++ {
			var round []toolCallJSON
			for i := range calls {
				if k < len(pieces[i]) {
					round = append(round, piece(i, pieces[i][k]))
				}
			}
			if len(round) == 0 {
				break
			}
			add(deltaJSON{ToolCalls: round}, nil, nil, false)
		}
	} else {
		for i, c := range calls {
			add(deltaJSON{ToolCalls: []toolCallJSON{head(i, c)}}, nil, nil, false)
			for _, p := range split(c.Arguments, n) {
				add(deltaJSON{ToolCalls: []toolCallJSON{piece(i, p)}}, nil, nil, false)
			}
		}
	}
	finish := rule.finishReason()
	u := rec.Usage.json()
	place := rule.Usage
	if s.cfg.UsageWhenAsked && !req.includeUsage() {
		place = "none"
	}
	switch place {
	case "", "final":
		add(last, &finish, u, false)
	case "separate":
		add(last, &finish, nil, false)
		add(deltaJSON{}, nil, u, true)
	case "none":
		add(last, &finish, nil, false)
	}
	return append(frames, []byte("[DONE]"))
}

// writeSSE streams the reply, paced, with the rule's fault.
func (s *Server) writeSSE(w http.ResponseWriter, r *http.Request, rec *Request, req *ChatRequest, rule *Rule) {
	frames := s.sseFrames(rec, req, rule)
	nl := "\n"
	if rule.CRLF {
		nl = "\r\n"
	}
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rec.Status = http.StatusOK
	if err := rc.Flush(); err != nil {
		rec.HungUp = true
		return
	}
	interval := time.Duration(rule.IntervalMS) * time.Millisecond
	faultAt := min(rule.FaultAfter, len(frames)-1) // at the latest, instead of [DONE]
	for i, f := range frames {
		if i == faultAt && rule.Fault != "" {
			s.sseFault(w, rc, r, rec, rule, f)
			return
		}
		if i > 0 && !sleepCtx(r.Context(), s.closing, interval) {
			rec.HungUp = r.Context().Err() != nil
			return
		}
		if i == len(frames)-1 && rec.endOpen != nil {
			rec.endOpen()
		}
		var b strings.Builder
		if rule.KeepAlive {
			b.WriteString(": keep-alive" + nl)
		}
		b.WriteString("data: ")
		b.Write(f)
		b.WriteString(nl + nl)
		if _, err := io.WriteString(w, b.String()); err != nil {
			rec.HungUp = true
			return
		}
		if err := rc.Flush(); err != nil {
			rec.HungUp = true
			return
		}
		rec.Chunks++
	}
}

// sseFault injects cut, reset, stall or no_done where frame f would go.
func (s *Server) sseFault(w http.ResponseWriter, rc *http.ResponseController, r *http.Request, rec *Request, rule *Rule, f []byte) {
	switch rule.Fault {
	case "cut", "reset":
		half := "data: " + string(f[:len(f)/2])
		io.WriteString(w, half)
		rc.Flush()
		if rule.Fault == "reset" {
			panic(http.ErrAbortHandler)
		}
	case "stall":
		select {
		case <-r.Context().Done():
			rec.HungUp = true
		case <-s.closing:
		}
	case "no_done":
	}
}

// writeJSON answers the whole reply as one JSON object.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, rec *Request, req *ChatRequest, rule *Rule) {
	var c completionJSON
	c.ID, c.Object, c.Created, c.Model = s.completionID(rec), "chat.completion", rec.Time.Unix(), req.Model
	c.Choices = make([]struct {
		Index        int         `json:"index"`
		Message      messageJSON `json:"message"`
		FinishReason string      `json:"finish_reason"`
	}, 1)
	m := &c.Choices[0].Message
	m.Role = "assistant"
	m.ReasoningContent = rule.Reasoning
	if rule.Content != "" || len(rule.ToolCalls) == 0 {
		content := rule.Content
		m.Content = &content
	}
	for _, tc := range rule.toolCalls() {
		t := toolCallJSON{ID: tc.ID, Type: tc.Type, Function: fnJSON{Name: tc.Name, Arguments: tc.Arguments}}
		if tc.OmitType {
			t.Type = ""
		}
		m.ToolCalls = append(m.ToolCalls, t)
	}
	c.Choices[0].FinishReason = rule.finishReason()
	if rule.Usage != "none" {
		c.Usage = rec.Usage.json()
	}
	b, _ := json.Marshal(c)
	w.Header().Set("Content-Type", "application/json")
	rc := http.NewResponseController(w)
	switch rule.Fault {
	case "stall":
		w.WriteHeader(http.StatusOK)
		rec.Status = http.StatusOK
		rc.Flush()
		select {
		case <-r.Context().Done():
			rec.HungUp = true
		case <-s.closing:
		}
		return
	case "cut", "reset", "no_done":
		w.WriteHeader(http.StatusOK)
		rec.Status = http.StatusOK
		w.Write(b[:len(b)/2])
		rc.Flush()
		if rule.Fault == "reset" {
			panic(http.ErrAbortHandler)
		}
		return
	}
	w.Header().Set("Content-Length", fmt.Sprint(len(b)))
	w.WriteHeader(http.StatusOK)
	rec.Status = http.StatusOK
	if _, err := w.Write(b); err != nil {
		rec.HungUp = true
	}
}
