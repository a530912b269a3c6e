package workspace

import (
	"strings"
	"testing"
	"unsafe"
)

func TestNewSnapshot(t *testing.T) {
	text := strings.Repeat("fn 😀();\r\n", 500)
	s := NewSnapshot(FileURI("/w/disk.rs"), "rust", 3, text)
	if s.URI != FileURI("/w/disk.rs") || s.LanguageID != "rust" || s.Version != 3 || s.Seq != 0 || !s.Edited.IsZero() || s.Saved {
		t.Fatalf("metadata: %+v", s)
	}
	if s.Text() != text || s.Len() != len(text) || s.LineCount() != 501 {
		t.Fatalf("len %d lines %d", s.Len(), s.LineCount())
	}
	checkRope(t, s.text, text)
	// Line 499 is the last full line; "();" follows the emoji (2 UTF-16 units).
	off := s.PositionOffset(Position{499, 5}, UTF16)
	if got := s.Slice(off, off+3); got != "();" {
		t.Fatalf("Slice at %d = %q, want \"();\"", off, got)
	}
	if got := s.OffsetPosition(off, UTF8); got != (Position{499, 7}) {
		t.Fatalf("OffsetPosition(%d, UTF8) = %+v", off, got)
	}
}

// TestTextMemoised checks that Text is built once and that Slice and Text
// agree everywhere, across chunk boundaries too.
func TestTextMemoised(t *testing.T) {
	text := randText(rng2(4, 4), 3000)
	s := &Snapshot{text: newRope(text, tinyShape)}
	a, b := s.Text(), s.Text()
	if a != text || a != b {
		t.Fatal("Text differs between calls")
	}
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Fatal("Text built twice")
	}
	if strings.Clone(a) != s.Slice(0, s.Len()) {
		t.Fatal("Slice(0, Len) differs from Text")
	}
	for start := 0; start < len(text); start += 97 {
		end := min(len(text), start+211)
		if got := s.Slice(start, end); got != text[start:end] {
			t.Fatalf("Slice(%d, %d) = %q, want %q", start, end, got, text[start:end])
		}
	}
}
