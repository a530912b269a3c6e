package lsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
)

// This file is the JSON-RPC 2.0 connection: the messages stream.go reads,
// the error type replies carry, and conn, which runs the read loop,
// answers requests and matches the responses to our own requests.
//
// It replaces go.lsp.dev/jsonrpc2 (and with it go.lsp.dev/protocol, zap and
// segmentio/encoding), whose pitfalls (PITFALLS.md 1–5, 12) the server
// worked around one by one: ids are kept as sent (any number, any string),
// a reply is written whatever its context, a handler cannot fail the
// connection, and every message is encoded with encoding/json. The
// library's JSON codec built its encoders on first use, which was a third
// of the instructions from exec to the initialize reply; see
// bench/README.md, "Read loop, start-up and memory".

// JSON-RPC and LSP error codes.
const (
	codeParseError           int64 = -32700
	codeInvalidRequest       int64 = -32600
	codeMethodNotFound       int64 = -32601
	codeInvalidParams        int64 = -32602
	codeInternalError        int64 = -32603
	codeServerNotInitialized int64 = -32002
	// RequestCancelled is LSP's error code for a request the client
	// cancelled.
	RequestCancelled int64 = -32800
)

// rpcErr is a JSON-RPC error object: what a failed request is answered
// with, and what a failed request of ours returns.
type rpcErr struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcErr) Error() string { return e.Message }

// rpcError returns an *rpcErr with a formatted message.
func rpcError(code int64, format string, args ...any) error {
	return &rpcErr{Code: code, Message: fmt.Sprintf(format, args...)}
}

// reqID is the key of a request id: one per value, whatever its spelling
// (see canonicalID), so that $/cancelRequest finds the request. It is also
// how logs and the job table name a request: "#7" for a number, the Go
// quoted form for a string.
type reqID string

// message is what stream.Read returns: *request (a call or, with no id, a
// notification) or *response.
type message interface{ isMessage() }

// request is a call or a notification from the client.
type request struct {
	method string
	params json.RawMessage // never empty: "null" when absent
	// id and rawID are set for a call: its key and its JSON as sent, which
	// the reply carries back unchanged.
	id    reqID
	rawID json.RawMessage
}

// isCall reports whether the request expects a reply.
func (r *request) isCall() bool { return r.rawID != nil }

// response is the client's answer to one of our requests.
type response struct {
	id     int64
	result json.RawMessage
	err    *rpcErr
}

func (*request) isMessage()  {}
func (*response) isMessage() {}

// replier answers one request; only the first call writes.
type replier func(result any, err error) error

// conn is one JSON-RPC connection over a stream.
type conn struct {
	stream *stream
	seq    atomic.Int64

	pendingMu sync.Mutex
	pending   map[int64]chan *response

	done chan struct{}
	err  atomic.Pointer[error]
}

func newConn(s *stream) *conn {
	return &conn{stream: s, pending: make(map[int64]chan *response), done: make(chan struct{})}
}

// run reads messages until the stream fails or ends, passing requests to
// handle on the read loop itself (handle decides what runs elsewhere) and
// responses to the calls waiting for them. It closes done when it returns.
func (c *conn) run(ctx context.Context, handle func(context.Context, *request, replier)) {
	defer close(c.done)
	for {
		msg, err := c.stream.Read(ctx)
		if err != nil {
			c.err.Store(&err)
			c.stream.Close()
			return
		}
		switch m := msg.(type) {
		case *request:
			handle(ctx, m, c.replier(m))
		case *response:
			c.pendingMu.Lock()
			ch, ok := c.pending[m.id]
			c.pendingMu.Unlock()
			if ok {
				ch <- m // buffered: the caller may be gone
			}
		}
	}
}

// replier returns the function that answers req: a notification is never
// answered, a call once.
func (c *conn) replier(req *request) replier {
	if !req.isCall() {
		return func(any, error) error { return nil }
	}
	var once atomic.Bool
	return func(result any, err error) error {
		if once.Swap(true) {
			return errors.New("request already answered")
		}
		data, err := encodeResponse(req.rawID, result, err)
		if err != nil {
			return err
		}
		_, err = c.stream.writeFrame(data)
		return err
	}
}

// encodeResponse encodes a reply carrying id exactly as the client sent
// it. A result that cannot be encoded becomes an internal error reply.
func encodeResponse(rawID json.RawMessage, result any, err error) ([]byte, error) {
	buf := make([]byte, 0, 128)
	buf = append(buf, `{"jsonrpc":"2.0","id":`...)
	buf = append(buf, rawID...)
	if err == nil {
		res, merr := marshalResult(result)
		if merr == nil {
			buf = append(buf, `,"result":`...)
			buf = append(buf, res...)
			return append(buf, '}'), nil
		}
		err = &rpcErr{Code: codeInternalError, Message: "cannot encode the result: " + merr.Error()}
	}
	var re *rpcErr
	if !errors.As(err, &re) {
		re = &rpcErr{Code: codeInternalError, Message: err.Error()}
	}
	e, merr := json.Marshal(re)
	if merr != nil {
		return nil, merr
	}
	buf = append(buf, `,"error":`...)
	buf = append(buf, e...)
	return append(buf, '}'), nil
}

// marshalResult encodes a result; nil is null, raw JSON goes as it is.
func marshalResult(v any) ([]byte, error) {
	switch r := v.(type) {
	case nil:
		return []byte("null"), nil
	case json.RawMessage:
		if len(r) == 0 {
			return []byte("null"), nil
		}
		return r, nil
	}
	return json.Marshal(v)
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	data, err := encodeRequest(nil, method, params)
	if err != nil {
		return err
	}
	_, err = c.stream.writeFrame(data)
	return err
}

// call sends a request and decodes the client's result into result (nil:
// ignored). It returns the client's *rpcErr when the client answered with
// an error, and ctx's error when ctx ends first.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	id := c.seq.Add(1)
	data, err := encodeRequest(strconv.AppendInt(nil, id, 10), method, params)
	if err != nil {
		return err
	}
	ch := make(chan *response, 1)
	c.pendingMu.Lock()
	c.pending[id] = ch
	c.pendingMu.Unlock()
	defer func() {
		c.pendingMu.Lock()
		delete(c.pending, id)
		c.pendingMu.Unlock()
	}()
	if _, err := c.stream.writeFrame(data); err != nil {
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return r.err
		}
		if result == nil || len(r.result) == 0 {
			return nil
		}
		if err := json.Unmarshal(r.result, result); err != nil {
			return fmt.Errorf("unmarshaling result: %w", err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return errors.New("connection closed")
	}
}

// encodeRequest encodes a call (id set) or a notification (id nil).
func encodeRequest(id []byte, method string, params any) ([]byte, error) {
	m, err := json.Marshal(method)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 0, 128)
	buf = append(buf, `{"jsonrpc":"2.0",`...)
	if id != nil {
		buf = append(buf, `"id":`...)
		buf = append(buf, id...)
		buf = append(buf, ',')
	}
	buf = append(buf, `"method":`...)
	buf = append(buf, m...)
	if params != nil {
		p, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("marshaling %s params: %w", method, err)
		}
		buf = append(buf, `,"params":`...)
		buf = append(buf, p...)
	}
	return append(buf, '}'), nil
}

// close closes the stream; run then ends.
func (c *conn) close() error { return c.stream.Close() }

// failure returns why run ended (nil while it runs).
func (c *conn) failure() error {
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}
