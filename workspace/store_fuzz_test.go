package workspace

import (
	"errors"
	"testing"
)

// FuzzChanges applies a stream of content changes decoded from ops to a
// document (tiny tree shape) and to the naive model, and compares them
// after every change. Each change takes six bytes: the encoding (and, for
// values ≥ 240, a full replacement), start line and column, end line and
// column, and the length (mod 8) of the inserted text that follows. A
// reversed range must be refused and change nothing.
func FuzzChanges(f *testing.F) {
	f.Add("", []byte{0, 0, 0, 0, 0, 3, 'a', '\r', '\n'})
	f.Add("ab\r\ncd", []byte{0, 0, 2, 1, 0, 1, '\n', 1, 0, 1, 0, 2, 2, 0xe2, 0x82, 2, 0, 0, 0, 0, 1, 0xac})
	f.Add("a😀b\n€\r", []byte{0, 0, 2, 0, 3, 0, 1, 0, 1, 0, 5, 4, 0xf0, 0x9f, 0x98, 0x80, 0, 1, 0, 0, 0, 0})
	f.Add("0123456789\n0123456789\r\n0123456789\r0123456789", []byte{
		2, 0, 3, 3, 1, 7, 'x', '\r', 'y', '\n', 'z', 0xff, 'w', 250, 0, 0, 0, 0, 2, 'h', 'i',
		1, 9, 9, 9, 9, 0, 0, 0, 5, 0, 0, 0})
	f.Fuzz(func(t *testing.T, initial string, ops []byte) {
		d := NewDocuments()
		d.sh = tinyShape
		uri := FileURI("/fuzz.txt")
		if err := d.Open(uri, "text", 0, initial); err != nil {
			t.Fatal(err)
		}
		want := initial
		for v := int32(1); len(ops) >= 6; v++ {
			op := ops[:6]
			n := min(int(op[5]%8), len(ops)-6)
			ins := string(ops[6 : 6+n])
			ops = ops[6+n:]
			enc := Encoding(op[0] % 3)
			var c Change
			if op[0] >= 240 {
				c = Change{Text: ins}
			} else {
				c = Change{Range: &Range{Position{uint32(op[1]), uint32(op[2])}, Position{uint32(op[3]), uint32(op[4])}}, Text: ins}
			}
			err := d.Change(uri, v, []Change{c}, enc)
			if c.Range != nil && posLess(c.Range.End, c.Range.Start) {
				if !errors.Is(err, ErrBadRange) {
					t.Fatalf("reversed range %v: err %v, want ErrBadRange", c.Range, err)
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if c.Range == nil {
					want = ins
				} else {
					s, e := naivePositionOffset(want, c.Range.Start, enc), naivePositionOffset(want, c.Range.End, enc)
					want = want[:s] + ins + want[e:]
				}
			}
			s := mustSnapshot(t, d, uri)
			if s.Text() != want {
				t.Fatalf("after change %d: text %q, want %q", v, s.Text(), want)
			}
			checkRope(t, s.text, want)
			if s.LineCount() != len(naiveLines(want)) {
				t.Fatalf("LineCount %d, want %d", s.LineCount(), len(naiveLines(want)))
			}
		}
	})
}
