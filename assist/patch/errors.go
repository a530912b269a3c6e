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
	// context and removed lines.
	Nearest []NumberedLine
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
		if len(p.Nearest) > 0 {
			b.WriteString("  The closest lines in the file are:\n")
			for _, l := range p.Nearest {
				fmt.Fprintf(&b, "  %5d | %s\n", l.Line, l.Text)
			}
		}
		switch {
		case errors.Is(p.Err, ErrNoMatch):
			b.WriteString("  Copy the context and removed lines exactly from the current file.\n")
		case errors.Is(p.Err, ErrAmbiguous):
			b.WriteString("  Add context lines so that the hunk matches one place only.\n")
		case errors.Is(p.Err, ErrPlaceholder):
			b.WriteString("  Write out the code in full; the edit replaces text literally.\n")
		case errors.Is(p.Err, ErrTruncated):
			b.WriteString("  Send the complete diff again.\n")
		}
	}
	b.WriteString("\nSend one corrected edit covering all files.")
	return b.String()
}

// nearest finds the file window whose lines agree most (after trimming
// whitespace) with the hunk's old lines.
func nearest(f *fileText, lines []Line) []NumberedLine {
	old := oldLines(lines)
	if len(old) == 0 || len(f.lines) == 0 {
		return nil
	}
	key := func(s string) string { return strings.TrimSpace(s) }
	best, bestScore := -1, 0
	for s := -len(old) + 1; s < len(f.lines); s++ {
		score := 0
		for i, l := range old {
			j := s + i
			if j < 0 || j >= len(f.lines) || isBlank(l.Text) {
				continue
			}
			a, b := key(f.lines[j]), key(l.Text)
			switch {
			case a == b:
				score += 2
			case commonPrefix(a, b)*2 >= max(len(a), len(b)) && len(a) > 0:
				score++ // similar enough to show; never used for matching
			}
		}
		if score > bestScore {
			best, bestScore = s, score
		}
	}
	if bestScore == 0 {
		return nil
	}
	from, to := max(best, 0), min(best+len(old), len(f.lines))
	if to-from > 12 {
		to = from + 12
	}
	var out []NumberedLine
	for j := from; j < to; j++ {
		out = append(out, NumberedLine{j + 1, f.lines[j]})
	}
	return out
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
