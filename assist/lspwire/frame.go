// Package lspwire is the one reader and writer of the LSP base protocol's
// Content-Length frames, shared by the server (lsp), the helper client
// (assist/verify) and the test harness (lsp/lsptest). It imports nothing
// of this module and no protocol library.
//
// The reader is hardened against hostile input: a header line over
// MaxHeaderLine bytes is an error as soon as the limit is passed, a frame
// announcing more than the caller's limit is refused before its body is
// read, and a body grows with the bytes that arrive, not with what the
// header claims. What to do after a malformed frame is the caller's: the
// server skips to the next header (SkipToHeader), the helper client ends
// the connection.
package lspwire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// MaxHeaderLine bounds one header line; a longer one is a malformed header.
const MaxHeaderLine = 4 << 10

// ExactBodyMax is the frame size up to which a body is read into a buffer
// of exactly its size; a larger one grows with the bytes that arrive.
const ExactBodyMax = 1 << 20

// headerMarker starts the header SkipToHeader looks for.
const headerMarker = "Content-Length:"

// ErrMalformed is matched (errors.Is) by every error ReadFrame returns for
// a frame that breaks the framing rules: a *HeaderError or a
// *TooLargeError.
var ErrMalformed = errors.New("malformed frame")

// HeaderError is a malformed header block: a line without a colon, a line
// over MaxHeaderLine bytes, an invalid or missing Content-Length. Msg says
// which; Error returns it as it is.
type HeaderError struct{ Msg string }

func (e *HeaderError) Error() string { return e.Msg }

// Is reports whether target is ErrMalformed.
func (e *HeaderError) Is(target error) bool { return target == ErrMalformed }

// TooLargeError is a frame whose Content-Length exceeds the reader's
// limit; its body was not read.
type TooLargeError struct {
	// Length is what the header announced, Limit the bound it exceeds.
	Length, Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("frame of %d bytes exceeds the limit of %d bytes", e.Length, e.Limit)
}

// Is reports whether target is ErrMalformed.
func (e *TooLargeError) Is(target error) bool { return target == ErrMalformed }

// ReadFrame reads one frame from r and returns its body and the number of
// bytes it consumed. Blank lines before a header are skipped; header
// names are matched without regard to case, and headers other than
// Content-Length are ignored. A body over limit bytes is refused with a
// *TooLargeError before any of it is read, a malformed header is a
// *HeaderError (both match ErrMalformed); the input is then left where
// the reader stopped (see SkipToHeader). It returns io.EOF when the input
// ends before a frame starts, io.ErrUnexpectedEOF when it ends inside the
// header, and an error wrapping io.ErrUnexpectedEOF ("reading frame
// body: …") inside the body.
func ReadFrame(r *bufio.Reader, limit int64) ([]byte, int64, error) {
	length, n, err := readHeader(r)
	if err != nil {
		return nil, n, err
	}
	if length > limit {
		return nil, n, &TooLargeError{Length: length, Limit: limit}
	}
	body, m, err := readBody(r, length)
	n += m
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, n, fmt.Errorf("reading frame body: %w", err)
	}
	return body, n, nil
}

// readBody reads a frame body of length bytes. (A growing bytes.Buffer read
// twice the memory of a small frame: bytes.Buffer.ReadFrom grows by 512
// bytes before each read, so every frame was copied into a second buffer.)
func readBody(r *bufio.Reader, length int64) ([]byte, int64, error) {
	if length <= ExactBodyMax {
		body := make([]byte, length)
		n, err := io.ReadFull(r, body)
		return body, int64(n), err
	}
	buf := bytes.NewBuffer(make([]byte, 0, ExactBodyMax))
	n, err := io.CopyN(buf, r, length)
	return buf.Bytes(), n, err
}

// readHeader reads one header block and returns the Content-Length.
func readHeader(r *bufio.Reader) (length int64, n int64, err error) {
	length = -1
	seen := false
	for {
		line, m, err := readLine(r)
		n += m
		if err != nil {
			if err == io.EOF && n == 0 {
				return 0, n, io.EOF
			}
			if err == io.EOF {
				return 0, n, io.ErrUnexpectedEOF
			}
			return 0, n, err
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
			return 0, n, &HeaderError{fmt.Sprintf("header line %q has no colon", truncate(line, 80))}
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || v < 0 {
				return 0, n, &HeaderError{fmt.Sprintf("invalid Content-Length %q", truncate(value, 40))}
			}
			length = v
		}
	}
	if length < 0 {
		return 0, n, &HeaderError{"missing Content-Length header"}
	}
	return length, n, nil
}

// readLine reads one header line, newline included. A line longer than
// MaxHeaderLine is a *HeaderError, returned as soon as the limit is
// passed (the rest is left unread).
func readLine(r *bufio.Reader) (string, int64, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > MaxHeaderLine {
			return "", int64(len(line)), &HeaderError{fmt.Sprintf("header line longer than %d bytes: %q", MaxHeaderLine, truncate(string(line), 40))}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return string(line), int64(len(line)), err
	}
}

// SkipToHeader discards input up to the next "Content-Length:" (left
// unread), after a malformed or refused frame whose end is unknown, and
// returns how many bytes it discarded. It holds at most r's buffer in
// memory however much it skips, and returns as soon as the marker is
// buffered. A body that itself holds the text "Content-Length:"
// resynchronises there; the frame read from there is then malformed in
// turn. At the input's end it returns io.ErrUnexpectedEOF when it skipped
// something, else io.EOF.
func SkipToHeader(r *bufio.Reader) (int64, error) {
	var skipped int64
	need := 1
	for {
		if _, err := r.Peek(need); err != nil {
			// Whatever is left cannot hold a header.
			n, _ := r.Discard(r.Buffered())
			skipped += int64(n)
			if err == io.EOF && skipped > 0 {
				err = io.ErrUnexpectedEOF
			}
			return skipped, err
		}
		b, _ := r.Peek(r.Buffered())
		if i := bytes.Index(b, []byte(headerMarker)); i >= 0 {
			n, _ := r.Discard(i)
			return skipped + int64(n), nil
		}
		// Keep a tail that may be the start of the marker.
		keep := min(len(b), len(headerMarker)-1)
		n, _ := r.Discard(len(b) - keep)
		skipped += int64(n)
		need = keep + 1
	}
}

// AppendFrame appends body, framed with its Content-Length header, to dst.
func AppendFrame(dst, body []byte) []byte {
	dst = append(dst, "Content-Length: "...)
	dst = strconv.AppendInt(dst, int64(len(body)), 10)
	dst = append(dst, "\r\n\r\n"...)
	return append(dst, body...)
}

// WriteFrame writes body as one frame, header and body in one Write call
// (so that writers serialised by a lock never interleave), and returns
// the bytes written.
func WriteFrame(w io.Writer, body []byte) (int, error) {
	return w.Write(AppendFrame(make([]byte, 0, len(body)+32), body))
}

// truncate cuts s to at most n bytes, marking the cut with "…".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
