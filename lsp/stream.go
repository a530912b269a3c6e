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
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/assist/lspwire"
	"go.lsp.dev/jsonrpc2"
)

// maxFrameBytes bounds one JSON-RPC frame. A frame announcing more is
// answered with an error at once and skipped without reading its body:
// the reader discards input up to the next "Content-Length:"
// (lspwire.SkipToHeader), so a lying header (2^40 bytes) costs nothing and
// the next request is answered. Header lines are bounded by
// lspwire.MaxHeaderLine.
const maxFrameBytes = 256 << 20

// jsonSpace is JSON's whitespace (bytes.TrimSpace also trims \f and \v).
const jsonSpace = " \t\r\n"

// stringIDPrefix marks the string ID that stands for a string request id
// the library would confuse with another: "" (jsonrpc2.ID{} is also the
// number 0), one that starts with U+2063 (it could equal a stand-in), and
// one that Go's decoder would change (see stringIDKey; docs/protocol-pitfalls.md,
// "String ids the library confuses").
const stringIDPrefix = "\u2063kimi-lsp-string-id:"

// bigIDPrefix marks the string ID that stands for a request id the library
// cannot represent (jsonrpc2.ID holds int32 numbers only;
// docs/protocol-pitfalls.md, "Request ids beyond int32").
// The character U+2063 (invisible separator) makes a clash with a real
// client's string id practically impossible.
const bigIDPrefix = "\u2063kimi-lsp-number-id:"

// stream is our jsonrpc2.Stream for LSP base-protocol framing. It replaces
// jsonrpc2.NewStream because that one fails the whole connection on any
// malformed frame, drops writes whose context is cancelled and cannot
// decode ids outside int32 (docs/protocol-pitfalls.md, "A reply on a
// cancelled context is dropped" and "Request ids beyond int32").
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

	// maxFrame is maxFrameBytes; tests lower it.
	maxFrame int64

	// idmu guards rawIDs: the raw JSON of the ids of the requests in
	// flight, keyed by the canonical ID that stands for them (see
	// canonicalID), so that a reply carries the id exactly as sent (the
	// library's jsonrpc2.ID cannot hold ids beyond int32, 7.0, 1e3) and is
	// encoded without the library's codec (see Write).
	idmu   sync.Mutex
	rawIDs map[jsonrpc2.ID]json.RawMessage

	// grow runs growReadLoopStack on the read loop, at its first Read.
	grow sync.Once
}

// readLoopStack is the stack the read loop reaches on its first message,
// initialize: decoding it and encoding the reply (encoding/json's first
// use of each type recurses through reflection) take it from the 2 KiB a
// goroutine starts with to 32 KiB.
const readLoopStack = 32 << 10

// growReadLoopStack grows the calling goroutine's stack to readLoopStack
// at once, while it is shallow (D107). Grown on demand instead, the stack
// was copied four times on the way to the initialize reply (2, 4, 8, 16 →
// 32 KiB), each copy walking a deeper stack through the function tables:
// about a tenth of the instructions from exec to the reply. The runtime
// sizes the new stack for the frame that needs it, so one frame a little
// over half of readLoopStack makes it allocate readLoopStack in one step.
// It changes nothing else: the stack is the size it reached anyway, and
// the garbage collector may shrink it later as it does any stack.
func growReadLoopStack() { largeFrame() }

// largeFrame's frame holds an array of 20 KiB; the pointer to it does not
// escape, so the array is on the stack.
//
//go:noinline
func largeFrame() byte {
	var frame [readLoopStack * 5 / 8]byte
	return lastByte(&frame)
}

//go:noinline
func lastByte(b *[readLoopStack * 5 / 8]byte) byte { return b[len(b)-1] }

var _ jsonrpc2.Stream = (*stream)(nil)

func newStream(r io.Reader, w io.Writer, c io.Closer, log *slog.Logger) *stream {
	return &stream{
		in:       bufio.NewReaderSize(r, 64<<10),
		out:      w,
		closer:   c,
		log:      log,
		maxFrame: maxFrameBytes,
		rawIDs:   make(map[jsonrpc2.ID]json.RawMessage),
	}
}

