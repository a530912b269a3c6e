package model

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// maxSSELine bounds one line and one event of a server-sent event stream, so
// a hostile or broken server cannot grow memory without limit.
const maxSSELine = 8 << 20

// sseEvent is one dispatched server-sent event.
type sseEvent struct {
	// Type is the event field ("" for the default "message").
	Type string
	// Data is the data lines joined by "\n". It aliases the reader's buffer
	// and is valid until the next call of next.
	Data []byte
}

// sseReader reads server-sent events (the WHATWG event-stream format) from
// r: lines end with LF, CRLF or a lone CR (also when the CR and LF arrive in
// different reads), lines starting with ':' are comments (keep-alives),
// several data lines join with "\n", an event is dispatched at a blank line.
// A stream that ends inside a line is torn: next returns an error wrapping
// ErrTruncated rather than a shortened event. A last event whose lines are
// whole but whose blank line is missing is still delivered.
type sseReader struct {
	br     *bufio.Reader
	line   []byte // current line (without terminator)
	data   []byte // data of the event being read
	typ    []byte
	hasDat bool // a data field was seen since the last dispatch
	skipLF bool // the previous line ended with CR: a leading LF belongs to it
	err    error
}

func newSSEReader(r io.Reader) *sseReader {
	return &sseReader{br: bufio.NewReaderSize(r, 16<<10)}
}

// next returns the next event, io.EOF at a clean end (after a blank line),
// or an error wrapping ErrTruncated for a torn stream.
func (s *sseReader) next() (sseEvent, error) {
	if s.err != nil {
		return sseEvent{}, s.err
	}
	for {
		line, err := s.readLine()
		if err != nil {
			s.err = err
			if err == io.EOF && s.hasDat {
				// The last event lacks its blank line but every line of it
				// was whole: deliver it (a torn line is an error above).
				s.hasDat = false
				return sseEvent{Type: string(s.typ), Data: s.data}, nil
			}
			return sseEvent{}, err
		}
		if len(line) == 0 {
			if !s.hasDat {
				s.typ = s.typ[:0]
				continue
			}
			ev := sseEvent{Type: string(s.typ), Data: s.data}
			s.hasDat = false
			s.typ = s.typ[:0]
			return ev, nil
		}
		if line[0] == ':' {
			continue // comment or keep-alive
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if s.hasDat {
				s.data = append(s.data, '\n')
			} else {
				s.data = s.data[:0] // the previous event's data is no longer needed
			}
			if len(s.data)+len(value) > maxSSELine {
				s.err = fmt.Errorf("server-sent event larger than %d bytes", maxSSELine)
				return sseEvent{}, s.err
			}
			s.data = append(s.data, value...)
			s.hasDat = true
		case "event":
			s.typ = append(s.typ[:0], value...)
		}
		// id and retry matter only to browsers reconnecting; others are ignored.
	}
}

// readLine returns the next line without its terminator. The slice is valid
// until the next call. At EOF after a partial line it returns an error
// wrapping ErrTruncated; at EOF on a line boundary, io.EOF.
func (s *sseReader) readLine() ([]byte, error) {
	s.line = s.line[:0]
	for {
		if s.br.Buffered() == 0 {
			if _, err := s.br.Peek(1); err != nil {
				if errors.Is(err, io.EOF) {
					if len(s.line) > 0 {
						return nil, fmt.Errorf("%w: stream ended in the middle of a line", ErrTruncated)
					}
					return nil, io.EOF
				}
				return nil, err
			}
		}
		buf, _ := s.br.Peek(s.br.Buffered())
		if s.skipLF {
			s.skipLF = false
			if buf[0] == '\n' {
				s.br.Discard(1)
				continue
			}
		}
		i := bytes.IndexAny(buf, "\r\n")
		if i < 0 {
			if len(s.line)+len(buf) > maxSSELine {
				return nil, fmt.Errorf("server-sent event line longer than %d bytes", maxSSELine)
			}
			s.line = append(s.line, buf...)
			s.br.Discard(len(buf))
			continue
		}
		if len(s.line)+i > maxSSELine {
			return nil, fmt.Errorf("server-sent event line longer than %d bytes", maxSSELine)
		}
		s.line = append(s.line, buf[:i]...)
		if buf[i] == '\r' {
			if i+1 < len(buf) {
				if buf[i+1] == '\n' {
					i++
				}
			} else {
				s.skipLF = true // the LF, if any, is in the next read
			}
		}
		s.br.Discard(i + 1)
		return s.line, nil
	}
}
