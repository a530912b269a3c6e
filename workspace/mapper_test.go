package workspace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

func snapshotOf(s string, sh *shape) *Snapshot {
	return &Snapshot{text: newRope(s, sh)}
}

var encodings = []Encoding{UTF16, UTF8, UTF32}

func TestPositionOffset(t *testing.T) {
	type want struct{ u16, u8, u32 int }
	tests := []struct {
		name string
		text string
		pos  Position
		want want
	}{
		{"empty start", "", Position{0, 0}, want{0, 0, 0}},
		{"empty past line end", "", Position{0, 5}, want{0, 0, 0}},
		{"empty past last line", "", Position{3, 1}, want{0, 0, 0}},
		{"ascii", "abc", Position{0, 2}, want{2, 2, 2}},
		{"before surrogate pair", "a😀b", Position{0, 1}, want{1, 1, 1}},
		{"inside surrogate pair", "a😀b", Position{0, 2}, want{1, 1, 5}},
		{"after surrogate pair", "a😀b", Position{0, 3}, want{5, 1, 6}},
		{"inside 4-byte rune in utf-8", "a😀b", Position{0, 4}, want{6, 1, 6}},
		{"after 4-byte rune in utf-8", "a😀b", Position{0, 5}, want{6, 5, 6}},
		{"end of line with pair", "a😀b", Position{0, 4}, want{6, 1, 6}},
		{"past end of line with pair", "a😀b", Position{0, 99}, want{6, 6, 6}},
		{"mixed widths", "é€😀x", Position{0, 2}, want{5, 2, 5}},
		{"mixed widths after pair", "é€😀x", Position{0, 4}, want{9, 2, 10}},
		{"U+FFFD is one unit", "\uFFFDx", Position{0, 1}, want{3, 0, 3}},
		{"crlf: line end", "ab\r\ncd", Position{0, 2}, want{2, 2, 2}},
		{"crlf: past line end stops before \\r", "ab\r\ncd", Position{0, 3}, want{2, 2, 2}},
		{"crlf: second line", "ab\r\ncd", Position{1, 1}, want{5, 5, 5}},
		{"crlf: past last line", "ab\r\ncd", Position{2, 0}, want{6, 6, 6}},
		{"crlf: far past", "ab\r\ncd", Position{1 << 31, 1 << 31}, want{6, 6, 6}},
		{"lone cr", "a\rb\r", Position{1, 0}, want{2, 2, 2}},
		{"lone cr: past line end", "a\rb\r", Position{1, 7}, want{3, 3, 3}},
		{"lone cr: last empty line", "a\rb\r", Position{2, 0}, want{4, 4, 4}},
		{"lf then cr is two breaks", "a\n\rb", Position{2, 1}, want{4, 4, 4}},
		{"trailing newline", "a\n", Position{1, 0}, want{2, 2, 2}},
		{"invalid byte counts one", "a\xffb", Position{0, 2}, want{2, 2, 2}},
		{"truncated sequence is two units", "\xe2\x82x", Position{0, 2}, want{2, 2, 2}},
		{"encoded surrogate is three units", "\xed\xa0\x80x", Position{0, 3}, want{3, 3, 3}},
		{"lone continuation byte", "\x80\x80€", Position{0, 3}, want{5, 2, 5}},
		{"multibyte line 2", "x\n€€", Position{1, 1}, want{5, 2, 5}},
	}
	for _, tt := range tests {
		for _, sh := range []*shape{tinyShape, defaultShape} {
			s := snapshotOf(tt.text, sh)
			for _, enc := range encodings {
				w := map[Encoding]int{UTF16: tt.want.u16, UTF8: tt.want.u8, UTF32: tt.want.u32}[enc]
				if got := s.PositionOffset(tt.pos, enc); got != w {
					t.Errorf("%s: PositionOffset(%q, %+v, %v) = %d, want %d", tt.name, tt.text, tt.pos, enc, got, w)
				}
				if got := naivePositionOffset(tt.text, tt.pos, enc); got != w {
					t.Errorf("%s: naive model disagrees: %d, want %d", tt.name, got, w)
				}
			}
		}
	}
}

