package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"
)

// EventKind is the kind of a stream Event.
type EventKind int

// Event kinds, in the order they usually arrive.
const (
	// EventReasoning carries a piece of the model's thinking in Text.
	EventReasoning EventKind = iota + 1
	// EventContent carries a piece of the answer text in Text.
	EventContent
	// EventToolCallDelta carries a piece of a tool call in ToolCallDelta
	// (for progress display; the complete call follows as EventToolCall).
	EventToolCallDelta
	// EventToolCall carries one complete tool call in ToolCall. Complete
	// calls are delivered, in index order, once the model finished the turn.
	EventToolCall
	// EventUsage carries the token accounting in Usage, whenever it arrives.
	EventUsage
	// EventDone ends the stream: FinishReason and, if sent, Usage.
	EventDone
)

var eventKindNames = [...]string{"", "reasoning", "content", "tool_call_delta", "tool_call", "usage", "done"}

// String returns the kind's name.
func (k EventKind) String() string {
	if k > 0 && int(k) < len(eventKindNames) {
		return eventKindNames[k]
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one typed piece of a streamed reply.
type Event struct {
	// Kind says which fields are set.
	Kind EventKind
	// Text is the reasoning or content piece.
	Text string
	// ToolCallDelta is the tool-call piece (EventToolCallDelta).
	ToolCallDelta *ToolCallDelta
	// ToolCall is the complete call (EventToolCall).
	ToolCall *ToolCall
	// Usage is set for EventUsage and, when known, EventDone.
	Usage *Usage
	// FinishReason is set for EventDone.
	FinishReason FinishReason
}

// ToolCallDelta is a piece of a streamed tool call.
type ToolCallDelta struct {
	// Index is the call's position in the turn.
	Index int
	// ID, Type and Name are set on the first piece of a call.
	ID, Type, Name string
	// Arguments is the next piece of the JSON arguments.
	Arguments string
}

// Stream is a reply being read from the provider. Next reads the body
// synchronously: nothing is read before the caller asks for it. A Stream is
// not safe for concurrent use, except Close, which may be called from any
// goroutine to stop it. Always Close a stream.
type Stream struct {
	body    io.ReadCloser
	closeFn func() // cancels the request context; set by the client
	sse     *sseReader
	json    bool // the body is a whole JSON reply, not SSE

	pending   []Event // events decoded from one chunk; pending[head:] not yet returned
	head      int
	calls     []ToolCall
	callsDone bool // complete calls were queued
	finish    FinishReason
	usage     *Usage
	text      int // bytes of answer content seen
	done      bool
	err       error

	// ID, Model and Created come from the first chunk.
	id, model string
	created   int64

	wrapErr func(error) error // maps transport errors (timeouts, key redaction)
	// notAPI is the error of a body that ends before any event when the
	// reply was not labelled an event stream; sawData is set by the first
	// data line.
	notAPI  *NotAPIError
	sawData bool
}

// newStream returns a stream reading body, SSE unless isJSON.
func newStream(body io.ReadCloser, isJSON bool) *Stream {
	s := &Stream{body: body, json: isJSON, wrapErr: func(err error) error { return err }}
	if !isJSON {
		s.sse = newSSEReader(body)
	}
	return s
}

// ID returns the provider's completion id, once the first chunk was read.
func (s *Stream) ID() string { return s.id }

// Model returns the model that answers, once the first chunk was read.
func (s *Stream) Model() string { return s.model }

// Next returns the next event. After EventDone it returns io.EOF — or, when
// the reply stopped at the length limit with neither answer text nor a tool
// call, an error wrapping ErrNoAnswer. A stream that ends without [DONE] and
// without a finish reason, or inside a frame, returns an error wrapping
// ErrTruncated. Errors are sticky.
func (s *Stream) Next() (Event, error) {
	for s.head == len(s.pending) {
		s.pending, s.head = s.pending[:0], 0
		if s.err != nil {
			return Event{}, s.err
		}
		if s.done {
			s.err = io.EOF
			if s.finish == FinishLength && s.text == 0 && len(s.calls) == 0 {
				s.err = s.noAnswer()
			}
			s.finishBody()
			return Event{}, s.err
		}
		if err := s.read(); err != nil {
			s.err = s.wrapErr(err)
			s.Close()
			return Event{}, s.err
		}
	}
	ev := s.pending[s.head]
	s.pending[s.head] = Event{} // drop references held by the queue
	s.head++
	return ev, nil
}

// Events returns an iterator over the events; it yields a final non-nil
// error unless the stream ended normally (io.EOF is not yielded). Breaking
// out of the loop does not close the stream.
func (s *Stream) Events() iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for {
			ev, err := s.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				yield(Event{}, err)
				return
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}

// Close stops the stream: the HTTP body is closed and the request context
// cancelled, so the provider sees the connection go. Safe to call more than
// once and from another goroutine.
func (s *Stream) Close() error {
	if s.closeFn != nil {
		s.closeFn()
	}
	return s.body.Close()
}

// finishBody drains what is left of a finished body (the end of the chunked
// encoding, usually already buffered) so the connection can be reused, then
// closes it. A server that keeps the body open after [DONE] costs at most
// drainWait.
func (s *Stream) finishBody() {
	t := time.AfterFunc(drainWait, func() { s.body.Close() })
	io.CopyN(io.Discard, s.body, 4<<10)
	t.Stop()
	s.Close()
}

const drainWait = 100 * time.Millisecond

// read decodes the next chunk into s.pending, or sets s.done.
func (s *Stream) read() error {
	if s.json {
		return s.readJSON()
	}
	ev, err := s.sse.next()
	if err == io.EOF {
		if s.finish != "" {
			// No [DONE], but the model said it finished: a complete reply
			// from a server that does not send [DONE].
			s.end()
			return nil
		}
		if !s.sawData && s.notAPI != nil {
			return s.notAPI
		}
		return fmt.Errorf("%w: the stream ended without [DONE] or a finish reason", ErrTruncated)
	}
	if err != nil {
		return err
	}
	s.sawData = true
	data := bytes.TrimSpace(ev.Data)
	if string(data) == "[DONE]" {
		s.end()
		return nil
	}
	if len(data) == 0 {
		return nil
	}
	var c wireChunk
	if err := json.Unmarshal(data, &c); err != nil {
		return fmt.Errorf("%w: chunk is not JSON (%v): %.120q", ErrMalformed, err, data)
	}
	if ev.Type == "error" && c.Error == nil {
		return &APIError{Message: strings.TrimSpace(string(data))}
	}
	return s.chunk(&c, false)
}

// readJSON reads a whole JSON reply and turns it into events.
func (s *Stream) readJSON() error {
	b, err := io.ReadAll(io.LimitReader(s.body, 64<<20))
	if err != nil {
		return err
	}
	var c wireChunk
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("%w: reply is not JSON (%v): %.120q", ErrMalformed, err, b)
	}
	if err := s.chunk(&c, true); err != nil {
		return err
	}
	if s.finish == "" && len(c.Choices) == 0 {
		return fmt.Errorf("%w: reply has no choices", ErrMalformed)
	}
	s.end()
	return nil
}

// chunk turns one decoded chunk (or whole reply) into pending events.
func (s *Stream) chunk(c *wireChunk, whole bool) error {
	if c.Error != nil {
		return apiErrorFromWire(0, c.Error)
	}
	if s.id == "" {
		s.id, s.model, s.created = c.ID, c.Model, c.Created
	}
	usage := c.Usage
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue // we ask for one choice; ignore extras
		}
		if usage == nil {
			usage = ch.Usage
		}
		d := ch.Delta
		if d == nil || whole && ch.Message != nil {
			d = ch.Message
		}
		if d != nil {
			if err := s.delta(d, whole); err != nil {
				return err
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			s.finish = FinishReason(*ch.FinishReason)
			s.completeCalls()
		}
	}
	if usage != nil {
		s.usage = usage.usage()
		u := *s.usage
		s.pending = append(s.pending, Event{Kind: EventUsage, Usage: &u})
	}
	return nil
}

