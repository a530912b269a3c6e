package complete

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Around is what Normalize knows of the document: the text just before and
// just after the cursor (a few lines at least; more helps to find the end of
// the enclosing block), the language id and the line limit.
type Around struct {
	// Before ends at the cursor; After starts there.
	Before, After string
	// Language is the document's language id ("go", "python"…).
	Language string
	// MaxLines bounds the suggestion's lines (0: no bound). A suggestion
	// that starts on the next line does not count the rest of the cursor's
	// line, which it leaves alone.
	MaxLines int
}

// Normalize turns a model's answer into exactly the text to insert at the
// cursor, or "" when there is nothing to insert:
//
//   - Markdown fences are stripped (the first fenced block is the code),
//     and an echoed <|cursor|> marker with everything before it;
//   - an echo of the text before the cursor is removed: whole lines above
//     and the cursor line's prefix, the prefix without its indentation, or
//     the token being typed (an identifier, or at least two characters
//     from a token boundary);
//   - an answer that starts the cursor line over and contradicts what was
//     typed of the identifier at the cursor is nothing to insert (see
//     retyped);
//   - the suggestion is cut at the end of the enclosing block: before a
//     bracket that closes a block opened before the cursor when the text
//     after the cursor already closes it, else after that bracket's line
//     (for Python, at the first line indented less than the cursor's);
//   - text the document already has after the cursor is not repeated: the
//     longest end of the suggestion that begins the text after the cursor
//     and ends there at a line end; a suggestion that is all of it (white
//     space at their starts aside) is nothing to insert;
//   - it is cut at MaxLines lines, trailing white space goes, and the
//     document's line endings (CRLF or LF) are used.
func Normalize(answer string, a Around) string {
	crlf := strings.Contains(a.Before, "\r\n") || strings.Contains(a.After, "\r\n")
	if crlf {
		answer = strings.ReplaceAll(answer, "\r\n", "\n")
		a.Before = strings.ReplaceAll(a.Before, "\r\n", "\n")
		a.After = strings.ReplaceAll(a.After, "\r\n", "\n")
	}
	s := stripFences(answer, a.Language)
	if i := strings.LastIndex(s, cursorMarker); i >= 0 {
		s = s[i+len(cursorMarker):]
	}
	s = strings.TrimRight(stripEcho(s, a.Before), " \t\n\r")
	s = cutAtBlockEnd(s, a)
	s = stripOverlap(s, a.After)
	if t := strings.TrimLeft(s, " \t\n"); t != "" && strings.HasPrefix(strings.TrimLeft(a.After, " \t\n"), t) {
		return "" // the suggestion is what already follows the cursor
	}
	s = cutLines(s, a.MaxLines)
	s = strings.TrimRight(s, " \t\n\r")
	if strings.TrimSpace(s) == "" {
		return ""
	}
	if crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

// cursorMarker is the marker the prompt puts at the cursor.
const cursorMarker = "<|cursor|>"

// stripFences returns the content of the answer's first fenced block, or
// the answer when it has none. For Markdown documents, where fences are
// text, only an answer wholly wrapped in one fence is unwrapped.
func stripFences(s, lang string) string {
	lines := strings.SplitAfter(s, "\n")
	isFence := func(l string) bool { return strings.HasPrefix(strings.TrimSpace(l), "```") }
	open := -1
	for i, l := range lines {
		if isFence(l) {
			open = i
			break
		}
	}
	if open < 0 {
		return s
	}
	if lang == "markdown" {
		first, last := firstNonBlank(lines), lastNonBlank(lines)
		if first != open || last == first || !isFence(lines[last]) || strings.TrimSpace(lines[last]) != "```" {
			return s
		}
	}
	var b strings.Builder
	for _, l := range lines[open+1:] {
		if isFence(l) {
			break
		}
		b.WriteString(l)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func firstNonBlank(lines []string) int {
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			return i
		}
	}
	return -1
}

func lastNonBlank(lines []string) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.TrimSpace(lines[i]) != "" {
			return i
		}
	}
	return -1
}

// maxEchoLines bounds how many lines above the cursor an echo may span.
const maxEchoLines = 40

