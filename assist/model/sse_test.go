package model

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAllEvents reads every event of r, rendered as "type|data" lines, and
// the final error (nil for a clean io.EOF).
func readAllEvents(r io.Reader) ([]string, error) {
	s := newSSEReader(r)
	var out []string
	for {
		ev, err := s.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, ev.Type+"|"+string(ev.Data))
	}
}

// splitReader returns the input in reads of the given sizes, cycling.
type splitReader struct {
	b     []byte
	sizes []int
	i     int
}

func (r *splitReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := r.sizes[r.i%len(r.sizes)]
	r.i++
	n = min(n, len(p), len(r.b))
	copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name  string
		in    string
		want  []string
		wantE error // nil: clean end
	}{
		{"lf", "data: a\n\ndata: b\n\n", []string{"|a", "|b"}, nil},
		{"crlf", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"|a", "|b"}, nil},
		{"lone cr", "data: a\r\rdata: b\r\r", []string{"|a", "|b"}, nil},
		{"mixed endings", "data: a\r\n\ndata: b\r\rdata: c\n\r\n", []string{"|a", "|b", "|c"}, nil},
		{"no space after colon", "data:[DONE]\n\n", []string{"|[DONE]"}, nil},
		{"only one space stripped", "data:  x\n\n", []string{"| x"}, nil},
		{"multi-line data", "data: a\ndata: b\n\n", []string{"|a\nb"}, nil},
		{"empty data line", "data\n\n", []string{"|"}, nil},
		{"comments and keep-alives", ": keep-alive\n\n:ping\ndata: x\n: mid\n\n", []string{"|x"}, nil},
		{"event type", "event: error\ndata: {}\n\ndata: y\n\n", []string{"error|{}", "|y"}, nil},
		{"id and retry ignored", "id: 7\nretry: 100\ndata: z\n\n", []string{"|z"}, nil},
		{"unknown field ignored", "foo: bar\ndata: z\n\n", []string{"|z"}, nil},
		{"blank lines without data", "\n\n\n\ndata: q\n\n\n", []string{"|q"}, nil},
		{"empty stream", "", nil, nil},
		{"last event lacks blank line", "data: a\n\ndata: [DONE]\n", []string{"|a", "|[DONE]"}, nil},
		{"torn line", "data: a\n\ndata: {\"id\":", []string{"|a"}, ErrTruncated},
		{"torn after cr only", "data: a\r\n\r\ndata: b", []string{"|a"}, ErrTruncated},
		{"utf-8", "data: 上下文缓存\n\n", []string{"|上下文缓存"}, nil},
	}
	readers := map[string]func(string) io.Reader{
		"whole":    func(s string) io.Reader { return strings.NewReader(s) },
		"one byte": func(s string) io.Reader { return iotest.OneByteReader(strings.NewReader(s)) },
		"odd":      func(s string) io.Reader { return &splitReader{b: []byte(s), sizes: []int{3, 1, 7, 2}} },
		"half":     func(s string) io.Reader { return iotest.HalfReader(strings.NewReader(s)) },
	}
	for _, tc := range tests {
		for rname, mk := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				got, err := readAllEvents(mk(tc.in))
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("got events %q, want %q", got, tc.want)
				}
				if tc.wantE == nil && err != nil || tc.wantE != nil && !errors.Is(err, tc.wantE) {
					t.Errorf("got error %v, want %v", err, tc.wantE)
				}
			})
		}
	}
}

// TestSSEReaderCRLFSplitAcrossReads: a CR ending one read and its LF
// starting the next make one line end, not a line and a blank line (which
// would dispatch a multi-line event early).
func TestSSEReaderCRLFSplitAcrossReads(t *testing.T) {
	in := "data: a\r\ndata: b\r\n\r\n"
	for cut := 1; cut < len(in); cut++ {
		r := &splitReader{b: []byte(in), sizes: []int{cut, len(in)}}
		got, err := readAllEvents(r)
		if err != nil || len(got) != 1 || got[0] != "|a\nb" {
			t.Errorf("cut at %d: got %q, %v", cut, got, err)
		}
	}
}

func TestSSEReaderLimits(t *testing.T) {
	long := "data: " + strings.Repeat("x", maxSSELine+10) + "\n\n"
	_, err := readAllEvents(strings.NewReader(long))
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("over-long line: got %v", err)
	}
	many := strings.Repeat("data: "+strings.Repeat("y", 1<<20)+"\n", 9) + "\n"
	_, err = readAllEvents(strings.NewReader(many))
	if err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("over-large event: got %v", err)
	}
}

// TestSSEReaderReadError: a read error other than EOF is returned as it is.
func TestSSEReaderReadError(t *testing.T) {
	boom := errors.New("boom")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom))
	got, err := readAllEvents(r)
	if len(got) != 1 || !errors.Is(err, boom) {
		t.Errorf("got %q, %v", got, err)
	}
}

// FuzzSSEReader: the reader never panics, never returns an event larger
// than its limit, and gives the same events and the same kind of ending
// whatever the read sizes are.
func FuzzSSEReader(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "data: a\r\n\r\n", "data: a\r\rdata: b\r\r", ": c\n\ndata: x\ndata: y\n\n",
		"event: error\ndata: {}\n\n", "data:[DONE]\n", "data: {\"id\":", "\r\n\r", "data: a\r",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
	} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		whole, errWhole := readAllEvents(bytes.NewReader(in))
		sizes := []int{int(step%7) + 1, int(step%3) + 1}
		pieces, errPieces := readAllEvents(&splitReader{b: in, sizes: sizes})
		if fmt.Sprint(whole) != fmt.Sprint(pieces) {
			t.Fatalf("events depend on read sizes:\nwhole  %q\npieces %q", whole, pieces)
		}
		if (errWhole == nil) != (errPieces == nil) || errors.Is(errWhole, ErrTruncated) != errors.Is(errPieces, ErrTruncated) {
			t.Fatalf("ending depends on read sizes: %v vs %v", errWhole, errPieces)
		}
		for _, e := range whole {
			if len(e) > maxSSELine+64 {
				t.Fatalf("event of %d bytes", len(e))
			}
		}
	})
}
