package cache

import (
	"strconv"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// maxDiffCost bounds the line diff's search (the number of inserted plus
// deleted lines it explores); past it the changed region becomes a single
// hunk.
const maxDiffCost = 512

// lineDiff describes how to turn old into new: the changed region, cut to
// whole lines, starts at line base (0-based) in both; oldLines and newLines
// are that region's lines; hunks index into them.
type lineDiff struct {
	base               int
	oldLines, newLines []string
	hunks              []linediff.Change
}

// diffLines returns the line-level differences between old and new. Common
// leading and trailing lines are skipped in bytes before any line is split,
// so a small edit to a large text costs little.
func diffLines(old, new string) lineDiff {
	// Common prefix, cut back to the start of a line.
	p := commonPrefix(old, new)
	p = strings.LastIndexByte(old[:p], '\n') + 1
	// Common suffix of what is left, cut forward to the start of a line in
	// both (the byte before it is '\n' in both, or it is p).
	o, w := old[p:], new[p:]
	s := commonSuffix(o, w)
	for s > 0 {
		oi, wi := len(o)-s, len(w)-s
		if (oi == 0 || o[oi-1] == '\n') && (wi == 0 || w[wi-1] == '\n') {
			break
		}
		j := strings.IndexByte(o[oi:], '\n')
		if j < 0 {
			s = 0
			break
		}
		s -= j + 1
	}
	d := lineDiff{
		base:     strings.Count(old[:p], "\n"),
		oldLines: linediff.SplitLines(o[:len(o)-s]),
		newLines: linediff.SplitLines(w[:len(w)-s]),
	}
	d.hunks = linediff.Changes(linediff.Diff(d.oldLines, d.newLines, maxDiffCost))
	return d
}

// noNewline marks, as in unified diffs, a line that ends without "\n".
const noNewline = "\\ No newline at end of file\n"

// appendEdit appends the edit block that turns old into new for the file at
// path (seq numbers the blocks of a session) and returns it. It appends
// nothing when old == new.
//
//	<edit path="a/b.go" seq="3">
//	@@ -120,2 +120,3 @@
//	-old line
//	+new line
//	+another
//	</edit>
//
// The hunks carry no context lines (the file is in the prompt already); line
// numbers are those of the text before and after this block, as in a unified
// diff, so blocks apply in order.
func appendEdit(dst []byte, path string, seq int, old, new string) []byte {
	if old == new {
		return dst
	}
	d := diffLines(old, new)
	dst = append(dst, "<edit path="...)
	dst = strconv.AppendQuote(dst, path)
	dst = append(dst, " seq=\""...)
	dst = strconv.AppendInt(dst, int64(seq), 10)
	dst = append(dst, "\">\n"...)
	for _, h := range d.hunks {
		dst = append(dst, "@@ -"...)
		dst = appendRange(dst, d.base+h.OldStart, h.OldCount)
		dst = append(dst, " +"...)
		dst = appendRange(dst, d.base+h.NewStart, h.NewCount)
		dst = append(dst, " @@\n"...)
		for _, l := range d.oldLines[h.OldStart : h.OldStart+h.OldCount] {
			dst = appendDiffLine(dst, '-', l)
		}
		for _, l := range d.newLines[h.NewStart : h.NewStart+h.NewCount] {
			dst = appendDiffLine(dst, '+', l)
		}
	}
	return append(dst, "</edit>\n"...)
}

// appendRange appends a unified-diff range "start,count": start is 1-based,
// or for an empty range the line after which it sits.
func appendRange(dst []byte, start0, count int) []byte {
	start := start0 + 1
	if count == 0 {
		start = start0
	}
	dst = strconv.AppendInt(dst, int64(start), 10)
	dst = append(dst, ',')
	return strconv.AppendInt(dst, int64(count), 10)
}

func appendDiffLine(dst []byte, sign byte, line string) []byte {
	dst = append(dst, sign)
	dst = append(dst, line...)
	if !strings.HasSuffix(line, "\n") {
		dst = append(dst, '\n')
		dst = append(dst, noNewline...)
	}
	return dst
}
