package lsp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"

	"io"
	"log/slog"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"

	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
)

// refPosition is the reference model's position → offset for UTF-16 or
// UTF-8 columns: a plain scan, obviously right and slow. Line ends are \n,
// \r\n and \r.
func refOffset(text string, line, char int, utf8cols bool) int {
	off := 0
	for l := 0; l < line; l++ {
		i := strings.IndexAny(text[off:], "\r\n")
		if i < 0 {
			return len(text)
		}
		off += i
		if text[off] == '\r' && off+1 < len(text) && text[off+1] == '\n' {
			off += 2
		} else {
			off++
		}
	}
	end := len(text)
	if i := strings.IndexAny(text[off:], "\r\n"); i >= 0 {
		end = off + i
	}
	col := 0
	for off < end && col < char {
		r, size := utf8.DecodeRuneInString(text[off:])
		w := size
		if !utf8cols {
			w = len(utf16.Encode([]rune{r}))
		}
		if col+w > char {
			break
		}
		col += w
		off += size
	}
	return off
}

// refPositionOf is the inverse: the position of a rune-aligned offset.
func refPositionOf(text string, off int, utf8cols bool) (int, int) {
	line, start := 0, 0
	for i := 0; i < off; i++ {
		if text[i] == '\n' || text[i] == '\r' && (i+1 >= len(text) || text[i+1] != '\n') {
			line++
			start = i + 1
		}
	}
	col := 0
	for _, r := range text[start:off] {
		if utf8cols {
			col += utf8.RuneLen(r)
		} else {
			col += len(utf16.Encode([]rune{r}))
		}
	}
	return line, col
}

// runeStarts returns the offsets where a rune starts (and len(text)),
// never inside a \r\n pair.
func runeStarts(text string) []int {
	var out []int
	for i := range text {
		if i > 0 && text[i-1] == '\r' && text[i] == '\n' {
			continue
		}
		out = append(out, i)
	}
	return append(out, len(text))
}

// TestSyncRandomEdits sends random incremental edits (multibyte runes,
// surrogate pairs, all three line ends) through the protocol in both
// encodings and compares the server's text with a reference model after
// every batch.
func TestSyncRandomEdits(t *testing.T) {
	pieces := []string{"a", "bc", "é", "😀", "中文", "\n", "\r\n", "\r", " ", "\t", "x😀y\n", ""}
	for _, enc := range []string{"utf-16", "utf-8"} {
		t.Run(enc, func(t *testing.T) {
			s := newSession(t, nil)
			p := lsptest.DefaultInitializeParams("")
			p["capabilities"].(map[string]any)["general"] = map[string]any{"positionEncodings": []string{enc}}
			s.initialize(p)
			rnd := rand.New(rand.NewPCG(1, uint64(len(enc))))
			uri := "file:///tmp/sync.txt"
			text := "héllo\r\nwörld 😀\rend\n"
			s.open(uri, text)
			version := int32(1)
			for batch := 0; batch < 60; batch++ {
				var changes []any
				for k := 0; k < 1+rnd.IntN(4); k++ {
					starts := runeStarts(text)
					a, b := starts[rnd.IntN(len(starts))], starts[rnd.IntN(len(starts))]
					if a > b {
						a, b = b, a
					}
					ins := pieces[rnd.IntN(len(pieces))] + pieces[rnd.IntN(len(pieces))]
					if rnd.IntN(20) == 0 {
						changes = append(changes, map[string]any{"text": ins}) // full replace
						text = ins
						continue
					}
					l1, c1 := refPositionOf(text, a, enc == "utf-8")
					l2, c2 := refPositionOf(text, b, enc == "utf-8")
					if got := refOffset(text, l1, c1, enc == "utf-8"); got != a {
						t.Fatalf("reference model inconsistent: %d:%d → %d, want %d", l1, c1, got, a)
					}
					changes = append(changes, map[string]any{"range": rng(l1, c1, l2, c2), "text": ins})
					text = text[:a] + ins + text[b:]
				}
				version++
				s.ed.Notify("textDocument/didChange", map[string]any{
					"textDocument": map[string]any{"uri": uri, "version": version}, "contentChanges": changes,
				})
				if got := s.text(uri, version); got != text {
					t.Fatalf("batch %d: server text %q, want %q", batch, got, text)
				}
			}
		})
	}
}

// FuzzStream feeds arbitrary bytes to the frame reader: it must never
// panic, must return only well-formed messages, and must end with an error
// (the input's end) rather than loop.
func FuzzStream(f *testing.F) {
	for _, seed := range []string{
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: 40\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\"}",
		"Content-Length: 5\r\n\r\n{\"id\"",
		"Content-Type: x\r\n\r\n{}Content-Length: 2\r\n\r\n{}",
		"Content-Length: -1\r\n\r\n",
		"Content-Length: 99999999999\r\n\r\n",
		"garbage\r\n\r\n",
		"Content-Length: 51\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":4294967296,\"method\":\"a\"}",
		"\r\n\r\nContent-Length: 2\r\n\r\n[]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		s := newStream(bytes.NewReader(data), &out, nil, slog.New(slog.DiscardHandler))
		for i := 0; i < len(data)+2; i++ {
			msg, _, err := s.Read(context.Background())
			if err != nil {
				break
			}
			switch msg.(type) {
			case *jsonrpc2.Call, *jsonrpc2.Notification, *jsonrpc2.Response:
			default:
				t.Fatalf("Read returned %T", msg)
			}
			if i == len(data)+1 {
				t.Fatal("Read keeps returning messages past the input")
			}
		}
		// Every error reply written is a well-formed frame.
		r := bufio.NewReader(&out)
		for {
			body, err := lsptest.ReadFrame(r)
			if err == io.EOF {
				break
			}
			if err != nil || !json.Valid(body) {
				t.Fatalf("malformed reply frame: %v %q", err, body)
			}
		}
	})
}
