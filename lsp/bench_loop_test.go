package lsp

import (
	"testing"
)

// BenchmarkDidChangeTyping is one keystroke through the whole server:
// typing bursts (20 characters inserted at a line start, then 20
// backspaces) in a 50 KB buffer, 8 buffers open. B/op counts both sides
// of the pipes (the fake editor's encoding too); the server's share is
// what the frame decoding, the params decoding and the rope edit allocate.
func BenchmarkDidChangeTyping(b *testing.B) {
	texts := benchTexts(b, 8, 50*1024)
	bs := newBenchSession(b, texts)
	b.ReportAllocs()
	b.ResetTimer()
	version := 1
	for i := 0; i < b.N; i++ {
		k := i % 40
		version++
		change := map[string]any{"range": rng(10, k, 10, k), "text": "x"}
		if k >= 20 {
			col := 40 - k - 1
			change = map[string]any{"range": rng(10, col, 10, col+1), "text": ""}
		}
		if err := bs.ed.Notify("textDocument/didChange", map[string]any{
			"textDocument":   map[string]any{"uri": bs.uris[0], "version": version},
			"contentChanges": []any{change},
		}); err != nil {
			b.Fatal(err)
		}
	}
	bs.sync(b)
}