func TestOffsetPosition(t *testing.T) {
	type want struct{ u16, u8, u32 Position }
	p := func(l, c uint32) Position { return Position{l, c} }
	tests := []struct {
		name string
		text string
		off  int
		want want
	}{
		{"empty", "", 0, want{p(0, 0), p(0, 0), p(0, 0)}},
		{"empty past end", "", 5, want{p(0, 0), p(0, 0), p(0, 0)}},
		{"negative", "abc", -3, want{p(0, 0), p(0, 0), p(0, 0)}},
		{"past end", "ab\ncd", 99, want{p(1, 2), p(1, 2), p(1, 2)}},
		{"after pair", "a😀b", 5, want{p(0, 3), p(0, 5), p(0, 2)}},
		{"inside pair snaps back", "a😀b", 3, want{p(0, 1), p(0, 1), p(0, 1)}},
		{"end with pair", "a😀b", 6, want{p(0, 4), p(0, 6), p(0, 3)}},
		{"inside crlf snaps to line end", "ab\r\ncd", 3, want{p(0, 2), p(0, 2), p(0, 2)}},
		{"after crlf", "ab\r\ncd", 4, want{p(1, 0), p(1, 0), p(1, 0)}},
		{"after lone cr", "a\rb", 2, want{p(1, 0), p(1, 0), p(1, 0)}},
		{"at lone cr", "a\rb", 1, want{p(0, 1), p(0, 1), p(0, 1)}},
		{"after trailing newline", "a\n", 2, want{p(1, 0), p(1, 0), p(1, 0)}},
		{"invalid bytes", "\xff\xe2\x82x", 3, want{p(0, 3), p(0, 3), p(0, 3)}},
		{"inside € after invalid", "\xff€", 2, want{p(0, 1), p(0, 1), p(0, 1)}},
		{"second line multibyte", "é\n€😀", 10, want{p(1, 3), p(1, 7), p(1, 2)}},
		{"second line inside pair", "é\n€😀", 9, want{p(1, 1), p(1, 3), p(1, 1)}},
	}
	for _, tt := range tests {
		for _, sh := range []*shape{tinyShape, defaultShape} {
			s := snapshotOf(tt.text, sh)
			for _, enc := range encodings {
				w := map[Encoding]Position{UTF16: tt.want.u16, UTF8: tt.want.u8, UTF32: tt.want.u32}[enc]
				if got := s.OffsetPosition(tt.off, enc); got != w {
					t.Errorf("%s: OffsetPosition(%q, %d, %v) = %+v, want %+v", tt.name, tt.text, tt.off, enc, got, w)
				}
				if got := naiveOffsetPosition(tt.text, tt.off, enc); got != w {
					t.Errorf("%s: naive model disagrees: %+v, want %+v", tt.name, got, w)
				}
			}
		}
	}
}

func TestLineStartEnd(t *testing.T) {
	s := snapshotOf("ab\r\ncd\ref\n\n", tinyShape)
	starts := []int{0, 4, 7, 10, 11}
	ends := []int{2, 6, 9, 10, 11}
	if got := s.LineCount(); got != 5 {
		t.Fatalf("LineCount = %d, want 5", got)
	}
	for i := range starts {
		if got := s.LineStart(i); got != starts[i] {
			t.Errorf("LineStart(%d) = %d, want %d", i, got, starts[i])
		}
		if got := s.LineEnd(i); got != ends[i] {
			t.Errorf("LineEnd(%d) = %d, want %d", i, got, ends[i])
		}
	}
	for _, line := range []int{-1, 5, 100} {
		want := 11
		if line < 0 {
			want = 0
		}
		if got := s.LineStart(line); got != want {
			t.Errorf("LineStart(%d) = %d, want %d", line, got, want)
		}
		if got := s.LineEnd(line); got != want {
			t.Errorf("LineEnd(%d) = %d, want %d", line, got, want)
		}
	}
}

func TestRangeOffsets(t *testing.T) {
	s := snapshotOf("héllo\nwörld", tinyShape)
	start, end := s.RangeOffsets(Range{Position{0, 1}, Position{1, 2}}, UTF16)
	if start != 1 || end != 10 {
		t.Errorf("RangeOffsets = %d, %d, want 1, 10", start, end)
	}
	if got := s.Slice(start, end); got != "éllo\nwö" {
		t.Errorf("Slice = %q", got)
	}
	start, end = s.RangeOffsets(Range{Position{1, 2}, Position{0, 1}}, UTF16)
	if start != 10 || end != 10 {
		t.Errorf("reversed RangeOffsets = %d, %d, want 10, 10", start, end)
	}
	if got, want := s.OffsetRange(1, 10, UTF8), (Range{Position{0, 1}, Position{1, 3}}); got != want {
		t.Errorf("OffsetRange = %v, want %v", got, want)
	}
}

