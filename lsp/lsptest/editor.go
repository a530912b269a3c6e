// Package lsptest is a fake editor for protocol tests: it speaks LSP
// base-protocol frames over any reader/writer pair (a pipe to an in-process
// server, or a child process's stdio), records every message the server
// sends, answers the server's requests with configurable handlers, and can
// write raw, malformed bytes.
//
// It frames messages with assist/lspwire, the server's own framer, and no
// JSON-RPC library, so tests can send ids a library would refuse; WriteRaw
// sends frames no framer would write.
package lsptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/lspwire"
)

// Message is one JSON-RPC message received from the server.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *ResponseError  `json:"error,omitempty"`
	// At is when the message was read.
	At time.Time `json:"-"`
}

// IsResponse reports whether m answers a request.
func (m *Message) IsResponse() bool { return m.Method == "" }

// ResponseError is a JSON-RPC error object.
type ResponseError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *ResponseError) Error() string { return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message) }

// Handler answers a request the server sends to the editor.
type Handler func(params json.RawMessage) (result any, err *ResponseError)

// Editor is the fake editor.
type Editor struct {
	w io.Writer
	r *bufio.Reader

	wmu sync.Mutex

	// mu guards the fields below.
	mu       sync.Mutex
	nextID   int64
	pending  map[string]chan *Message
	handlers map[string]Handler
	log      []*Message
	changed  chan struct{} // closed and replaced whenever log grows
	readErr  error
	done     chan struct{}
}

// New starts reading frames from r (the server's output); w is the
// server's input.
func New(r io.Reader, w io.Writer) *Editor {
	e := &Editor{
		w:        w,
		r:        bufio.NewReader(r),
		nextID:   1,
		pending:  make(map[string]chan *Message),
		handlers: make(map[string]Handler),
		changed:  make(chan struct{}),
		done:     make(chan struct{}),
	}
	go e.readLoop()
	return e
}

// Handle sets the handler for a server→editor request method. Without a
// handler the editor answers null.
func (e *Editor) Handle(method string, h Handler) {
	e.mu.Lock()
	e.handlers[method] = h
	e.mu.Unlock()
}

// Done is closed when the server's output ends.
func (e *Editor) Done() <-chan struct{} { return e.done }

// Err returns the error that ended reading (io.EOF when the server closed).
func (e *Editor) Err() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.readErr
}

func (e *Editor) readLoop() {
	defer close(e.done)
	for {
		body, err := ReadFrame(e.r)
		if err != nil {
			e.mu.Lock()
			e.readErr = err
			for _, ch := range e.pending {
				close(ch)
			}
			e.pending = map[string]chan *Message{}
			e.mu.Unlock()
			e.signal()
			return
		}
		m := &Message{At: time.Now()}
		if err := json.Unmarshal(body, m); err != nil {
			m = &Message{Method: "lsptest/undecodable", Params: body, At: time.Now()}
		}
		e.mu.Lock()
		e.log = append(e.log, m)
		var ch chan *Message
		if m.IsResponse() {
			key := string(m.ID)
			ch = e.pending[key]
			delete(e.pending, key)
		}
		h := e.handlers[m.Method]
		e.mu.Unlock()
		e.signal()
		switch {
		case ch != nil:
			ch <- m
		case !m.IsResponse() && len(m.ID) > 0:
			go e.answer(m, h)
		}
	}
}

func (e *Editor) answer(m *Message, h Handler) {
	var result any
	var rerr *ResponseError
	if h != nil {
		result, rerr = h(m.Params)
	}
	out := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if rerr != nil {
		out["error"] = rerr
	} else {
		out["result"] = result
	}
	_ = e.WriteJSON(out)
}

func (e *Editor) signal() {
	e.mu.Lock()
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// ReadFrame reads one Content-Length framed body with the server's own
// reader (lspwire.ReadFrame), unbounded but by the input: the frames
// checked are the server's. It returns io.EOF when the input ends between
// frames.
func ReadFrame(r *bufio.Reader) ([]byte, error) {
	body, _, err := lspwire.ReadFrame(r, math.MaxInt64)
	return body, err
}

// WriteRaw writes bytes to the server as they are.
func (e *Editor) WriteRaw(b []byte) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	_, err := e.w.Write(b)
	return err
}

// WriteFrame writes body in one Content-Length frame.
func (e *Editor) WriteFrame(body []byte) error {
	return e.WriteRaw(lspwire.AppendFrame(nil, body))
}