// Read returns the next well-formed message.
func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	s.grow.Do(growReadLoopStack)
	var total int64
	resync := false
	for {
		if resync {
			n, err := lspwire.SkipToHeader(s.in)
			total += n
			if err != nil {
				return nil, total, err
			}
			resync = false
		}
		body, n, err := lspwire.ReadFrame(s.in, s.maxFrame)
		total += n
		var bad *lspwire.HeaderError
		var big *lspwire.TooLargeError
		switch {
		case errors.As(err, &bad):
			s.log.Warn("malformed frame header; skipping to the next frame", "error", err)
			s.writeError(nil, jsonrpc2.ParseError, "malformed frame header: "+bad.Msg)
			resync = true
			continue
		case errors.As(err, &big):
			// Refused at once: the body is not read (it may never come),
			// the input is skipped up to the next frame header.
			s.log.Warn("frame too large; refused, skipping to the next frame", "bytes", big.Length, "limit", big.Limit)
			s.writeError(nil, jsonrpc2.InvalidRequest, fmt.Sprintf("frame of %d bytes exceeds the limit of %d bytes; skipped up to the next Content-Length header", big.Length, big.Limit))
			resync = true
			continue
		case err != nil:
			return nil, total, err
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

// exactBodyMax is the frame size up to which lspwire reads a body into a
// buffer of exactly its size (the tests send frames on both sides of it).
const exactBodyMax = lspwire.ExactBodyMax

// wireMessage is what decode reads of any JSON-RPC message. A response's
// result and error are not among its fields: responses are decoded by
// jsonrpc2.DecodeMessage (see decode), and a field of type *jsonrpc2.Error
// cost encoding/json a decoder for it on the first message, initialize.
type wireMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  *string         `json:"method"`
	Params  json.RawMessage `json:"params"`
}

// libraryDecodeMin is the frame size from which jsonrpc2.DecodeMessage is
// used (see decode).
const libraryDecodeMin = 32 << 10

// decodeLarge decodes a well-formed notification or response with the
// library; ok is false when the slow path must decide. A request (a call)
// always takes the slow path: the library decodes its id into its own
// type, which re-encodes it (a lone surrogate becomes U+FFFD) and cannot
// tell "" from 0, and the reply must carry the id exactly as sent, which
// only the slow path keeps (see idFromRaw). Large frames are nearly all
// notifications (didOpen, didChange).
func decodeLarge(body []byte) (jsonrpc2.Message, bool) {
	msg, err := jsonrpc2.DecodeMessage(body)
	if err != nil || !bytes.Contains(body, []byte(`"jsonrpc"`)) {
		return nil, false
	}
	switch msg.(type) {
	case *jsonrpc2.Notification:
		return msg, true
	case *jsonrpc2.Response:
		return msg, !bytes.Contains(body, []byte(`"method"`))
	}
	return nil, false
}

// decode turns a frame body into a jsonrpc2 message. On failure it returns
// the raw id when one could be read, so the error reply can address it.
func (s *stream) decode(body []byte) (jsonrpc2.Message, json.RawMessage, error) {
	// Fast path for large notifications (didOpen, a full-text didChange)
	// and responses: the library decodes a well-formed message in one
	// pass, without copying the params. Requests, and malformed messages,
	// take the slow path below, which keeps a request's raw id and explains
	// what is wrong. (The library rejects a wrong "jsonrpc" value but not a
	// missing one.) It reads through a decoder whose buffer is at least
	// 32 KiB: for the small frames of typing (didChange, a few hundred bytes)
	// that buffer was three quarters of the server's garbage, so they take
	// the path below.
	if len(body) >= libraryDecodeMin {
		if msg, ok := decodeLarge(body); ok {
			return msg, nil, nil
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

// idFromRaw converts a request id from the wire into the jsonrpc2.ID it
// is known by (see canonicalID), and remembers the raw id until the reply,
// which carries it unchanged.
func (s *stream) idFromRaw(raw json.RawMessage) (jsonrpc2.ID, error) {
	raw = bytes.Trim(raw, jsonSpace)
	id, err := canonicalID(raw)
	if err != nil {
		return id, err
	}
	s.idmu.Lock()
	s.rawIDs[id] = append(json.RawMessage(nil), raw...)
	s.idmu.Unlock()
	return id, nil
}

// lookupID returns the jsonrpc2.ID under which a request with this raw id
// is known, for $/cancelRequest: the same canonical ID whatever the
// spelling (7, 7.0, 7e0, 0.7e1; 1e3 and 1000; 4294967296 and
// 4.294967296e9), whether or not the request is still running.
func (s *stream) lookupID(raw json.RawMessage) (jsonrpc2.ID, bool) {
	id, err := canonicalID(raw)
	return id, err == nil
}

// canonicalID maps a raw JSON id to one jsonrpc2.ID per value, distinct
// by type and value: a string id is itself (see stringIDKey for the
// strings that need a stand-in); a number that is an integer in int32 is
// a number id (whatever its spelling); any other number is a stand-in
// string id made from its canonical decimal form (see canonicalNumber).
func canonicalID(raw json.RawMessage) (jsonrpc2.ID, error) {
	raw = bytes.Trim(raw, jsonSpace)
	if len(raw) == 0 {
		return jsonrpc2.ID{}, errors.New("missing id")
	}
	switch raw[0] {
	case '"':
		str, err := stringIDKey(raw)
		if err != nil {
			return jsonrpc2.ID{}, err
		}
		return jsonrpc2.NewStringID(str), nil
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		canon, v, isInt32, ok := canonicalNumber(string(raw))
		if !ok {
			return jsonrpc2.ID{}, fmt.Errorf("invalid numeric id %s", truncate(string(raw), 40))
		}
		if isInt32 {
			return jsonrpc2.NewNumberID(v), nil
		}
		return jsonrpc2.NewStringID(bigIDPrefix + canon), nil
	}
	return jsonrpc2.ID{}, fmt.Errorf("id must be a number or a string, got %s", truncate(string(raw), 40))
}

// stringIDKey returns the name of the jsonrpc2.ID for the JSON string
// raw (quotes included): its value, so that "\u0041" and "A" are one id.
// Two ids are distinct when their values are, which takes more than
// encoding/json: it turns a lone surrogate escape and an invalid UTF-8
// byte into U+FFFD, making "\ud800x", "\udbffx" and "\ufffdx" one id.
// Such a string is named by a stand-in that spells what Go would replace
// (see decodeStringID); so are "" (the library's ID cannot tell it from
// the number 0) and a value that starts with U+2063, the first character
// of every stand-in, so no client string equals a stand-in.
func stringIDKey(raw []byte) (string, error) {
	str, exact, ok := decodeStringID(raw, false)
	if !ok {
		return "", fmt.Errorf("invalid string id %s", truncate(string(raw), 40))
	}
	if !exact {
		str, _, _ = decodeStringID(raw, true)
		return stringIDPrefix + "~" + str, nil
	}
	if str == "" || strings.HasPrefix(str, "\u2063") {
		return stringIDPrefix + str, nil
	}
	return str, nil
}

// decodeStringID decodes the JSON string raw (quotes included). exact is
// false when the value holds what a Go string cannot carry as such: a
// lone UTF-16 surrogate (an escape) or a byte that is not UTF-8. With
// spell, those are written as \uXXXX and \xHH and a backslash as two,
// which makes the decoding one to one; without, they are dropped (the
// caller asks again with spell). ok is false for text that is not a JSON
// string.
func decodeStringID(raw []byte, spell bool) (s string, exact, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return "", false, false
	}
	in := raw[1 : len(raw)-1]
	if !spell && utf8.Valid(in) && bytes.IndexByte(in, '\\') < 0 {
		for _, c := range in {
			if c < 0x20 || c == '"' {
				return "", false, false
			}
		}
		return string(in), true, true
	}
	out := make([]byte, 0, len(in))
	exact = true
	hex4 := func(b []byte) (rune, bool) {
		if len(b) < 4 {
			return 0, false
		}
		var r rune
		for _, c := range b[:4] {
			switch {
			case c >= '0' && c <= '9':
				c -= '0'
			case c >= 'a' && c <= 'f':
				c -= 'a' - 10
			case c >= 'A' && c <= 'F':
				c -= 'A' - 10
			default:
				return 0, false
			}
			r = r<<4 | rune(c)
		}
		return r, true
	}
	const hexDigits = "0123456789abcdef"
	for i := 0; i < len(in); {
		c := in[i]
		switch {
		case c == '"' || c < 0x20:
			return "", false, false
		case c == '\\':
			if i+1 >= len(in) {
				return "", false, false
			}
			e := in[i+1]
			i += 2
			switch e {
			case '"', '/':
				out = append(out, e)
			case '\\':
				out = append(out, '\\')
				if spell {
					out = append(out, '\\')
				}
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r, ok := hex4(in[i:])
				if !ok {
					return "", false, false
				}
				i += 4
				if utf16.IsSurrogate(r) {
					if r < 0xdc00 && i+1 < len(in) && in[i] == '\\' && in[i+1] == 'u' {
						if r2, ok := hex4(in[i+2:]); ok && r2 >= 0xdc00 && r2 <= 0xdfff {
							out = utf8.AppendRune(out, utf16.DecodeRune(r, r2))
							i += 6
							continue
						}
					}
					exact = false
					if spell {
						out = append(out, '\\', 'u', hexDigits[r>>12], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
					}
					continue
				}
				out = utf8.AppendRune(out, r)
				if r == '\\' && spell {
					out = append(out, '\\')
				}
			default:
				return "", false, false
			}
		case c < utf8.RuneSelf:
			out = append(out, c)
			i++
		default:
			r, n := utf8.DecodeRune(in[i:])
			if r == utf8.RuneError && n == 1 {
				exact = false
				if spell {
					out = append(out, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
				}
				i++
				continue
			}
			out = append(out, in[i:i+n]...)
			i += n
		}
	}
	return string(out), exact, true
}

// canonicalNumber parses a JSON number and returns one spelling per value,
// "[-]DIGITSeN" meaning 0.DIGITS × 10^N with no leading or trailing zero
// in DIGITS ("0" for zero), and, when the value is an integer that fits
// int32, that integer. It does no arithmetic on the exponent beyond
// adding lengths, so "1e999999999" costs no more than "1". ok is false
// for text that is not a JSON number.
func canonicalNumber(raw string) (canon string, v int32, isInt32, ok bool) {
	s := raw
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	digitsAt := func(s string) int {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := digitsAt(s)
	if i == 0 || (i > 1 && s[0] == '0') {
		return "", 0, false, false
	}
	intPart, frac := s[:i], ""
	s = s[i:]
	if strings.HasPrefix(s, ".") {
		j := digitsAt(s[1:])
		if j == 0 {
			return "", 0, false, false
		}
		frac, s = s[1:1+j], s[1+j:]
	}
	var exp int64
	if len(s) > 0 && (s[0] == 'e' || s[0] == 'E') {
		s = s[1:]
		expNeg := false
		if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
			expNeg, s = s[0] == '-', s[1:]
		}
		j := digitsAt(s)
		if j == 0 {
			return "", 0, false, false
		}
		e := strings.TrimLeft(s[:j], "0")
		if len(e) > 15 {
			// Beyond any sensible id: keep the spelling as it is.
			return raw, 0, false, s[j:] == ""
		}
		exp, _ = strconv.ParseInt("0"+e, 10, 64)
		if expNeg {
			exp = -exp
		}
		s = s[j:]
	}
	if s != "" {
		return "", 0, false, false
	}
	digits := intPart + frac
	point := int64(len(intPart)) + exp
	trimmed := strings.TrimLeft(digits, "0")
	point -= int64(len(digits) - len(trimmed))
	digits = strings.TrimRight(trimmed, "0")
	if digits == "" {
		return "0", 0, true, true
	}
	canon = digits + "e" + strconv.FormatInt(point, 10)
	if neg {
		canon = "-" + canon
	}
	if point >= int64(len(digits)) && point <= 10 {
		n, err := strconv.ParseInt(digits+strings.Repeat("0", int(point)-len(digits)), 10, 64)
		if neg {
			n = -n
		}
		if err == nil && n >= math.MinInt32 && n <= math.MaxInt32 {
			return canon, int32(n), true, true
		}
	}
	return canon, 0, false, true
}

// Write sends one message. It deliberately ignores ctx: a reply must reach
// the client even when the request's context was cancelled
// (docs/protocol-pitfalls.md, "A reply on a cancelled context is dropped").
//
// A reply to a request (whose raw id is always known, see decodeLarge) is
// encoded here, with the id exactly as sent: the library's own encoding (Response.MarshalJSON)
// builds codecs for its wire types on first use, which the first reply,
// initialize's, paid for.
func (s *stream) Write(_ context.Context, msg jsonrpc2.Message) (int64, error) {
	if resp, ok := msg.(*jsonrpc2.Response); ok {
		s.idmu.Lock()
		raw, ok := s.rawIDs[resp.ID()]
		delete(s.rawIDs, resp.ID())
		s.idmu.Unlock()
		if ok {
			data, err := encodeResponse(raw, resp)
			if err != nil {
				return 0, fmt.Errorf("marshaling message: %w", err)
			}
			return s.writeFrame(data)
		}
	}
	data, err := json.Marshal(msg)
	if err != nil {
		return 0, fmt.Errorf("marshaling message: %w", err)
	}
	return s.writeFrame(data)
}

// encodeResponse encodes resp with the raw id rawID. An error that is not
// a *jsonrpc2.Error goes out as an internal error (never code 0:
// docs/protocol-pitfalls.md, "Plain errors go out with code 0"); a missing
// result as null.
func encodeResponse(rawID json.RawMessage, resp *jsonrpc2.Response) ([]byte, error) {
	b := make([]byte, 0, 64+len(resp.Result()))
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, rawID...)
	if err := resp.Err(); err != nil {
		var rpcErr *jsonrpc2.Error
		if !errors.As(err, &rpcErr) {
			rpcErr = jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
		}
		e, err := json.Marshal(rpcErr)
		if err != nil {
			return nil, err
		}
		b = append(b, `,"error":`...)
		b = append(b, e...)
		return append(b, '}'), nil
	}
	result := resp.Result()
	if len(result) == 0 {
		result = json.RawMessage("null")
	}
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}'), nil
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
	frame := lspwire.AppendFrame(make([]byte, 0, len(data)+32), data)
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