// TestMapperMatchesNaive compares every offset and every position (with
// columns past the line ends and lines past the end) with the naive model,
// on random texts full of multi-byte runes, invalid bytes and all three
// line terminators, in every encoding, and checks the round trips.
func TestMapperMatchesNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for round := range 40 {
		text := randText(rng, rng.IntN(120))
		sh := tinyShape
		if round%3 == 0 {
			sh = defaultShape
		}
		s := snapshotOf(text, sh)
		if got, want := s.LineCount(), len(naiveLines(text)); got != want {
			t.Fatalf("LineCount(%q) = %d, want %d", text, got, want)
		}
		for _, enc := range encodings {
			checkMapper(t, s, text, enc)
		}
	}
}

// checkMapper checks s's mapper against the naive model over text.
func checkMapper(t testing.TB, s *Snapshot, text string, enc Encoding) {
	t.Helper()
	for off := -2; off <= len(text)+2; off++ {
		p := s.OffsetPosition(off, enc)
		if want := naiveOffsetPosition(text, off, enc); p != want {
			t.Fatalf("OffsetPosition(%q, %d, %v) = %+v, want %+v", short(text), off, enc, p, want)
		}
		back := s.PositionOffset(p, enc)
		if want := naivePositionOffset(text, p, enc); back != want {
			t.Fatalf("PositionOffset(%q, %+v, %v) = %d, want %d", short(text), p, enc, back, want)
		}
		// Round trip: an offset maps back to itself unless it was inside a
		// rune or a CRLF, where it moves back at most three bytes.
		c := min(max(off, 0), len(text))
		if back > c || c-back > 3 {
			t.Fatalf("offset %d of %q round-trips to %d", off, short(text), back)
		}
		if p2 := s.OffsetPosition(back, enc); p2 != p {
			t.Fatalf("OffsetPosition(%d) = %+v but OffsetPosition(%d) = %+v", off, p, back, p2)
		}
	}
	lines := naiveLines(text)
	for line := range len(lines) + 2 {
		for char := range 14 {
			p := Position{uint32(line), uint32(char)}
			off := s.PositionOffset(p, enc)
			if want := naivePositionOffset(text, p, enc); off != want {
				t.Fatalf("PositionOffset(%q, %+v, %v) = %d, want %d", short(text), p, enc, off, want)
			}
			// A position that is valid (on a rune boundary within its line)
			// round-trips exactly; any other maps to a valid one.
			q := s.OffsetPosition(off, enc)
			if s.PositionOffset(q, enc) != off {
				t.Fatalf("position %+v → %d → %+v → %d", p, off, q, s.PositionOffset(q, enc))
			}
			if line < len(lines) && q.Line == p.Line && q.Character > p.Character {
				t.Fatalf("position %+v clamped forward to %+v", p, q)
			}
		}
	}
}

func TestMapperLongLines(t *testing.T) {
	// One long line of surrogate pairs and multi-byte runes across many
	// leaves: the units descent must cross leaves correctly.
	var b strings.Builder
	for i := range 3000 {
		b.WriteString([]string{"a", "😀", "é", "€", "\xff"}[i%5])
	}
	text := b.String()
	for _, sh := range []*shape{tinyShape, defaultShape} {
		s := snapshotOf(text, sh)
		for _, enc := range encodings {
			for c := 0; c < 9000; c += 41 {
				p := Position{0, uint32(c)}
				if got, want := s.PositionOffset(p, enc), naivePositionOffset(text, p, enc); got != want {
					t.Fatalf("%v: PositionOffset(%+v) = %d, want %d", enc, p, got, want)
				}
			}
			for off := 0; off <= len(text); off += 29 {
				if got, want := s.OffsetPosition(off, enc), naiveOffsetPosition(text, off, enc); got != want {
					t.Fatalf("%v: OffsetPosition(%d) = %+v, want %+v", enc, off, got, want)
				}
			}
		}
	}
}

func ExampleSnapshot_PositionOffset() {
	docs := NewDocuments()
	uri := FileURI("/tmp/example.go")
	_ = docs.Open(uri, "go", 1, "x := \"😀\"\r\ny := 1\n")
	s, _ := docs.Snapshot(uri)
	// In UTF-16 the emoji is two units: the closing quote is column 8.
	off := s.PositionOffset(Position{Line: 0, Character: 8}, UTF16)
	fmt.Println(off, s.Slice(off, off+1))
	// A column past the line end stops before the CRLF.
	fmt.Println(s.PositionOffset(Position{Line: 0, Character: 99}, UTF16))
	fmt.Println(s.OffsetPosition(s.LineStart(1)+2, UTF8))
	// Output:
	// 10 "
	// 11
	// {1 2}
}
