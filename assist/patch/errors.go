package patch

import (
	"errors"
	"fmt"
	"strings"
)

// NumberedLine is a line of a file with its 1-based number.
type NumberedLine struct {
	Line int
	Text string
}

// ApplyError is one reason an edit was refused.
type ApplyError struct {
	// Path is the file as the model named it; empty for problems of the
	// diff as a whole.
	Path string
	// Hunk is the 1-based index of the hunk in its file; 0 when the
	// problem concerns the whole file.
	Hunk int
	// Header is the hunk's "@@" line as written.
	Header string
	// Level is the last matching level tried for the hunk.
	Level Level
	// Err is the sentinel (ErrNoMatch, ErrAmbiguous, ...) or an underlying
	// error such as a confinement refusal.
	Err error
	// Detail adds an explanation.
	Detail string
	// Places lists the 1-based lines where an ambiguous hunk matched.
	Places []int
	// Nearest holds the lines of the file that came closest to the hunk's
	// context and removed lines, with a few lines around them.
	Nearest []NumberedLine
	// Mismatches names the hunk's lines that did not match the nearest
	// lines of the file (at most a few), for the model.
	Mismatches []string
	// PlaceLines quotes the file at each place an ambiguous hunk matched
	// (at most three).
	PlaceLines [][]NumberedLine
}

