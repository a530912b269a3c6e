package workspace

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// tinyShape makes deep trees out of short texts, so that the tests reach
// splits, merges and multi-level splices with a few hundred bytes.
var tinyShape = &shape{minLeaf: 4, maxLeaf: 20, target: 16, fanout: 4}

// pieces are the building blocks of random texts: ASCII, the three line
// terminators, 2-, 3- and 4-byte runes, U+FFFD itself, and invalid UTF-8 (a
// lone continuation byte, a truncated sequence, an encoded surrogate, 0xFF)
// whose bytes may join neighbours into valid runes after an edit.
var pieces = []string{
	"a", "b", "xyz", " ", "\t",
	"\n", "\r", "\r\n", "\n\r",
	"é", "€", "😀", "𝄞", "\uFFFD",
	"\x80", "\xe2\x82", "\xac", "\xf0\x9f", "\x98\x80", "\xed\xa0\x80", "\xff",
}

func randText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteString(pieces[rng.IntN(len(pieces))])
	}
	return b.String()
}

// The naive reference model: a flat string, lines found by scanning,
// columns by decoding rune by rune from the line start. It shares no code
// with the rope.

type naiveLine struct{ start, end, next int } // end: before the terminator; next: after it

func naiveLines(s string) []naiveLine {
	var out []naiveLine
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			out = append(out, naiveLine{start, i, i + 1})
			start = i + 1
		case '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				out = append(out, naiveLine{start, i, i + 2})
				start = i + 2
				i++
			} else {
				out = append(out, naiveLine{start, i, i + 1})
				start = i + 1
			}
		}
	}
	return append(out, naiveLine{start, len(s), len(s)})
}

func naiveUnits(w int, enc Encoding) int {
	switch enc {
	case UTF8:
		return w
	case UTF32:
		return 1
	}
	if w == 4 {
		return 2
	}
	return 1
}

func naivePositionOffset(s string, p Position, enc Encoding) int {
	lines := naiveLines(s)
	if int(p.Line) >= len(lines) {
		return len(s)
	}
	ln := lines[p.Line]
	off, units := ln.start, 0
	for off < ln.end {
		if units >= int(p.Character) {
			return off
		}
		_, w := utf8.DecodeRuneInString(s[off:ln.end])
		k := naiveUnits(w, enc)
		if units+k > int(p.Character) {
			return off
		}
		units += k
		off += w
	}
	return ln.end
}

func naiveOffsetPosition(s string, off int, enc Encoding) Position {
	off = min(max(off, 0), len(s))
	lines := naiveLines(s)
	li := len(lines) - 1
	for i, ln := range lines {
		if off < ln.next {
			li = i
			break
		}
	}
	ln := lines[li]
	if off > ln.end {
		off = ln.end // inside the terminator (the '\n' of a CRLF)
	}
	pos, units := ln.start, 0
	for pos < off {
		_, w := utf8.DecodeRuneInString(s[pos:ln.end])
		if pos+w > off {
			break // off is inside this rune
		}
		units += naiveUnits(w, enc)
		pos += w
	}
	return Position{Line: uint32(li), Character: uint32(units)}
}

// short trims a text for a failure message.
func short(s string) string {
	if len(s) > 120 {
		return s[:60] + "…" + s[len(s)-60:]
	}
	return s
}

// naiveSummary measures s rune by rune, independently of measure.
func naiveSummary(s string) summary {
	sum := summary{bytes: len(s), breaks: len(naiveLines(s)) - 1}
	for i := 0; i < len(s); {
		_, w := utf8.DecodeRuneInString(s[i:])
		sum.runes++
		sum.u16 += naiveUnits(w, UTF16)
		i += w
	}
	return sum
}