// WriteJSON marshals v and writes it in one frame.
func (e *Editor) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return e.WriteFrame(b)
}

// Notify sends a notification.
func (e *Editor) Notify(method string, params any) error {
	return e.WriteJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Send writes a request with the given raw id and returns the channel on
// which its response arrives. It does not wait.
func (e *Editor) Send(id json.RawMessage, method string, params any) (<-chan *Message, error) {
	ch := make(chan *Message, 1)
	e.mu.Lock()
	e.pending[string(id)] = ch
	e.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if err := e.WriteJSON(msg); err != nil {
		return nil, err
	}
	return ch, nil
}

// NextID returns a fresh numeric request id.
func (e *Editor) NextID() json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	id := e.nextID
	e.nextID++
	return json.RawMessage(strconv.FormatInt(id, 10))
}

// Call sends a request and waits for its response. A JSON-RPC error comes
// back as *ResponseError.
func (e *Editor) Call(ctx context.Context, method string, params, result any) error {
	ch, err := e.Send(e.NextID(), method, params)
	if err != nil {
		return err
	}
	m, err := Await(ctx, ch)
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	if m.Error != nil {
		return m.Error
	}
	if result != nil && len(m.Result) > 0 {
		return json.Unmarshal(m.Result, result)
	}
	return nil
}

// Await waits for a response on ch.
func Await(ctx context.Context, ch <-chan *Message) (*Message, error) {
	select {
	case m, ok := <-ch:
		if !ok {
			return nil, errors.New("connection closed before the response")
		}
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Messages returns a copy of everything received so far.
func (e *Editor) Messages() []*Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*Message(nil), e.log...)
}

// Wait blocks until pred holds for some received message (searching all of
// them, old and new) and returns the first such message.
func (e *Editor) Wait(ctx context.Context, pred func(*Message) bool) (*Message, error) {
	seen := 0
	for {
		e.mu.Lock()
		log := e.log
		changed := e.changed
		done := e.readErr != nil
		e.mu.Unlock()
		for ; seen < len(log); seen++ {
			if pred(log[seen]) {
				return log[seen], nil
			}
		}
		if done {
			return nil, fmt.Errorf("server output ended: %v", e.Err())
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// WaitMethod waits for a notification or request with the given method
// whose params satisfy pred (nil pred accepts any).
func (e *Editor) WaitMethod(ctx context.Context, method string, pred func(json.RawMessage) bool) (*Message, error) {
	return e.Wait(ctx, func(m *Message) bool {
		return m.Method == method && (pred == nil || pred(m.Params))
	})
}

// Initialize sends initialize (with the given params, or defaults when nil)
// and initialized, and returns the raw initialize result.
func (e *Editor) Initialize(ctx context.Context, params any) (json.RawMessage, error) {
	if params == nil {
		params = DefaultInitializeParams("")
	}
	var result json.RawMessage
	if err := e.Call(ctx, "initialize", params, &result); err != nil {
		return nil, err
	}
	return result, e.Notify("initialized", map[string]any{})
}

// DefaultInitializeParams returns the params of a capable client (UTF-16,
// progress, showDocument, documentChanges, configuration) rooted at rootURI
// ("" for none).
func DefaultInitializeParams(rootURI string) map[string]any {
	p := map[string]any{
		"processId":  nil,
		"clientInfo": map[string]any{"name": "lsptest", "version": "1"},
		"capabilities": map[string]any{
			"general": map[string]any{"positionEncodings": []string{"utf-16"}},
			"window": map[string]any{
				"workDoneProgress": true,
				"showDocument":     map[string]any{"support": true},
			},
			"workspace": map[string]any{
				"applyEdit":        true,
				"workspaceEdit":    map[string]any{"documentChanges": true, "resourceOperations": []string{"create", "rename", "delete"}},
				"configuration":    true,
				"workspaceFolders": true,
			},
			"textDocument": map[string]any{
				"codeAction": map[string]any{
					"codeActionLiteralSupport": map[string]any{
						"codeActionKind": map[string]any{"valueSet": []string{"", "quickfix", "refactor", "refactor.rewrite", "source"}},
					},
					"isPreferredSupport": true,
				},
			},
		},
	}
	if rootURI != "" {
		p["rootUri"] = rootURI
		p["workspaceFolders"] = []map[string]any{{"uri": rootURI, "name": "root"}}
	} else {
		p["rootUri"] = nil
	}
	return p
}
