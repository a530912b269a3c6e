package verify

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
		want     []string
		err      error
	}{
		{"two frames", "Content-Length: 2\r\n\r\n{}Content-Length: 4\r\nContent-Type: x\r\n\r\nnull", []string{"{}", "null"}, io.EOF},
		{"bare newlines and any case", "content-length:2\n\n[]", []string{"[]"}, io.EOF},
		{"no length", "X: 1\r\n\r\n{}", nil, errFrame},
		{"bad length", "Content-Length: -1\r\n\r\n", nil, errFrame},
		{"over the cap", "Content-Length: 99999999999\r\n\r\n", nil, errFrame},
		{"header without colon", "nonsense\r\n\r\n", nil, errFrame},
		{"header line too long", strings.Repeat("x", maxHeaderLine+10) + "\r\n", nil, errFrame},
		{"body cut short", "Content-Length: 10\r\n\r\n{}", nil, io.ErrUnexpectedEOF},
		{"headers cut short", "Content-Length: 10\r\n", nil, io.ErrUnexpectedEOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tc.in))
			var got []string
			var err error
			for {
				var b []byte
				if b, err = readFrame(r); err != nil {
					break
				}
				got = append(got, string(b))
			}
			if !errors.Is(err, tc.err) || strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte("Content-Length: 2\r\n\r\n{}"))
	f.Add([]byte("Content-Length: 5\r\n\r\n{}"))
	f.Add([]byte("content-length:0\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bufio.NewReader(bytes.NewReader(in))
		total := 0
		for {
			b, err := readFrame(r)
			if err != nil {
				return
			}
			total += len(b)
			if total > len(in) {
				t.Fatalf("read %d body bytes from %d input bytes", total, len(in))
			}
			// What we read, framed again, reads back the same.
			var buf bytes.Buffer
			if err := writeFrame(&buf, b); err != nil {
				t.Fatal(err)
			}
			again, err := readFrame(bufio.NewReader(&buf))
			if err != nil || !bytes.Equal(again, b) {
				t.Fatalf("round trip: got %q, %v; want %q", again, err, b)
			}
		}
	})
}