func TestMeasure(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	texts := []string{"", "a", strings.Repeat("x", 15), strings.Repeat("x", 16), strings.Repeat("y", 17) + "😀", "\r\n\r", "é" + strings.Repeat("z", 40)}
	for range 300 {
		texts = append(texts, strings.Repeat("q", rng.IntN(40))+randText(rng, rng.IntN(30)))
	}
	for _, s := range texts {
		got, ascii, cr := measure(s)
		if want := naiveSummary(s); got != want {
			t.Errorf("measure(%q) = %+v, want %+v", s, got, want)
		}
		if wantASCII := !strings.ContainsFunc(s, func(r rune) bool { return r >= utf8.RuneSelf }); ascii != wantASCII {
			t.Errorf("measure(%q): ascii = %v", s, ascii)
		}
		if cr != strings.Contains(s, "\r") {
			t.Errorf("measure(%q): cr = %v", s, cr)
		}
	}
}

// checkRope verifies every structural invariant of r and that it holds want.
func checkRope(t testing.TB, r rope, want string) {
	t.Helper()
	if got := r.slice(0, r.len()); got != want {
		t.Fatalf("rope text = %q, want %q", short(got), short(want))
	}
	if !r.equalString(want) {
		t.Fatalf("equalString(%q) = false", short(want))
	}
	sum := naiveSummary(want)
	if r.root.sum != sum {
		t.Fatalf("root summary = %+v, want %+v (text %q)", r.root.sum, sum, short(want))
	}
	if r.root.height > 0 && len(r.root.kids) < 2 {
		t.Fatalf("internal root with %d kids", len(r.root.kids))
	}
	var leaves []string
	var walk func(n *node, isRoot bool)
	walk = func(n *node, isRoot bool) {
		if n.height == 0 {
			s, ascii, cr := measure(n.text)
			if s != n.sum || ascii != n.ascii || cr != n.cr {
				t.Fatalf("leaf %q: stored summary %+v/%v/%v, measured %+v/%v/%v", n.text, n.sum, n.ascii, n.cr, s, ascii, cr)
			}
			leaves = append(leaves, n.text)
			return
		}
		if len(n.kids) > r.sh.fanout || !isRoot && len(n.kids) < r.sh.fanout/2 {
			t.Fatalf("node at height %d has %d kids (fanout %d)", n.height, len(n.kids), r.sh.fanout)
		}
		var s summary
		for _, k := range n.kids {
			if k.n.height != n.height-1 {
				t.Fatalf("kid of height %d under node of height %d", k.n.height, n.height)
			}
			if k.sum != k.n.sum {
				t.Fatalf("child summary %+v, node has %+v", k.sum, k.n.sum)
			}
			s = s.add(k.sum)
			walk(k.n, false)
		}
		if s != n.sum {
			t.Fatalf("node summary %+v, kids add up to %+v", n.sum, s)
		}
	}
	walk(r.root, true)
	for i, l := range leaves {
		if len(leaves) > 1 && (len(l) < r.sh.minLeaf || len(l) > r.sh.maxLeaf) {
			t.Fatalf("leaf %d of %d has %d bytes, want %d..%d", i, len(leaves), len(l), r.sh.minLeaf, r.sh.maxLeaf)
		}
		if len(leaves) == 1 && len(l) > r.sh.maxLeaf {
			t.Fatalf("single leaf has %d bytes, max %d", len(l), r.sh.maxLeaf)
		}
		if i > 0 && seamBad(leaves[i-1], l) {
			t.Fatalf("bad seam between leaves %q and %q", leaves[i-1], l)
		}
	}
}

