package patch

import "strings"

// fileText is a file split into lines, remembering what must survive an
// edit untouched: the byte-order mark, each line's own terminator and
// whether the last line ends with one.
type fileText struct {
	bom   bool
	lines []string // without terminators
	eols  []string // "\n", "\r\n" or "" (only the last line may lack one)
	eol   string   // dominant terminator, used for inserted lines
}

const bomMark = "\ufeff"

func splitText(s string) *fileText {
	t := &fileText{eol: "\n"}
	if strings.HasPrefix(s, bomMark) {
		t.bom = true
		s = s[len(bomMark):]
	}
	crlf, lf := 0, 0
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			t.lines = append(t.lines, s)
			t.eols = append(t.eols, "")
			break
		}
		line, eol := s[:i], "\n"
		if strings.HasSuffix(line, "\r") {
			line, eol = line[:len(line)-1], "\r\n"
			crlf++
		} else {
			lf++
		}
		t.lines = append(t.lines, line)
		t.eols = append(t.eols, eol)
		s = s[i+1:]
	}
	if crlf > lf {
		t.eol = "\r\n"
	}
	return t
}

// finalNewline reports whether the text ends with a line terminator (an
// empty text counts as ending with one).
func (t *fileText) finalNewline() bool {
	return len(t.eols) == 0 || t.eols[len(t.eols)-1] != ""
}

// join renders lines with their terminators, restoring the BOM. The
// terminators slice may be shorter than lines only at the end, where
// missing entries take the dominant terminator.
func (t *fileText) render(lines, eols []string) string {
	var b strings.Builder
	if t.bom {
		b.WriteString(bomMark)
	}
	for i, l := range lines {
		b.WriteString(l)
		b.WriteString(eols[i])
	}
	return b.String()
}

// trimRightSpace drops trailing blanks (and a stray CR).
func trimRightSpace(s string) string {
	return strings.TrimRight(s, " \t\r\f\v")
}

func isBlank(s string) bool { return trimRightSpace(s) == "" }

// nonSpaceLen counts the non-whitespace bytes of s.
func nonSpaceLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n', '\f', '\v':
		default:
			n++
		}
	}
	return n
}
