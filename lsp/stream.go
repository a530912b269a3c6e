package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// maxFrameBytes bounds one JSON-RPC frame. Larger frames are read and
// dropped (the stream stays in sync) and answered with an error.
const maxFrameBytes = 256 << 20

// bigIDPrefix marks the string ID that stands for a request id the library
// cannot represent (jsonrpc2.ID holds int32 numbers only; PITFALLS #12).
// The character U+2063 (invisible separator) makes a clash with a real
// client's string id practically impossible.
const bigIDPrefix = "\u2063kimi-lsp-number-id:"

// stream is our jsonrpc2.Stream for LSP base-protocol framing. It replaces
// jsonrpc2.NewStream because that one fails the whole connection on any
// malformed frame, drops writes whose context is cancelled (PITFALLS #3) and
// cannot decode ids outside int32 (PITFALLS #12).
//
// Read never returns a decoding error: a frame with bad JSON, a missing
// Content-Length or an oversize body is logged, answered with an error
// response where an id can be addressed (else id null), and skipped. Read
// returns an error only when the input ends or fails, which ends the
// connection.
type stream struct {
	in     *bufio.Reader
	out    io.Writer
	closer io.Closer
	log    *slog.Logger

	// wmu serialises frame writes: jsonrpc2.Conn holds its own lock around
	// Write, but Read also writes error replies for frames it drops.
	wmu sync.Mutex

	// idmu guards bigIDs, the raw JSON of request ids that did not fit
	// jsonrpc2.ID, keyed by the string id that stands for them.
	idmu   sync.Mutex
	bigIDs map[string]json.RawMessage
}

var _ jsonrpc2.Stream = (*stream)(nil)

func newStream(r io.Reader, w io.Writer, c io.Closer, log *slog.Logger) *stream {
	return &stream{
		in:     bufio.NewReaderSize(r, 64<<10),
		out:    w,
		closer: c,
		log:    log,
		bigIDs: make(map[string]json.RawMessage),
	}
}

// Read returns the next well-formed message.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	var total int64
	resync := false
	for {
		length, n, err := s.readHeader(resync)
		total += n
		if err != nil {
			var bad *badFrameError
			if !errors.As(err, &bad) {
				return nil, total, err
			}
			s.log.Warn("malformed frame header; skipping to the next frame", "error", err)
			s.writeError(nil, jsonrpc2.ParseError, "malformed frame header: "+bad.msg)
			resync = true
			continue
		}
		resync = false
		if length > maxFrameBytes {
			s.log.Warn("frame too large; dropped", "bytes", length)
			m, err := io.CopyN(io.Discard, s.in, length)
			total += m
			if err != nil {
				return nil, total, fmt.Errorf("reading oversize frame: %w", err)
			}
			s.writeError(nil, jsonrpc2.InvalidRequest, fmt.Sprintf("frame of %d bytes exceeds the limit of %d", length, maxFrameBytes))
			continue
		}
		body := make([]byte, length)
		m, err := io.ReadFull(s.in, body)
		total += int64(m)
		if err != nil {
			return nil, total, fmt.Errorf("reading frame body: %w", err)
		}
		msg, id, err := s.decode(body)
		if err != nil {
			s.log.Warn("malformed message; ignored", "error", err)
			code := jsonrpc2.InvalidRequest
			if !json.Valid(body) {
				code = jsonrpc2.ParseError
			}
			s.writeError(id, code, err.Error())
			continue
		}
		return msg, total, nil
	}
}

// badFrameError is a header problem after which the reader resynchronises.
type badFrameError struct{ msg string }

func (e *badFrameError) Error() string { return e.msg }

// readHeader reads one header block and returns the Content-Length. When
// resync is set, lines are skipped until one carries "Content-Length:"
// (the body of a frame without a length runs into the next header).
func (s *stream) readHeader(resync bool) (length int64, n int64, err error) {
	length = -1
	seen := false
	for {
		line, err := s.in.ReadString('\n')
		n += int64(len(line))
		if err != nil {
			if err == io.EOF && n == 0 {
				return 0, n, io.EOF
			}
			if err == io.EOF {
				return 0, n, io.ErrUnexpectedEOF
			}
			return 0, n, err
		}
		if resync {
			i := strings.Index(line, "Content-Length:")
			if i < 0 {
				continue
			}
			line = line[i:]
			resync = false
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			if !seen {
				continue // stray blank line between frames
			}
			break
		}
		seen = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			return 0, n, &badFrameError{fmt.Sprintf("header line %q has no colon", truncate(line, 80))}
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || v < 0 {
				return 0, n, &badFrameError{fmt.Sprintf("invalid Content-Length %q", truncate(value, 40))}
			}
			length = v
		}
	}
	if length < 0 {
		return 0, n, &badFrameError{"missing Content-Length header"}
	}
	return length, n, nil
}

