package cache

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// maxDiffCost bounds the line diff's search (the number of inserted plus
// deleted lines it explores); past it the changed region becomes a single
// hunk.
const maxDiffCost = 512

// splitLines splits s into lines that keep their "\n"; the last line lacks it
// when s does not end with one. An empty s has no lines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

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
		oldLines: splitLines(o[:len(o)-s]),
		newLines: splitLines(w[:len(w)-s]),
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

// errBadEdit reports an edit block that does not parse or does not apply.
var errBadEdit = errors.New("malformed edit block")

// applyEditBody applies the hunks of one edit block (the lines between its
// header and "</edit>") to text. The removed lines must match text.
func applyEditBody(text string, body []byte) (string, error) {
	var out strings.Builder
	out.Grow(len(text) + len(body))
	pos, line := 0, 0 // text[pos:] starts at 0-based line number line
	// advance moves pos to the start of 0-based line n (n >= line).
	advance := func(n int) bool {
		for ; line < n; line++ {
			i := strings.IndexByte(text[pos:], '\n')
			if i < 0 {
				if pos < len(text) && line+1 == n {
					pos, line = len(text), n // the last line, without "\n"
					return true
				}
				return false
			}
			pos += i + 1
		}
		return true
	}
	for len(body) > 0 {
		hdr, rest := cutLine(body)
		if !bytes.HasPrefix(hdr, []byte("@@ -")) {
			return "", fmt.Errorf("%w: want a hunk header, got %.40q", errBadEdit, hdr)
		}
		oldStart, oldCount, newCount, err := parseHunkHeader(hdr)
		if err != nil {
			return "", err
		}
		body = rest
		first := oldStart - 1 // 0-based index of the first old line
		if oldCount == 0 {
			first = oldStart
		}
		from := pos
		if first < line || !advance(first) {
			return "", fmt.Errorf("%w: hunk at line %d out of order or past the end", errBadEdit, oldStart)
		}
		out.WriteString(text[from:pos])
		for i := 0; i < oldCount; i++ {
			l, err := readDiffLine(&body, '-')
			if err != nil {
				return "", err
			}
			if !strings.HasPrefix(text[pos:], l) || (!strings.HasSuffix(l, "\n") && pos+len(l) != len(text)) {
				return "", fmt.Errorf("%w: removed line %d does not match the text", errBadEdit, line+1)
			}
			pos += len(l)
			line++
		}
		for i := 0; i < newCount; i++ {
			l, err := readDiffLine(&body, '+')
			if err != nil {
				return "", err
			}
			out.WriteString(l)
		}
	}
	out.WriteString(text[pos:])
	return out.String(), nil
}

// cutLine returns the first line of b including its "\n", and the rest.
func cutLine(b []byte) (line, rest []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i+1], b[i+1:]
	}
	return b, nil
}

// readDiffLine reads one diff line with the given sign from *body, with its
// "\ No newline at end of file" marker if any, and returns the text line.
func readDiffLine(body *[]byte, sign byte) (string, error) {
	line, rest := cutLine(*body)
	if len(line) < 2 || line[0] != sign || line[len(line)-1] != '\n' {
		return "", fmt.Errorf("%w: want a %q line, got %.40q", errBadEdit, sign, line)
	}
	l := string(line[1:])
	if bytes.HasPrefix(rest, []byte(noNewline)) {
		l = l[:len(l)-1]
		rest = rest[len(noNewline):]
	}
	*body = rest
	return l, nil
}

// parseHunkHeader parses "@@ -a,b +c,d @@\n".
func parseHunkHeader(line []byte) (oldStart, oldCount, newCount int, err error) {
	s := strings.TrimSuffix(string(line), "\n")
	var newStart int
	if _, err := fmt.Sscanf(s, "@@ -%d,%d +%d,%d @@", &oldStart, &oldCount, &newStart, &newCount); err != nil {
		return 0, 0, 0, fmt.Errorf("%w: bad hunk header %.40q", errBadEdit, s)
	}
	if oldStart < 0 || oldCount < 0 || newCount < 0 || (oldCount > 0 && oldStart == 0) {
		return 0, 0, 0, fmt.Errorf("%w: bad hunk header %.40q", errBadEdit, s)
	}
	return oldStart, oldCount, newCount, nil
}
