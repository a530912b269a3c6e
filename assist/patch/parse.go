package patch

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// LineKind is the role of a line inside a hunk.
type LineKind uint8

const (
	// Context lines are kept; they locate the hunk.
	Context LineKind = iota
	// Delete lines are removed; they locate the hunk too.
	Delete
	// Add lines are inserted.
	Add
	// Unmarked is a non-blank line written without a diff marker: either
	// an added line that lost its "+" or a context line that lost its " ".
	// The applier tries both readings and accepts only an unambiguous one.
	Unmarked
)

// Line is one line of a hunk, without its marker and line terminator.
type Line struct {
	Kind LineKind
	Text string
}

// Hunk is one "@@" section of a file diff.
type Hunk struct {
	// OldStart is the 1-based line the header claims for the hunk's first
	// old line; 0 when the header has no numbers (bare "@@", "@@ ... @@").
	OldStart int
	// OldLines and NewLines are the header's counts, meaningful only when
	// HasCounts is set. They are never trusted for parsing: the hunk is
	// recounted from its lines.
	OldLines, NewLines int
	HasCounts          bool
	// NoNewline is set when a "\ No newline at end of file" marker
	// follows the hunk's last added or context line. Only created files
	// use it: an edited file keeps its own final-newline state.
	NoNewline bool
	// Header is the "@@" line as written, for messages.
	Header string
	Lines  []Line
	// Pos is the 1-based line of the header in the parsed text.
	Pos int
}

// FileDiff is the part of a diff about one file.
type FileDiff struct {
	// OldName and NewName are the names as written (timestamps and quotes
	// removed, prefixes kept); "/dev/null" stands for no file.
	OldName, NewName string
	// GitPrefixes is set when the names carry git's "a/" and "b/" prefixes
	// (a "diff --git" header, or both names prefixed).
	GitPrefixes bool
	// Create, Delete and Rename say what happens to the file as a whole.
	Create, Delete, Rename bool
	Hunks                  []*Hunk
	// Pos is the 1-based line of the file header in the parsed text.
	Pos int
}

// DevNull is the name diffs use for the missing side of a creation or a
// deletion.
const DevNull = "/dev/null"

// textLine is a line of the input with its 1-based position.
type textLine struct {
	s   string
	pos int
}

// segment is a run of input lines that may hold a diff: a fenced code
// block, or the whole text when no fence holds a diff.
type segment struct {
	lines  []textLine
	fenced bool
	closed bool
}

// Parse reads the unified diffs in a model's reply. The diff may be bare or
// inside one or more fenced code blocks, with prose around it. defaultPath,
// if not empty, names the file for hunks that come before any file header.
//
// Parse checks what it can without the files: a hunk must have lines, a diff
// must name its files, and a diff whose code fence is never closed is
// refused as truncated (ErrTruncated) unless its last hunk's header counts
// fit its body exactly. Header counts are hints, never limits: a hunk's
// extent is its body, and a count that does not fit never ends, extends or
// refuses a hunk. Everything else is left to Apply.
func Parse(text, defaultPath string) ([]*FileDiff, error) {
	segs := segments(text)
	var files []*FileDiff
	for i, seg := range segs {
		p := &parser{seg: seg, defaultPath: defaultPath, last: i == len(segs)-1}
		fs, err := p.parse()
		if err != nil {
			return nil, err
		}
		files = append(files, fs...)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%w: no file header (--- a/path, +++ b/path) or @@ hunk found", ErrParse)
	}
	return files, nil
}

// fenceOpen reports whether l opens a fence, returning its marker run and
// indentation.
func fenceOpen(l string) (marker string, indent int, ok bool) {
	t := strings.TrimLeft(l, " ")
	indent = len(l) - len(t)
	if indent > 3 || len(t) < 3 {
		return "", 0, false
	}
	c := t[0]
	if c != '`' && c != '~' {
		return "", 0, false
	}
	n := 0
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.ContainsRune(t[n:], '`')) {
		return "", 0, false
	}
	return t[:n], indent, true
}

func fenceCloses(l, marker string, indent int) bool {
	t := strings.TrimLeft(l, " ")
	if len(l)-len(t) != indent {
		return false
	}
	t = trimRightSpace(t)
	return len(t) >= len(marker) && strings.Trim(t, marker[:1]) == "" && t[0] == marker[0]
}

// readLines splits a reply into its lines, without their terminators (a
// stray "\r" included: models and editors write CRLF).
func readLines(text string) []textLine {
	raw := linediff.SplitLines(text)
	out := make([]textLine, len(raw))
	for i, s := range raw {
		out[i] = textLine{strings.TrimSuffix(strings.TrimSuffix(s, "\n"), "\r"), i + 1}
	}
	return out
}