// stripEcho removes the part of s that repeats the text before the cursor.
func stripEcho(s, before string) string {
	lineStart := strings.LastIndexByte(before, '\n') + 1
	prefix := before[lineStart:]
	// Whole lines above the cursor and the cursor line's prefix, longest
	// first (exact, indentation included).
	starts := []int{lineStart}
	for i, ls := 0, lineStart; i < maxEchoLines && ls > 0; i++ {
		ls = strings.LastIndexByte(before[:ls-1], '\n') + 1
		starts = append(starts, ls)
	}
	for i := len(starts) - 1; i >= 0; i-- {
		if echo := before[starts[i]:]; strings.TrimSpace(echo) != "" && strings.HasPrefix(s, echo) {
			return s[len(echo):]
		}
	}
	trimmed := strings.TrimLeft(prefix, " \t")
	if trimmed == "" {
		// The cursor is in the indentation: do not indent twice.
		ws := s[:len(s)-len(strings.TrimLeft(s, " \t"))]
		if strings.HasPrefix(ws, prefix) {
			return s[len(prefix):]
		}
		return s[len(ws):]
	}
	// The line's prefix without its indentation.
	if t := strings.TrimLeft(s, " \t"); strings.HasPrefix(t, trimmed) {
		return t[len(trimmed):]
	}
	// The token being typed: the longest suffix of the prefix, starting at
	// a token boundary, that the answer starts with.
	word := len(prefix)
	for word > 0 {
		r, n := utf8.DecodeLastRuneInString(prefix[:word])
		if !isIdent(r) {
			break
		}
		word -= n
	}
	for i := len(prefix) - len(trimmed); i < len(prefix); i++ {
		if !utf8.RuneStart(prefix[i]) || !tokenStart(prefix, i) {
			continue
		}
		echo := prefix[i:]
		if (len(echo) >= 2 || i == word) && strings.HasPrefix(s, echo) {
			return s[len(echo):]
		}
	}
	return retyped(s, prefix, word)
}

// retyped handles an answer that starts over from a token of the cursor
// line before the identifier being typed (prefix[word:]), instead of
// continuing it: such an answer, white space at its start aside, that
// repeats the line from that token through the typed identifier is that
// echo, and what follows it is kept; one that repeats the line from that
// token up to the identifier and then differs from what was typed of it
// contradicts the typed characters ("fmt.Px" answered "\tfmt.Println(x)")
// and is dropped. An answer starting with the line's indentation and then
// an identifier other than the typed one re-types the line too. An answer
// that starts with the identifier's first letters only is a continuation
// ("ad" answered "apter"): nothing shows it re-types anything.
func retyped(s, prefix string, word int) string {
	indent := len(prefix) - len(strings.TrimLeft(prefix, " \t"))
	if word == len(prefix) {
		// No identifier is being typed: nothing to contradict, but an
		// answer that starts with the line's indentation and then a name,
		// after text on the line ("\tfoo(" answered "\tbar(1)"), starts
		// the line over (a comment, "\t// …", may follow code).
		if indent > 0 && indent < len(prefix) && strings.HasPrefix(s, prefix[:indent]) {
			if r, _ := utf8.DecodeRuneInString(s[indent:]); isIdent(r) {
				return ""
			}
		}
		return s
	}
	t := strings.TrimLeft(s, " \t")
	for i := indent; i < word; i++ {
		if !utf8.RuneStart(prefix[i]) || !tokenStart(prefix, i) {
			continue
		}
		if echo := prefix[i:]; strings.HasPrefix(t, echo) {
			return t[len(echo):]
		}
		if strings.HasPrefix(t, prefix[i:word]) {
			return ""
		}
	}
	if word == indent && indent > 0 && strings.HasPrefix(s, prefix[:indent]) {
		r, _ := utf8.DecodeRuneInString(s[indent:])
		if isIdent(r) && !strings.HasPrefix(s[indent:], prefix[word:]) {
			return ""
		}
	}
	return s
}

// tokenStart reports whether a token starts at prefix[i]: after white space,
// or where an identifier starts after something else.
func tokenStart(prefix string, i int) bool {
	if i == 0 {
		return true
	}
	prev, _ := utf8.DecodeLastRuneInString(prefix[:i])
	cur, _ := utf8.DecodeRuneInString(prefix[i:])
	if unicode.IsSpace(prev) {
		return !unicode.IsSpace(cur)
	}
	return isIdent(cur) && !isIdent(prev)
}