// Error formats the problem on one line.
func (e *ApplyError) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		if e.Hunk > 0 {
			fmt.Fprintf(&b, ", hunk %d", e.Hunk)
			if e.Header != "" {
				fmt.Fprintf(&b, " (%s)", e.Header)
			}
		}
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	if e.Level != 0 && (errors.Is(e.Err, ErrNoMatch) || errors.Is(e.Err, ErrAmbiguous)) {
		fmt.Fprintf(&b, " (matching reached level %q)", e.Level.String())
	}
	if len(e.Places) > 0 {
		b.WriteString(" at lines ")
		for i, p := range e.Places {
			if i > 0 {
				b.WriteString(", ")
			}
			if i == 8 {
				fmt.Fprintf(&b, "and %d more", len(e.Places)-i)
				break
			}
			fmt.Fprintf(&b, "%d", p)
		}
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns the sentinel or underlying error.
func (e *ApplyError) Unwrap() error { return e.Err }

// Refusal is the error of an edit that was not applied: nothing was
// changed. It lists every problem found, so that one corrected edit can fix
// them all.
type Refusal struct {
	Problems []*ApplyError
}

// Error lists the problems, one per line.
func (r *Refusal) Error() string {
	var b strings.Builder
	b.WriteString("edit not applied, nothing was changed")
	for _, p := range r.Problems {
		b.WriteString("; ")
		b.WriteString(p.Error())
	}
	return b.String()
}

// Unwrap returns the problems, so that errors.Is finds their sentinels.
func (r *Refusal) Unwrap() []error {
	out := make([]error, len(r.Problems))
	for i, p := range r.Problems {
		out[i] = p
	}
	return out
}

func refuse(ps ...*ApplyError) *Refusal { return &Refusal{Problems: ps} }

// Feedback formats an error of this package for the model: what failed,
// where, how far matching got, the nearest lines of the file, and what to
// send instead. Errors of other kinds are returned as their text.
func Feedback(err error) string {
	var r *Refusal
	if !errors.As(err, &r) {
		var e *ApplyError
		if errors.As(err, &e) {
			r = refuse(e)
		} else {
			return "The edit was not applied: " + err.Error()
		}
	}
	var b strings.Builder
	b.WriteString("The edit was not applied; nothing was changed.\n")
	for _, p := range r.Problems {
		b.WriteString("\n- ")
		b.WriteString(p.Error())
		b.WriteString("\n")
		if len(p.Mismatches) > 0 {
			b.WriteString("  What did not match:\n")
			for _, m := range p.Mismatches {
				b.WriteString("  - ")
				b.WriteString(m)
				b.WriteString("\n")
			}
		}
		if len(p.Nearest) > 0 {
			b.WriteString("  The current lines of the file there (copy context and removed lines from them exactly):\n")
			quote(&b, p.Nearest)
		}
		for i, pl := range p.PlaceLines {
			if i == 0 {
				b.WriteString("  The file at each place it matches:\n")
			} else {
				b.WriteString("  ---\n")
			}
			quote(&b, pl)
		}
		switch {
		case errors.Is(p.Err, ErrNoMatch):
			b.WriteString("  Copy the context and removed lines exactly from the current file.\n")
		case errors.Is(p.Err, ErrAmbiguous):
			b.WriteString("  Add context lines that differ between these places, so that the hunk matches one place only.\n")
		case errors.Is(p.Err, ErrPlaceholder):
			b.WriteString("  Write out the code in full; the edit replaces text literally.\n")
		case errors.Is(p.Err, ErrTruncated):
			b.WriteString("  Send the complete diff again.\n")
		}
	}
	b.WriteString("\nSend one corrected edit covering all files.")
	return b.String()
}

// quote writes numbered file lines, indented for a feedback message.
func quote(b *strings.Builder, lines []NumberedLine) {
	for _, l := range lines {
		fmt.Fprintf(b, "  %5d | %s\n", l.Line, l.Text)
	}
}

// around returns the file lines [from-ctx, to+ctx) (0-based, clamped) as
// numbered lines, at most max of them.
func around(f *fileText, from, to, ctx, limit int) []NumberedLine {
	from, to = max(from-ctx, 0), min(to+ctx, len(f.lines))
	if to-from > limit {
		to = from + limit
	}
	var out []NumberedLine
	for j := from; j < to; j++ {
		out = append(out, NumberedLine{j + 1, f.lines[j]})
	}
	return out
}

// describe names a hunk line for a feedback message.
func describe(l Line, n int) string {
	kind := "context"
	if l.Kind == Delete {
		kind = "removed"
	}
	return fmt.Sprintf("your %s line %d %q", kind, n, l.Text)
}

// mismatches compares the hunk's old lines with the file from line start
// (0-based) on and names those that differ: a line found nowhere in the
// file, or the file's line in its place. At most four are named.
func mismatches(f *fileText, lines []Line, start int) []string {
	old := oldLines(lines)
	anywhere := map[string]bool{}
	for _, fl := range f.lines {
		anywhere[strings.TrimSpace(fl)] = true
	}
	var out []string
	for i, l := range old {
		j := start + i
		t := strings.TrimSpace(l.Text)
		if j >= 0 && j < len(f.lines) && strings.TrimSpace(f.lines[j]) == t {
			continue
		}
		switch {
		case !anywhere[t]:
			out = append(out, describe(l, i+1)+" occurs nowhere in the file")
		case j >= 0 && j < len(f.lines):
			out = append(out, fmt.Sprintf("%s is not what the file has in its place: line %d is %q", describe(l, i+1), j+1, f.lines[j]))
		default:
			out = append(out, describe(l, i+1)+" has no line in its place")
		}
		if len(out) == 4 {
			break
		}
	}
	return out
}

// nearest finds the file window whose lines agree most (after trimming
// whitespace) with the hunk's old lines. It returns the window's first
// line (0-based, may be negative when the hunk starts before the file)
// and false when no line agrees at all.
func nearest(f *fileText, lines []Line) (int, bool) {
	old := oldLines(lines)
	if len(old) == 0 || len(f.lines) == 0 {
		return 0, false
	}
	key := func(s string) string { return strings.TrimSpace(s) }
	// Ties go to the window whose first agreeing line comes earliest in
	// the hunk: the model usually starts from a line it copied right.
	best, bestScore, bestFirst := -1, 0, len(old)
	for s := -len(old) + 1; s < len(f.lines); s++ {
		score, first := 0, len(old)
		for i, l := range old {
			j := s + i
			if j < 0 || j >= len(f.lines) || isBlank(l.Text) {
				continue
			}
			a, b := key(f.lines[j]), key(l.Text)
			switch {
			case a == b:
				score += 2
				first = min(first, i)
			case commonPrefix(a, b)*2 >= max(len(a), len(b)) && len(a) > 0:
				score++ // similar enough to show; never used for matching
			}
		}
		if score > bestScore || score == bestScore && first < bestFirst {
			best, bestScore, bestFirst = s, score, first
		}
	}
	return best, bestScore > 0
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