func segments(text string) []segment {
	all := readLines(text)
	var fenced []segment
	for i := 0; i < len(all); i++ {
		marker, indent, ok := fenceOpen(all[i].s)
		if !ok {
			continue
		}
		seg := segment{fenced: true}
		j := i + 1
		for ; j < len(all); j++ {
			if fenceCloses(all[j].s, marker, indent) {
				seg.closed = true
				break
			}
			seg.lines = append(seg.lines, all[j])
		}
		if looksLikeDiff(seg.lines) {
			fenced = append(fenced, seg)
		}
		i = j
	}
	if len(fenced) > 0 {
		return fenced
	}
	return []segment{{lines: all}}
}

func looksLikeDiff(lines []textLine) bool {
	for i, l := range lines {
		if strings.HasPrefix(l.s, "@@") || strings.HasPrefix(l.s, "diff --git ") {
			return true
		}
		if strings.HasPrefix(l.s, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1].s, "+++ ") {
			return true
		}
	}
	return false
}

type parser struct {
	seg         segment
	defaultPath string
	last        bool // the last segment of the text

	files []*FileDiff
	file  *FileDiff
	// gitHeader is set between "diff --git" and the first hunk, while
	// "---"/"+++" may still name the same file.
	gitHeader bool
	hunk      *Hunk
	body      []textLine // the current hunk's lines so far
}

func (p *parser) errorf(pos int, format string, args ...any) error {
	return fmt.Errorf("%w: line %d: %s", ErrParse, pos, fmt.Sprintf(format, args...))
}

func (p *parser) parse() ([]*FileDiff, error) {
	lines := p.seg.lines
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l.s, "diff --git "):
			if err := p.finishHunk(false); err != nil {
				return nil, err
			}
			old, nw, err := gitNames(strings.TrimPrefix(l.s, "diff --git "))
			if err != nil {
				return nil, p.errorf(l.pos, "%v", err)
			}
			p.file = &FileDiff{OldName: old, NewName: nw, GitPrefixes: true, Pos: l.pos}
			p.files = append(p.files, p.file)
			p.gitHeader = true
			for i+1 < len(lines) {
				if !p.gitExtended(lines[i+1].s) {
					break
				}
				i++
			}
			if p.file.Rename && p.file.OldName == p.file.NewName {
				return nil, p.errorf(l.pos, "rename from and to the same path %q", p.file.OldName)
			}
		case strings.HasPrefix(l.s, "GIT binary patch"), strings.HasPrefix(l.s, "Binary files "):
			return nil, p.errorf(l.pos, "binary patches are not supported")
		case strings.HasPrefix(l.s, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1].s, "+++ ") && p.fileHeaderAt(lines, i):
			if err := p.finishHunk(false); err != nil {
				return nil, err
			}
			old := headerName(strings.TrimPrefix(l.s, "--- "))
			nw := headerName(strings.TrimPrefix(lines[i+1].s, "+++ "))
			if old == "" || nw == "" {
				return nil, p.errorf(l.pos, "file header without a file name")
			}
			if p.gitHeader && p.file != nil && len(p.file.Hunks) == 0 {
				// "---"/"+++" after "diff --git": the same file.
				if old == DevNull {
					p.file.Create = true
				}
				if nw == DevNull {
					p.file.Delete = true
				}
			} else {
				p.file = &FileDiff{OldName: old, NewName: nw, Pos: l.pos,
					GitPrefixes: strings.HasPrefix(old, "a/") && strings.HasPrefix(nw, "b/")}
				p.files = append(p.files, p.file)
				p.file.Create = old == DevNull
				p.file.Delete = nw == DevNull
			}
			if p.file.Create && p.file.Delete {
				return nil, p.errorf(l.pos, "both file names are %s", DevNull)
			}
			p.gitHeader = false
			i++
		case strings.HasPrefix(l.s, "@@"):
			if err := p.finishHunk(false); err != nil {
				return nil, err
			}
			if p.file == nil {
				if p.defaultPath == "" {
					return nil, p.errorf(l.pos, "hunk before any file header; start each file with --- a/path and +++ b/path lines")
				}
				p.file = &FileDiff{OldName: p.defaultPath, NewName: p.defaultPath, Pos: l.pos}
				p.files = append(p.files, p.file)
			}
			p.gitHeader = false
			p.hunk = parseHunkHeader(l)
		case p.hunk != nil:
			if !p.seg.fenced && unmarked(l.s) && len(p.body) > 0 && p.body[len(p.body)-1].s == "" && proseFollows(lines[i:]) {
				// Bare reply: an unmarked line after a blank line, with no
				// line until the next header that could be a diff line,
				// starts prose; the hunk ends at the blank line.
				if err := p.finishHunk(false); err != nil {
					return nil, err
				}
				continue
			}
			p.body = append(p.body, l)
		}
	}
	if err := p.finishHunk(true); err != nil {
		return nil, err
	}
	for _, f := range p.files {
		if f.Rename || f.Create || f.Delete {
			continue
		}
		if len(f.Hunks) == 0 {
			return nil, p.errorf(f.Pos, "no hunks for %s", f.NewName)
		}
	}
	return p.files, nil
}

