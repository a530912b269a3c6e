package lspwire

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestReadFrame(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		limit    int64
		want     []string
		err      error  // what the last read returns (errors.Is)
		msg      string // its text, when not ""
	}{
		{"two frames", "Content-Length: 2\r\n\r\n{}Content-Length: 4\r\nContent-Type: x\r\n\r\nnull", 10, []string{"{}", "null"}, io.EOF, ""},
		{"bare newlines, any case, stray blank lines", "\r\n\ncontent-length:2\n\n[]\r\n", 10, []string{"[]"}, io.ErrUnexpectedEOF, ""},
		{"empty body", "Content-Length: 0\r\n\r\n", 10, []string{""}, io.EOF, ""},
		{"no length", "X: 1\r\n\r\n{}", 10, nil, ErrMalformed, "missing Content-Length header"},
		{"bad length", "Content-Length: -1\r\n\r\n", 10, nil, ErrMalformed, `invalid Content-Length " -1"`},
		{"header without colon", "nonsense\r\n\r\n", 10, nil, ErrMalformed, `header line "nonsense" has no colon`},
		{"header line too long", strings.Repeat("x", MaxHeaderLine+10) + "\r\n", 10, nil, ErrMalformed, "header line longer than 4096 bytes: "},
		{"over the limit", "Content-Length: 11\r\n\r\n", 10, nil, ErrMalformed, "frame of 11 bytes exceeds the limit of 10 bytes"},
		{"at the limit", "Content-Length: 10\r\n\r\n0123456789", 10, []string{"0123456789"}, io.EOF, ""},
		{"body cut short", "Content-Length: 10\r\n\r\n{}", 10, nil, io.ErrUnexpectedEOF, "reading frame body: unexpected EOF"},
		{"headers cut short", "Content-Length: 10\r\n", 10, nil, io.ErrUnexpectedEOF, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tc.in))
			var got []string
			var err error
			consumed := int64(0)
			for {
				var b []byte
				var n int64
				b, n, err = ReadFrame(r, tc.limit)
				consumed += n
				if err != nil {
					break
				}
				got = append(got, string(b))
			}
			if !errors.Is(err, tc.err) || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
			if tc.msg != "" && !strings.HasPrefix(err.Error(), tc.msg) {
				t.Errorf("error %q, want it to start with %q", err, tc.msg)
			}
			if consumed > int64(len(tc.in)) {
				t.Errorf("consumed %d bytes of %d", consumed, len(tc.in))
			}
		})
	}
}

// TestTooLargeNotRead: a refused frame's body is not read, and the reader
// finds the next frame with SkipToHeader.
func TestTooLargeNotRead(t *testing.T) {
	in := "Content-Length: 1099511627776\r\n\r\n" + strings.Repeat("y", 100<<10) + "Content-Length: 2\r\n\r\n{}"
	r := bufio.NewReader(strings.NewReader(in))
	_, n, err := ReadFrame(r, 1<<20)
	var big *TooLargeError
	if !errors.As(err, &big) || big.Length != 1<<40 || big.Limit != 1<<20 {
		t.Fatalf("ReadFrame = %v; want a *TooLargeError", err)
	}
	if n != int64(len("Content-Length: 1099511627776\r\n\r\n")) {
		t.Errorf("consumed %d bytes; want the header's only", n)
	}
	skipped, err := SkipToHeader(r)
	if err != nil || skipped != 100<<10 {
		t.Fatalf("SkipToHeader = %d, %v", skipped, err)
	}
	if b, _, err := ReadFrame(r, 1<<20); err != nil || string(b) != "{}" {
		t.Fatalf("next frame %q, %v", b, err)
	}
	if _, err := SkipToHeader(r); err != io.EOF {
		t.Errorf("SkipToHeader at the end = %v; want io.EOF", err)
	}
	r = bufio.NewReader(strings.NewReader("no header here"))
	if n, err := SkipToHeader(r); err != io.ErrUnexpectedEOF || n != 14 {
		t.Errorf("SkipToHeader without a header = %d, %v", n, err)
	}
}

// TestLargeBodyGrows: a body over ExactBodyMax is read whole.
func TestLargeBodyGrows(t *testing.T) {
	body := bytes.Repeat([]byte("z"), ExactBodyMax+100)
	var buf bytes.Buffer
	if n, err := WriteFrame(&buf, body); err != nil || n != buf.Len() {
		t.Fatal(n, err)
	}
	got, _, err := ReadFrame(bufio.NewReader(&buf), 2*ExactBodyMax)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("read %d bytes, %v", len(got), err)
	}
}

func TestAppendFrame(t *testing.T) {
	if got := string(AppendFrame([]byte("x"), []byte("{}"))); got != "xContent-Length: 2\r\n\r\n{}" {
		t.Errorf("AppendFrame = %q", got)
	}
}

// FuzzFrames: any input reads without a panic, consumes no more than it
// holds, ends (SkipToHeader after each malformed frame, as the server
// does), and every body read, framed again, reads back the same.
func FuzzFrames(f *testing.F) {
	for _, seed := range []string{
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: 5\r\n\r\n{}",
		"content-length:0\n\n",
		"\r\n\r\nContent-Length: 2\r\n\r\n[]",
		"Content-Length: 99999999999\r\n\r\nContent-Length: 1\r\n\r\nx",
		"garbage\r\n\r\nContent-Length: 1\r\n\r\nx",
	} {
		f.Add([]byte(seed), uint16(16))
	}
	f.Fuzz(func(t *testing.T, in []byte, limit uint16) {
		r := bufio.NewReaderSize(bytes.NewReader(in), 16)
		var consumed int64
		for i := 0; ; i++ {
			if i > len(in)+2 {
				t.Fatal("the reader keeps going past the input")
			}
			b, n, err := ReadFrame(r, int64(limit))
			consumed += n
			if errors.Is(err, ErrMalformed) {
				n, err = SkipToHeader(r)
				consumed += n
			}
			if consumed > int64(len(in)) {
				t.Fatalf("consumed %d bytes of %d", consumed, len(in))
			}
			if err != nil {
				if errors.Is(err, ErrMalformed) {
					t.Fatalf("SkipToHeader returned %v", err)
				}
				return
			}
			if b == nil {
				continue
			}
			if len(b) > int(limit) {
				t.Fatalf("a body of %d bytes over the limit %d", len(b), limit)
			}
			var buf bytes.Buffer
			if _, err := WriteFrame(&buf, b); err != nil {
				t.Fatal(err)
			}
			again, _, err := ReadFrame(bufio.NewReader(&buf), int64(limit))
			if err != nil || !bytes.Equal(again, b) {
				t.Fatalf("round trip: got %q, %v; want %q", again, err, b)
			}
		}
	})
}
