package workspace

import "testing"

// FuzzMapper checks the position mapper against the naive model on any
// text (invalid UTF-8 included) and any position or offset, in every
// encoding, with a tiny tree shape (deep trees from short inputs) and the
// default one: the results agree, round trips hold, and nothing panics.
func FuzzMapper(f *testing.F) {
	f.Add("", uint32(0), uint32(0), 0, uint8(0), true)
	f.Add("a😀b", uint32(0), uint32(2), 3, uint8(0), true)
	f.Add("ab\r\ncd\re\n", uint32(1), uint32(9), 3, uint8(1), false)
	f.Add("\xe2\x82\xac\xe2\x82x\xff\xed\xa0\x80", uint32(0), uint32(4), 4, uint8(2), true)
	f.Add("é€😀𝄞\uFFFD\r\r\n\n", uint32(2), uint32(1), 12, uint8(0), true)
	f.Add("x\ny\nz", uint32(1<<31), uint32(1<<31), -5, uint8(7), false)
	f.Add("😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀", uint32(0), uint32(33), 51, uint8(0), true)
	f.Fuzz(func(t *testing.T, text string, line, char uint32, off int, enc uint8, tiny bool) {
		sh := defaultShape
		if tiny {
			sh = tinyShape
		}
		e := Encoding(enc % 3)
		s := snapshotOf(text, sh)
		checkRope(t, s.text, text)
		p := Position{line, char}
		got := s.PositionOffset(p, e)
		if want := naivePositionOffset(text, p, e); got != want {
			t.Fatalf("PositionOffset(%q, %+v, %v) = %d, want %d", text, p, e, got, want)
		}
		if q := s.OffsetPosition(got, e); s.PositionOffset(q, e) != got {
			t.Fatalf("position %+v → %d → %+v does not round-trip", p, got, q)
		}
		pos := s.OffsetPosition(off, e)
		if want := naiveOffsetPosition(text, off, e); pos != want {
			t.Fatalf("OffsetPosition(%q, %d, %v) = %+v, want %+v", text, off, e, pos, want)
		}
		back := s.PositionOffset(pos, e)
		c := min(max(off, 0), len(text))
		if back > c || c-back > 3 || s.OffsetPosition(back, e) != pos {
			t.Fatalf("offset %d → %+v → %d does not round-trip", off, pos, back)
		}
		start, end := s.RangeOffsets(Range{Position{line, char}, Position{line / 2, char / 2}}, e)
		if start < 0 || end < start || end > len(text) {
			t.Fatalf("RangeOffsets gave %d, %d for a text of %d bytes", start, end, len(text))
		}
		_ = s.Slice(off, int(char))
		_ = s.LineStart(int(line)) + s.LineEnd(int(line)-1)
	})
}