// unmarked reports whether a hunk line has no diff marker and is not blank.
func unmarked(s string) bool {
	return s != "" && !strings.ContainsRune(" -+\\", rune(s[0]))
}

// proseFollows reports whether no line before the next diff header starts
// with a diff marker, so that ending a hunk there cannot drop diff lines.
func proseFollows(lines []textLine) bool {
	for i, l := range lines {
		if strings.HasPrefix(l.s, "@@") || strings.HasPrefix(l.s, "diff --git ") ||
			strings.HasPrefix(l.s, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1].s, "+++ ") {
			return true
		}
		if l.s != "" && strings.ContainsRune(" -+", rune(l.s[0])) {
			return false
		}
	}
	return true
}

// fileHeaderAt reports whether the "--- "/"+++ " pair at lines[i] starts a
// new file rather than continuing the current hunk with a removed line
// starting with "--" and an added one starting with "++". Outside a hunk it
// always does; inside one it does when a hunk header, another file header or
// the end of the segment follows. The hunk's counts are not consulted: they
// are hints, and a hunk's extent is its body.
func (p *parser) fileHeaderAt(lines []textLine, i int) bool {
	if p.hunk == nil {
		return true
	}
	if i+2 >= len(lines) {
		return true
	}
	next := lines[i+2].s
	return strings.HasPrefix(next, "@@") || strings.HasPrefix(next, "diff --git ") ||
		strings.HasPrefix(next, "--- ") && i+3 < len(lines) && strings.HasPrefix(lines[i+3].s, "+++ ")
}

func (p *parser) gitExtended(s string) bool {
	f := p.file
	switch {
	case strings.HasPrefix(s, "new file mode "):
		f.Create = true
	case strings.HasPrefix(s, "deleted file mode "):
		f.Delete = true
	case strings.HasPrefix(s, "rename from "):
		f.Rename = true
		f.OldName = "a/" + unquote(strings.TrimPrefix(s, "rename from "))
	case strings.HasPrefix(s, "rename to "):
		f.Rename = true
		f.NewName = "b/" + unquote(strings.TrimPrefix(s, "rename to "))
	case strings.HasPrefix(s, "old mode "), strings.HasPrefix(s, "new mode "),
		strings.HasPrefix(s, "similarity index "), strings.HasPrefix(s, "dissimilarity index "),
		strings.HasPrefix(s, "index "), strings.HasPrefix(s, "copy from "), strings.HasPrefix(s, "copy to "):
	default:
		return false
	}
	return true
}

// parseHunkHeader reads a hunk's header with linediff's reader, which is as
// tolerant as models need: a header without numbers is a hunk anchored by
// its content alone, and counts, when both are written, are hints.
func parseHunkHeader(l textLine) *Hunk {
	h := &Hunk{Header: l.s, Pos: l.pos}
	hh, ok := linediff.ParseHunkHeader(l.s)
	if !ok {
		return h
	}
	h.OldStart = hh.OldStart
	if hh.HasCounts {
		h.HasCounts = true
		h.OldLines, h.NewLines = hh.OldCount, hh.NewCount
	}
	return h
}

// bodyLine is a hunk line being classified.
type bodyLine struct {
	Line
	marked bool // written with a marker (" ", "-", "+")
	blank  bool // an empty line, taken as blank context
	pos    int
}

