package verify

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/lspwire"
)

// maxFrameBytes bounds one frame from a helper. A helper is a program of
// the user's choosing, but its output is still outside input: a frame
// announcing more ends the connection (the helper is then treated as
// crashed) instead of growing our memory. Header lines are bounded by
// lspwire.MaxHeaderLine, and a body grows with the bytes that arrive.
const maxFrameBytes = 64 << 20

// maxHeaderLine bounds one header line of a frame.
const maxHeaderLine = lspwire.MaxHeaderLine

// errFrame reports a malformed frame; the connection ends with it.
var errFrame = lspwire.ErrMalformed

// readFrame reads one Content-Length framed message body (lspwire.ReadFrame
// with the helper's bound). It returns io.EOF when the input ends between
// frames; a malformed frame is an error matching errFrame.
func readFrame(r *bufio.Reader) ([]byte, error) {
	body, _, err := lspwire.ReadFrame(r, maxFrameBytes)
	if errors.Is(err, errFrame) {
		return nil, fmt.Errorf("%w: %w", errFrame, err)
	}
	return body, err
}

// writeFrame writes body as one frame.
func writeFrame(w io.Writer, body []byte) error {
	_, err := lspwire.WriteFrame(w, body)
	return err
}

// message is any JSON-RPC 2.0 message, as read.
type message struct {
	JSONRPC string           `json:"jsonrpc"`
	ID      *json.RawMessage `json:"id,omitempty"`
	Method  string           `json:"method,omitempty"`
	Params  json.RawMessage  `json:"params,omitempty"`
	Result  json.RawMessage  `json:"result,omitempty"`
	Error   *rpcError        `json:"error,omitempty"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *rpcError) Error() string {
	return fmt.Sprintf("%s (code %d)", clip(e.Message, 200), e.Code)
}

// JSON-RPC and LSP error codes we send or look for.
const (
	codeMethodNotFound  = -32601
	codeServerCancelled = -32802
	codeContentModified = -32801
)

// errClosed reports a call on a connection whose helper is gone.
var errClosed = errors.New("the helper closed its output")

type response struct {
	result json.RawMessage
	err    *rpcError
}

// conn is a JSON-RPC client over a helper's stdin and stdout: our calls
// with their replies, our notifications, and the helper's notifications
// and requests handed to the callbacks on the read loop. Every write has a
// deadline (writeTimeout), so a helper that stops reading cannot block us.
type conn struct {
	out *os.File

	onNotify  func(method string, params json.RawMessage)
	onRequest func(method string, params json.RawMessage) (any, *rpcError)

	// wmu serialises writes.
	wmu sync.Mutex

	// mu guards the fields below it.
	mu      sync.Mutex
	nextID  int64
	pending map[int64]chan response
	err     error // why the connection ended, once it has

	done chan struct{} // closed when the read loop ends
}

// writeTimeout bounds one frame write to a helper's stdin.
const writeTimeout = 5 * time.Second

func newConn(in io.Reader, out *os.File, onNotify func(string, json.RawMessage), onRequest func(string, json.RawMessage) (any, *rpcError)) *conn {
	c := &conn{
		out:       out,
		onNotify:  onNotify,
		onRequest: onRequest,
		pending:   map[int64]chan response{},
		done:      make(chan struct{}),
	}
	go c.readLoop(bufio.NewReaderSize(in, 64<<10))
	return c
}

// readLoop reads until the input ends or a frame is malformed, then fails
// every call in flight.
func (c *conn) readLoop(r *bufio.Reader) {
	var err error
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic in the helper's read loop: %v", p)
		}
		c.fail(err)
		close(c.done)
	}()
	for {
		var body []byte
		body, err = readFrame(r)
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(body, &m) != nil {
			continue // not JSON: skip the frame, as a server would
		}
		switch {
		case m.Method != "" && m.ID != nil:
			result, rerr := c.onRequest(m.Method, m.Params)
			c.reply(*m.ID, result, rerr)
		case m.Method != "":
			c.onNotify(m.Method, m.Params)
		case m.ID != nil:
			var id int64
			if json.Unmarshal(*m.ID, &id) != nil {
				continue
			}
			c.mu.Lock()
			ch := c.pending[id]
			delete(c.pending, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- response{result: m.Result, err: m.Error}
			}
		}
	}
}

// fail ends the connection with err (io.EOF and nil mean the helper went
// away) and wakes every call in flight.
func (c *conn) fail(err error) {
	if err == nil || err == io.EOF {
		err = errClosed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	c.err = err
	for id, ch := range c.pending {
		ch <- response{err: &rpcError{Code: -1, Message: err.Error()}}
		delete(c.pending, id)
	}
}

// close ends the connection and closes the helper's stdin.
func (c *conn) close() {
	c.fail(errClosed)
	_ = c.out.Close()
}

// closedErr returns why the connection ended, or nil.
func (c *conn) closedErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// write sends one message with a deadline; a failed write ends the
// connection.
func (c *conn) write(v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.closedErr(); err != nil {
		return err
	}
	_ = c.out.SetWriteDeadline(time.Now().Add(writeTimeout))
	if err := writeFrame(c.out, body); err != nil {
		if errors.Is(err, os.ErrDeadlineExceeded) {
			err = fmt.Errorf("the helper did not read its input within %v", writeTimeout)
		}
		c.fail(err)
		return err
	}
	return nil
}

type outRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int64  `json:"id"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type outNotification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
	Params  any    `json:"params"`
}

type outResult struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result"`
}

type outError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   *rpcError       `json:"error"`
}

// call sends a request and waits for its reply until ctx ends; then it
// sends $/cancelRequest and returns ctx's error. result may be nil.
func (c *conn) call(ctx context.Context, method string, params, result any) error {
	ch := make(chan response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return err
	}
	c.nextID++
	id := c.nextID
	c.pending[id] = ch
	c.mu.Unlock()
	if err := c.write(outRequest{JSONRPC: "2.0", ID: id, Method: method, Params: params}); err != nil {
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		return err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			if err := c.closedErr(); err != nil && r.err.Code == -1 {
				return err
			}
			return r.err
		}
		if result != nil && len(r.result) > 0 {
			if err := json.Unmarshal(r.result, result); err != nil {
				return fmt.Errorf("%s: a reply we cannot read: %w", method, err)
			}
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.pending, id)
		c.mu.Unlock()
		_ = c.notify("$/cancelRequest", map[string]int64{"id": id})
		return ctx.Err()
	}
}

// notify sends a notification.
func (c *conn) notify(method string, params any) error {
	return c.write(outNotification{JSONRPC: "2.0", Method: method, Params: params})
}

func (c *conn) reply(id json.RawMessage, result any, err *rpcError) {
	if err != nil {
		_ = c.write(outError{JSONRPC: "2.0", ID: id, Error: err})
		return
	}
	_ = c.write(outResult{JSONRPC: "2.0", ID: id, Result: result})
}

// clip cuts s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && n < len(s) && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