func isIdent(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

// scanner follows bracket depth through code, skipping string literals and
// comments (C-like, shell/Python # comments, Lua/SQL -- comments are not
// treated specially).
type scanner struct {
	hash   bool // # starts a comment
	quote  byte // inside a string literal quoted with this byte
	block  bool // inside /* */
	line   bool // inside a line comment
	escape bool
	depth  int
}

func newScanner(lang string) *scanner {
	switch lang {
	case "python", "shellscript", "sh", "bash", "zsh", "ruby", "perl", "yaml", "toml", "r", "elixir", "makefile", "dockerfile":
		return &scanner{hash: true}
	}
	return &scanner{}
}

// step feeds s[i] and returns the depth change it made: -1 for a closing
// bracket outside strings and comments, +1 for an opening one, else 0.
func (sc *scanner) step(s string, i int) int {
	c := s[i]
	next := byte(0)
	if i+1 < len(s) {
		next = s[i+1]
	}
	switch {
	case sc.line:
		if c == '\n' {
			sc.line = false
		}
	case sc.block:
		if c == '*' && next == '/' {
			sc.block = false
		}
	case sc.quote != 0:
		switch {
		case sc.escape:
			sc.escape = false
		case c == '\\' && sc.quote != '`':
			sc.escape = true
		case c == sc.quote:
			sc.quote = 0
		case c == '\n' && sc.quote != '`':
			sc.quote = 0 // an unterminated literal ends with its line
		}
	case c == '"' || c == '\'' || c == '`':
		sc.quote = c
	case c == '/' && next == '/', sc.hash && c == '#':
		sc.line = true
	case c == '/' && next == '*':
		sc.block = true
	case c == '{' || c == '(' || c == '[':
		sc.depth++
		return 1
	case c == '}' || c == ')' || c == ']':
		sc.depth--
		return -1
	}
	return 0
}

// maxAfterScan bounds how much of the text after the cursor is scanned for
// the end of the enclosing block.
const maxAfterScan = 16 << 10

// cutAtBlockEnd cuts s at the end of the block enclosing the cursor.
func cutAtBlockEnd(s string, a Around) string {
	if a.Language == "python" {
		return cutAtDedent(s, a.Before)
	}
	// Both texts are read from the state the cursor is in (a comment or a
	// string literal on its line).
	at := newScanner(a.Language)
	lineStart := strings.LastIndexByte(a.Before, '\n') + 1
	for i := lineStart; i < len(a.Before); i++ {
		at.step(a.Before, i)
	}
	at.depth = 0
	sc := *at
	for i := 0; i < len(s); i++ {
		sc.step(s, i)
		if sc.depth >= 0 {
			continue
		}
		// s[i] closes a block opened before the cursor.
		if closesBlock(a.After, *at) {
			ls := strings.LastIndexByte(s[:i], '\n') + 1
			if strings.TrimSpace(s[ls:i]) == "" && ls > 0 {
				return s[:ls-1] // the closer is alone on its line: drop the line
			}
			return s[:i]
		}
		if j := strings.IndexByte(s[i:], '\n'); j >= 0 {
			return s[:i+j]
		}
		return s
	}
	return s
}

// closesBlock reports whether after, read from the scanner state sc,
// closes a block opened before it.
func closesBlock(after string, sc scanner) bool {
	if len(after) > maxAfterScan {
		after = after[:maxAfterScan]
	}
	for i := 0; i < len(after); i++ {
		if sc.step(after, i); sc.depth < 0 {
			return true
		}
	}
	return false
}

// cutAtDedent cuts s before its first line (after the first) indented less
// than the cursor's line, or no more than it when that line opens a block.
func cutAtDedent(s, before string) string {
	lineStart := strings.LastIndexByte(before, '\n') + 1
	cur := before[lineStart:]
	base := indentWidth(cur)
	opens := strings.HasSuffix(strings.TrimRight(cur, " \t"), ":")
	lines := strings.SplitAfter(s, "\n")
	off := len(lines[0])
	for _, l := range lines[1:] {
		if strings.TrimSpace(l) != "" {
			w := indentWidth(l)
			if w < base || (opens && w <= base) {
				return strings.TrimSuffix(s[:off], "\n")
			}
		}
		off += len(l)
	}
	return s
}

func indentWidth(l string) int {
	w := 0
	for _, c := range l {
		switch c {
		case ' ':
			w++
		case '\t':
			w += 4 - w%4
		default:
			return w
		}
	}
	return w
}

// stripOverlap removes the longest end of s that the text after the cursor
// starts with, when that overlap ends at a line end in after (or at its end).
func stripOverlap(s, after string) string {
	for k := min(len(s), len(after)); k > 0; k-- {
		if !strings.HasSuffix(s, after[:k]) {
			continue
		}
		if k == len(after) || after[k] == '\n' || after[k] == '\r' {
			return s[:len(s)-k]
		}
	}
	return s
}

// cutLines keeps at most max lines of s, not counting an empty first line
// (a suggestion that starts on the next line).
func cutLines(s string, max int) string {
	if max <= 0 {
		return s
	}
	if strings.HasPrefix(s, "\n") {
		max++
	}
	off := 0
	for i := 0; i < max; i++ {
		j := strings.IndexByte(s[off:], '\n')
		if j < 0 {
			return s
		}
		off += j + 1
	}
	return s[:off-1]
}