// finishHunk classifies the collected body lines of the current hunk. atEnd
// is set when the hunk runs to the end of its segment.
func (p *parser) finishHunk(atEnd bool) error {
	h := p.hunk
	if h == nil {
		return nil
	}
	body := p.body
	p.hunk, p.body = nil, nil

	var ls []bodyLine
	for _, l := range body {
		s := l.s
		switch {
		case s == "":
			ls = append(ls, bodyLine{Line{Context, ""}, false, true, l.pos})
		case s[0] == ' ':
			ls = append(ls, bodyLine{Line{Context, s[1:]}, true, false, l.pos})
		case s[0] == '-':
			ls = append(ls, bodyLine{Line{Delete, s[1:]}, true, false, l.pos})
		case s[0] == '+':
			ls = append(ls, bodyLine{Line{Add, s[1:]}, true, false, l.pos})
		case s[0] == '\\':
			// "\ No newline at end of file": an edited file keeps its
			// own final-newline state; a created one follows the marker.
			if n := len(ls); n > 0 && ls[n-1].Kind != Delete {
				h.NoNewline = true
			}
		default:
			ls = append(ls, bodyLine{Line{Unmarked, s}, false, false, l.pos})
		}
	}
	// Find the trailing run after the last marked line.
	lastMarked := -1
	for i, l := range ls {
		if l.marked {
			lastMarked = i
		}
	}
	tail := ls[lastMarked+1:]
	ls = ls[:lastMarked+1]
	cutProse := false
	if len(tail) > 0 {
		hasUnmarked := false
		for _, l := range tail {
			if !l.blank {
				hasUnmarked = true
			}
		}
		switch {
		case !hasUnmarked:
			// Trailing blank lines: separators or blank context at the
			// end, which only anchors. Dropping them changes no result.
		case tail[0].blank:
			cutProse = true // prose after a blank line
		case p.countsSatisfied(h, ls):
			cutProse = true // the header's counts end the hunk here
		case p.seg.fenced:
			// Inside a diff fence: lines that lost their marker.
			for len(tail) > 0 && tail[len(tail)-1].blank {
				tail = tail[:len(tail)-1]
			}
			ls = append(ls, tail...)
		default:
			return p.errorf(tail[0].pos, "line has no diff marker right after hunk %q; prefix added lines with \"+\", context lines with a space, and separate prose from the diff with a blank line", h.Header)
		}
	}
	if atEnd && p.last && !cutProse && p.seg.fenced && !p.seg.closed && !p.countsSatisfied(h, ls) {
		// The reply ends inside the code fence holding the hunk: the
		// stream was cut off, unless the header's counts fit the body
		// exactly (a fence the model forgot to close). Counts may only
		// confirm: a bare reply cut at a line boundary cannot be told
		// from a complete one by its text, and a count that does not fit
		// never refuses a hunk. Callers refuse replies the provider
		// reports as cut off (finish_reason "length").
		return fmt.Errorf("%w: the code fence holding hunk %q is never closed", ErrTruncated, h.Header)
	}
	for _, l := range ls {
		h.Lines = append(h.Lines, l.Line)
	}
	if len(h.Lines) == 0 {
		return p.errorf(h.Pos, "hunk %q has no lines", h.Header)
	}
	// A hunk without changes still has to match: a model that sends one
	// believes it changes something.
	p.file.Hunks = append(p.file.Hunks, h)
	return nil
}

// countsSatisfied reports whether the classified lines fill the header's
// counts exactly.
func (p *parser) countsSatisfied(h *Hunk, ls []bodyLine) bool {
	if !h.HasCounts {
		return false
	}
	old, nw := countLines(ls)
	return old == h.OldLines && nw == h.NewLines
}

// countLines counts the lines of a hunk body on the old and the new side.
func countLines(ls []bodyLine) (old, nw int) {
	for _, l := range ls {
		switch l.Kind {
		case Context, Unmarked:
			old++
			nw++
		case Delete:
			old++
		case Add:
			nw++
		}
	}
	return old, nw
}

// headerName extracts the file name from a ---/+++ header: it drops a
// timestamp after a tab and quotes.
func headerName(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	return unquote(s)
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// gitNames splits the names of a "diff --git a/x b/y" line.
func gitNames(s string) (string, string, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, `"`) {
		// Quoted names: find the closing quote of the first.
		for i := 1; i < len(s); i++ {
			if s[i] == '\\' {
				i++
				continue
			}
			if s[i] == '"' {
				return unquote(s[:i+1]), unquote(strings.TrimSpace(s[i+1:])), nil
			}
		}
		return "", "", fmt.Errorf("unterminated quoted name in diff --git header")
	}
	if i := strings.LastIndex(s, " b/"); i > 0 {
		return s[:i], unquote(s[i+1:]), nil
	}
	if i := strings.IndexByte(s, ' '); i > 0 {
		return s[:i], strings.TrimSpace(s[i+1:]), nil
	}
	return "", "", fmt.Errorf("cannot read the file names of diff --git %s", s)
}