func (s *Stream) delta(d *wireDelta, whole bool) error {
	if r := d.ReasoningContent; r != "" {
		s.pending = append(s.pending, Event{Kind: EventReasoning, Text: r})
	} else if r := d.Reasoning; r != "" {
		s.pending = append(s.pending, Event{Kind: EventReasoning, Text: r})
	}
	if t := string(d.Content); t != "" {
		s.text += len(t)
		s.pending = append(s.pending, Event{Kind: EventContent, Text: t})
	}
	for i, p := range d.ToolCalls {
		idx := i
		switch {
		case p.Index != nil:
			idx = *p.Index
		case !whole:
			// No index (some local servers): a piece with a new id starts a
			// call, any other continues the last one.
			idx = len(s.calls) - 1
			if idx < 0 || p.ID != "" && p.ID != s.calls[idx].ID {
				idx++
			}
		}
		if idx < 0 || idx >= maxToolsPerRequest*8 {
			return fmt.Errorf("%w: tool call index %d", ErrMalformed, idx)
		}
		if s.finish != "" && !whole {
			return fmt.Errorf("%w: tool call piece after the finish reason", ErrMalformed)
		}
		for len(s.calls) <= idx {
			s.calls = append(s.calls, ToolCall{})
		}
		tc := &s.calls[idx]
		if p.ID != "" {
			tc.ID = p.ID
		}
		if p.Type != "" {
			tc.Type = p.Type
		}
		if n := p.Function.Name; n != "" && n != tc.Function.Name {
			tc.Function.Name += n // servers that repeat the name in every piece keep it once
		}
		tc.Function.Arguments += p.Function.Arguments
		if !whole {
			s.pending = append(s.pending, Event{Kind: EventToolCallDelta, ToolCallDelta: &ToolCallDelta{
				Index: idx, ID: p.ID, Type: p.Type, Name: p.Function.Name, Arguments: p.Function.Arguments,
			}})
		}
	}
	if whole {
		s.completeCalls()
	}
	return nil
}

