package workspace

import (
	"math"
	"strings"
	"unicode/utf8"
)

// This file is the position mapper: the one place where LSP positions
// (a line and a column counted in UTF-16, UTF-8 or UTF-32 code units) meet
// byte offsets. Everything else in kimi-lsp works on byte offsets.
//
// Lines end at "\n", "\r\n" or a lone "\r" (the three LSP line terminators).
// Columns count code units of the negotiated Encoding; an invalid UTF-8 byte
// counts as one unit in every encoding (it stands for U+FFFD, which is one
// UTF-16 unit), a rune ≥ U+10000 counts two UTF-16 units.
//
// Out-of-range input is clamped, never an error or a panic:
//   - a line past the last line maps to the end of the text;
//   - a column past the end of its line maps to the line's end (before its
//     terminator);
//   - a column inside a surrogate pair or a multi-byte UTF-8 sequence maps
//     to the start of that rune;
//   - an offset outside [0, Len()] is clamped to it; one inside a multi-byte
//     rune moves to the rune's start, one between the '\r' and '\n' of a CRLF
//     to the '\r' (the end of its line).

// PositionOffset returns the byte offset of p, whose Character counts units
// of enc. See the mapper rules above for out-of-range positions. It costs
// O(log n).
func (s *Snapshot) PositionOffset(p Position, enc Encoding) int {
	return s.text.positionOffset(p, enc)
}

// OffsetPosition returns the position of byte offset off, its Character
// counted in units of enc. See the mapper rules above for offsets that are
// out of range or inside a rune. It costs O(log n).
func (s *Snapshot) OffsetPosition(off int, enc Encoding) Position {
	return s.text.offsetPosition(off, enc)
}

// RangeOffsets returns the byte offsets of r's start and end. A reversed
// range gives end = start.
func (s *Snapshot) RangeOffsets(r Range, enc Encoding) (start, end int) {
	start = s.text.positionOffset(r.Start, enc)
	end = s.text.positionOffset(r.End, enc)
	return start, max(start, end)
}

// OffsetRange returns the range from byte offset start to end. A reversed
// pair gives an empty range at start.
func (s *Snapshot) OffsetRange(start, end int, enc Encoding) Range {
	end = max(start, end)
	return Range{Start: s.text.offsetPosition(start, enc), End: s.text.offsetPosition(end, enc)}
}

// LineStart returns the byte offset where line (zero-based) starts: 0 for a
// negative line, Len() for a line past the last.
func (s *Snapshot) LineStart(line int) int {
	return s.text.lineStart(line)
}

// LineEnd returns the byte offset where line (zero-based) ends, before its
// terminator: 0 for a negative line, Len() for the last line and past it.
func (s *Snapshot) LineEnd(line int) int {
	if line < 0 {
		return 0
	}
	return s.text.lineEnd(line)
}

func (r rope) lineStart(line int) int {
	switch {
	case line <= 0:
		return 0
	case line > r.breaks():
		return r.len()
	}
	_, end := r.breakAt(line)
	return end
}

func (r rope) lineEnd(line int) int {
	if line >= r.breaks() {
		return r.len()
	}
	start, _ := r.breakAt(line + 1)
	return start
}

// positionOffset finds the line start with one descent and, in the common
// case where the column lies in the same leaf, scans forward from there;
// otherwise it falls back to positionOffsetFar.
func (r rope) positionOffset(p Position, enc Encoding) int {
	line := int(p.Line)
	if line > r.breaks() {
		return r.len()
	}
	var leaf *node
	var start, k int
	if line == 0 {
		leaf, start = r.leafAt(0)
	} else {
		leaf, start, _, k = r.breakLeaf(line)
		if k == len(leaf.text) && start+k < r.len() {
			leaf, start = r.leafAt(start + k)
			k = 0
		}
	}
	t := leaf.text
	char := int(p.Character)
	if leaf.ascii {
		rest := t[k:]
		var e int
		if leaf.cr {
			e = strings.IndexAny(rest, "\r\n")
		} else {
			e = strings.IndexByte(rest, '\n')
		}
		if e >= 0 {
			return start + k + min(char, e)
		}
		if char <= len(rest) {
			return start + k + char
		}
		return r.positionOffsetFar(line, char, enc)
	}
	u := 0
	for i := k; i < len(t); {
		c := t[i]
		if c == '\n' || c == '\r' || u == char {
			return start + i
		}
		w := 1
		if c >= utf8.RuneSelf {
			_, w = utf8.DecodeRuneInString(t[i:])
		}
		ku := runeUnits(w, enc)
		if u+ku > char {
			return start + i // inside a surrogate pair or a UTF-8 sequence
		}
		u += ku
		i += w
	}
	if u == char {
		return start + len(t)
	}
	return r.positionOffsetFar(line, char, enc)
}

// positionOffsetFar maps a position whose line runs past the leaf where it
// starts, with a few descents.
func (r rope) positionOffsetFar(line, char int, enc Encoding) int {
	ls, le := r.lineStart(line), r.lineEnd(line)
	if enc == UTF8 {
		if char >= le-ls {
			return le
		}
		return r.snap(ls + char)
	}
	u0 := r.prefix(ls).units(enc)
	return min(r.unitsOffset(enc, u0+char), le)
}

// offsetPosition snaps off and measures with one descent; in the common
// case where its line starts in the same leaf, the column is measured from
// the last line break before off in that leaf.
func (r rope) offsetPosition(off int, enc Encoding) Position {
	off = min(max(off, 0), r.len())
	leaf, start, before := r.locate(off)
	t := leaf.text
	k := snapLocal(t, off-start)
	pre := measureLeafPrefix(leaf, k)
	line := before.breaks + pre.breaks
	var j int
	if leaf.cr {
		j = strings.LastIndexAny(t[:k], "\r\n")
	} else {
		j = strings.LastIndexByte(t[:k], '\n')
	}
	var char int
	switch {
	case enc == UTF8 && j >= 0:
		char = k - j - 1
	case enc == UTF8:
		char = start + k - r.lineStart(line)
	case j >= 0 && leaf.ascii:
		char = k - j - 1
	case j >= 0:
		s, _, _ := measure(t[j+1 : k])
		char = s.units(enc)
	default:
		char = before.add(pre).units(enc) - r.prefix(r.lineStart(line)).units(enc)
	}
	return Position{Line: clampU32(line), Character: clampU32(char)}
}

func clampU32(n int) uint32 {
	if n > math.MaxUint32 {
		return math.MaxUint32
	}
	return uint32(n)
}

// posLess reports whether p comes before q.
func posLess(p, q Position) bool {
	return p.Line < q.Line || p.Line == q.Line && p.Character < q.Character
}