// wireMessage is the union of JSON-RPC request, notification and response.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc2.Error `json:"error"`
}

// decode turns a frame body into a jsonrpc2 message. On failure it returns
// the raw id when one could be read, so the error reply can address it.
func (s *stream) decode(body []byte) (jsonrpc2.Message, json.RawMessage, error) {
	// Fast path: the library decodes a well-formed message in one pass,
	// without copying the params. It fails on ids beyond int32 and on
	// malformed messages, which the slow path below handles and explains.
	// (The library rejects a wrong "jsonrpc" value but not a missing one.)
	if msg, err := jsonrpc2.DecodeMessage(body); err == nil && bytes.Contains(body, []byte(`"jsonrpc"`)) {
		switch msg.(type) {
		case *jsonrpc2.Call, *jsonrpc2.Notification:
			return msg, nil, nil
		case *jsonrpc2.Response:
			if !bytes.Contains(body, []byte(`"method"`)) {
				return msg, nil, nil
			}
		}
	}
	var w wireMessage
	if err := json.Unmarshal(body, &w); err != nil {
		// Try to salvage the id for the reply.
		var idOnly struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &idOnly)
		return nil, validID(idOnly.ID), fmt.Errorf("invalid JSON-RPC message: %w", err)
	}
	if w.JSONRPC != "2.0" {
		return nil, validID(w.ID), fmt.Errorf("jsonrpc version %q is not \"2.0\"", w.JSONRPC)
	}
	hasID := len(w.ID) > 0 && !bytes.Equal(w.ID, []byte("null"))
	if w.Method == nil {
		if !hasID {
			return nil, nil, errors.New("message has neither method nor id")
		}
		// A response to one of our calls: our ids are small numbers, which
		// the library decodes fine.
		msg, err := jsonrpc2.DecodeMessage(body)
		if err != nil {
			return nil, nil, fmt.Errorf("invalid response: %w", err)
		}
		return msg, nil, nil
	}
	if *w.Method == "" {
		return nil, validID(w.ID), errors.New("empty method name")
	}
	params := w.Params
	if len(params) == 0 {
		params = json.RawMessage("null")
	}
	if !hasID {
		msg, err := jsonrpc2.NewNotification(*w.Method, params)
		return msg, nil, err
	}
	id, err := s.idFromRaw(w.ID)
	if err != nil {
		return nil, nil, err
	}
	msg, err := jsonrpc2.NewCall(id, *w.Method, params)
	return msg, w.ID, err
}

// idFromRaw converts a request id from the wire into a jsonrpc2.ID. Numbers
// outside int32 (and non-integers) get a stand-in string id whose raw form is
// remembered so the reply carries the id exactly as it came.
func (s *stream) idFromRaw(raw json.RawMessage) (jsonrpc2.ID, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return jsonrpc2.ID{}, errors.New("missing id")
	}
	switch raw[0] {
	case '"':
		var str string
		if err := json.Unmarshal(raw, &str); err != nil {
			return jsonrpc2.ID{}, fmt.Errorf("invalid string id: %w", err)
		}
		return jsonrpc2.NewStringID(str), nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil && v >= math.MinInt32 && v <= math.MaxInt32 {
			return jsonrpc2.NewNumberID(int32(v)), nil
		}
		var f float64
		if err := json.Unmarshal(raw, &f); err != nil {
			return jsonrpc2.ID{}, fmt.Errorf("invalid numeric id %s", truncate(string(raw), 40))
		}
		key := bigIDPrefix + string(raw)
		s.idmu.Lock()
		s.bigIDs[key] = append(json.RawMessage(nil), raw...)
		s.idmu.Unlock()
		return jsonrpc2.NewStringID(key), nil
	}
	return jsonrpc2.ID{}, fmt.Errorf("id must be a number or a string, got %s", truncate(string(raw), 40))
}