func TestSeamBad(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"x\r", "\ny", true},
		{"x\r", "y", false},
		{"x\n", "\ny", false},
		{"x\xe2\x82", "\xacy", true},    // € split after two bytes
		{"x\xe2", "\x82\xac", true},     // € split after one byte
		{"x\xf0\x9f\x98", "\x80", true}, // 😀 split after three bytes
		{"x\xf0\x9f", "\x98\x80", true},
		{"x€", "\x80", false},        // complete rune, then a stray continuation byte
		{"x\xe2", "y", false},        // truncated sequence: invalid, not spanning
		{"x\xed", "\xa0\x80", false}, // encoded surrogate: invalid in Go, not spanning
		{"\x80\x80\x80\x80", "\x80", false},
		{"", "\n", false},
		{"\r", "", false},
	}
	for _, tt := range tests {
		if got := seamBad(tt.a, tt.b); got != tt.want {
			t.Errorf("seamBad(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestRopeBuild(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	texts := []string{"", "a", "\r\n", strings.Repeat("\r\n", 100), strings.Repeat("😀", 100), strings.Repeat("\x80", 300)}
	for range 50 {
		texts = append(texts, randText(rng, rng.IntN(400)))
	}
	texts = append(texts, randText(rng, 20000))
	for _, sh := range []*shape{tinyShape, defaultShape} {
		for _, s := range texts {
			checkRope(t, newRope(s, sh), s)
		}
	}
}

// TestRopeReplaceRandom edits at arbitrary byte offsets, inside runes and
// CRLFs too, and checks the rope against a flat string after every edit.
func TestRopeReplaceRandom(t *testing.T) {
	for _, sh := range []*shape{tinyShape, {minLeaf: 8, maxLeaf: 40, target: 30, fanout: 5}, defaultShape} {
		t.Run(fmt.Sprintf("leaf%d-fanout%d", sh.maxLeaf, sh.fanout), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(sh.maxLeaf), 7))
			for round := range 20 {
				want := randText(rng, rng.IntN(300)+round*100)
				r := newRope(want, sh)
				for range 200 {
					s := rng.IntN(len(want) + 1)
					e := s
					switch rng.IntN(4) {
					case 0: // insert
					case 1: // short delete or replace
						e = min(len(want), s+rng.IntN(8))
					case 2: // long delete or replace
						e = min(len(want), s+rng.IntN(len(want)/2+1))
					case 3: // edit at a leaf edge
						if l, ls := r.leafAt(s); rng.IntN(2) == 0 {
							s = ls
							e = min(len(want), s+rng.IntN(len(l.text)+1))
						} else {
							s = ls + len(l.text)
							e = s
						}
					}
					ins := ""
					if rng.IntN(3) > 0 {
						ins = randText(rng, rng.IntN(6))
					}
					if rng.IntN(50) == 0 {
						ins = randText(rng, rng.IntN(400))
					}
					old, oldWant := r, want
					r = r.replace(s, e, ins)
					want = want[:s] + ins + want[e:]
					checkRope(t, r, want)
					checkRope(t, old, oldWant) // persistence: the old version is intact
				}
			}
		})
	}
}

func TestRopeSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := randText(rng, 500)
	r := newRope(s, tinyShape)
	for range 2000 {
		a, b := rng.IntN(len(s)+20)-10, rng.IntN(len(s)+20)-10
		ca, cb := min(max(a, 0), len(s)), min(max(b, 0), len(s))
		want := ""
		if ca < cb {
			want = s[ca:cb]
		}
		if got := r.slice(a, b); got != want {
			t.Fatalf("slice(%d, %d) = %q, want %q", a, b, got, want)
		}
	}
}

// TestOpenEdges checks headOpen and tailOpen never miss a bad seam: for
// every short a and b, seamBad(a, b) implies tailOpen(a) and headOpen(b).
func TestOpenEdges(t *testing.T) {
	bytesSet := []byte{'a', '\r', '\n', 0x80, 0x9f, 0xbf, 0xc3, 0xe2, 0xed, 0xf0, 0xf4, 0xff}
	var all []string
	var gen func(prefix string, n int)
	gen = func(prefix string, n int) {
		all = append(all, prefix)
		if n == 0 {
			return
		}
		for _, c := range bytesSet {
			gen(prefix+string([]byte{c}), n-1)
		}
	}
	gen("", 3)
	for _, a := range all {
		for _, b := range all {
			if seamBad(a, b) && (!tailOpen(a) || !headOpen(b)) {
				t.Fatalf("seamBad(%q, %q) but tailOpen %v headOpen %v", a, b, tailOpen(a), headOpen(b))
			}
		}
	}
}