// completeCalls emits the assembled tool calls, in index order, once.
func (s *Stream) completeCalls() {
	if s.callsDone {
		return
	}
	s.callsDone = true
	for i := range s.calls {
		tc := &s.calls[i]
		if tc.Function.Name == "" && tc.Function.Arguments == "" && tc.ID == "" {
			continue // an index the provider skipped
		}
		if tc.ID == "" {
			tc.ID = "call_" + strconv.Itoa(i) // some local servers send none
		}
		if tc.Type == "" {
			// A call streamed without its type: the provider's built-in
			// search is known by its name (seed: "内置 `$web_search` 为
			// `builtin_function`"), everything else is a client function.
			tc.Type = ToolCallTypeFunction
			if tc.Function.Name == WebSearchName {
				tc.Type = ToolCallTypeBuiltin
			}
		}
		c := *tc
		s.pending = append(s.pending, Event{Kind: EventToolCall, ToolCall: &c})
	}
}

// noAnswer describes a reply cut by the length limit before any answer.
func (s *Stream) noAnswer() error {
	if s.usage != nil {
		return fmt.Errorf("%w (finish_reason length after %d completion tokens, %d of them thinking)", ErrNoAnswer, s.usage.CompletionTokens, s.usage.ReasoningTokens)
	}
	return fmt.Errorf("%w (finish_reason length)", ErrNoAnswer)
}

// end queues EventDone.
func (s *Stream) end() {
	s.done = true
	ev := Event{Kind: EventDone, FinishReason: s.finish}
	if s.usage != nil {
		u := *s.usage
		ev.Usage = &u
	}
	s.pending = append(s.pending, ev)
}

func apiErrorFromWire(status int, w *wireError) *APIError {
	e := &APIError{StatusCode: status, Message: w.Message, Type: w.Type}
	code := bytes.TrimSpace(w.Code)
	if len(code) > 0 && string(code) != "null" {
		var s string
		if json.Unmarshal(code, &s) == nil {
			e.Code = s
		} else {
			e.Code = string(code)
		}
	}
	return e
}

// Accumulator folds stream events into the final reply. The zero value is
// ready to use.
type Accumulator struct {
	reasoning, content strings.Builder
	calls              []ToolCall
	finish             FinishReason
	usage              *Usage
}

// Add folds one event in.
func (a *Accumulator) Add(ev Event) {
	switch ev.Kind {
	case EventReasoning:
		a.reasoning.WriteString(ev.Text)
	case EventContent:
		a.content.WriteString(ev.Text)
	case EventToolCall:
		a.calls = append(a.calls, *ev.ToolCall)
	case EventUsage:
		u := *ev.Usage
		a.usage = &u
	case EventDone:
		a.finish = ev.FinishReason
		if ev.Usage != nil {
			u := *ev.Usage
			a.usage = &u
		}
	}
}

// Message returns the assistant message so far, ready to be appended back
// whole (Request.AppendAssistant).
func (a *Accumulator) Message() Message {
	return Message{
		Role:             RoleAssistant,
		Content:          a.content.String(),
		ReasoningContent: a.reasoning.String(),
		ToolCalls:        append([]ToolCall(nil), a.calls...),
	}
}

// FinishReason returns the finish reason ("" before EventDone).
func (a *Accumulator) FinishReason() FinishReason { return a.finish }

// Usage returns the last usage seen, or nil.
func (a *Accumulator) Usage() *Usage { return a.usage }

// Collect reads s to its end, closes it and returns the whole reply. On an
// error the Response holds what arrived before it (never nil).
func Collect(s *Stream) (*Response, error) {
	defer s.Close()
	var a Accumulator
	var err error
	for {
		var ev Event
		ev, err = s.Next()
		if err != nil {
			break
		}
		a.Add(ev)
	}
	r := &Response{ID: s.id, Model: s.model, Created: s.created, Message: a.Message(), FinishReason: a.finish, Usage: a.usage}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return r, err
}