// lookupID returns the jsonrpc2.ID under which a request with this raw id
// is known, for $/cancelRequest. It does not register new big ids.
func (s *stream) lookupID(raw json.RawMessage) (jsonrpc2.ID, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return jsonrpc2.ID{}, false
	}
	if raw[0] != '"' {
		if v, err := strconv.ParseInt(string(raw), 10, 64); err == nil && v >= math.MinInt32 && v <= math.MaxInt32 {
			return jsonrpc2.NewNumberID(int32(v)), true
		}
		// Numbers such as 7.0 or 1e3 name the same id as 7 and 1000.
		var f float64
		if err := json.Unmarshal(raw, &f); err == nil && f == math.Trunc(f) && f >= math.MinInt32 && f <= math.MaxInt32 {
			return jsonrpc2.NewNumberID(int32(f)), true
		}
		key := bigIDPrefix + string(raw)
		s.idmu.Lock()
		_, ok := s.bigIDs[key]
		s.idmu.Unlock()
		return jsonrpc2.NewStringID(key), ok
	}
	var str string
	if err := json.Unmarshal(raw, &str); err != nil {
		return jsonrpc2.ID{}, false
	}
	return jsonrpc2.NewStringID(str), true
}

// Write sends one message. It deliberately ignores ctx: a reply must reach
// the client even when the request's context was cancelled (PITFALLS #3).
func (s *stream) Write(_ context.Context, msg jsonrpc2.Message) (int64, error) {
	data, err := json.Marshal(msg)
	if err != nil {
		return 0, fmt.Errorf("marshaling message: %w", err)
	}
	if resp, ok := msg.(*jsonrpc2.Response); ok {
		data = s.restoreID(resp, data)
	}
	return s.writeFrame(data)
}

// restoreID re-encodes a reply to a request whose numeric id did not fit
// jsonrpc2.ID, with the id exactly as the client sent it.
func (s *stream) restoreID(resp *jsonrpc2.Response, data []byte) []byte {
	str := fmt.Sprintf("%s", resp.ID())
	if !strings.HasPrefix(str, bigIDPrefix) {
		return data
	}
	s.idmu.Lock()
	raw, ok := s.bigIDs[str]
	delete(s.bigIDs, str)
	s.idmu.Unlock()
	if !ok {
		return data
	}
	out := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result,omitempty"`
		Error   *jsonrpc2.Error `json:"error,omitempty"`
	}{JSONRPC: "2.0", ID: raw}
	if err := resp.Err(); err != nil {
		if !errors.As(err, &out.Error) {
			out.Error = jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
		}
	} else {
		out.Result = json.RawMessage(resp.Result())
		if len(out.Result) == 0 {
			out.Result = json.RawMessage("null")
		}
	}
	fixed, err := json.Marshal(out)
	if err != nil {
		return data
	}
	return fixed
}

// writeError writes an error response for a frame that never became a
// request. id is the raw id or nil (written as null).
func (s *stream) writeError(id json.RawMessage, code jsonrpc2.Code, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	resp := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc2.Error `json:"error"`
	}{"2.0", id, jsonrpc2.NewError(code, message)}
	data, err := json.Marshal(resp)
	if err != nil {
		return
	}
	if _, err := s.writeFrame(data); err != nil {
		s.log.Debug("writing error reply failed", "error", err)
	}
}

func (s *stream) writeFrame(data []byte) (int64, error) {
	frame := make([]byte, 0, len(data)+32)
	frame = append(frame, "Content-Length: "...)
	frame = strconv.AppendInt(frame, int64(len(data)), 10)
	frame = append(frame, "\r\n\r\n"...)
	frame = append(frame, data...)
	s.wmu.Lock()
	n, err := s.out.Write(frame)
	s.wmu.Unlock()
	if err != nil {
		return int64(n), fmt.Errorf("writing frame: %w", err)
	}
	return int64(n), nil
}

// Close closes the underlying connection.
func (s *stream) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}

// validID returns raw if it is a JSON string or number usable as an id in an
// error reply, else nil.
func validID(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil
	}
	if raw[0] == '"' || raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9' {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			return raw
		}
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
