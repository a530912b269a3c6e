package ignore

import "strings"

// result is what one list says about a path.
type result int8

const (
	noMatch result = iota // no pattern matches
	exclude               // the last matching pattern excludes
	include               // the last matching pattern is negated ("!")
)

// pattern is one compiled gitignore line.
type pattern struct {
	negate  bool // "!pattern"
	dirOnly bool // "pattern/": directories only
	// base: no slash in the pattern (after the trailing one is taken off),
	// so it is matched against the last path element, at any depth.
	base bool
	// prefix is the literal start of the pattern (up to its first *, ?, [
	// or \), compared as it is; glob is the rest, matched with the
	// gitignore glob rules. git splits a path pattern the same way, and
	// the split shows: the glob's start counts as a pattern start for "**"
	// (so "a**/b" matches "a/x/b", as git has it).
	prefix, glob string
	// memo: the glob holds two or more runs of stars, so backtracking could
	// repeat itself; the matcher remembers failed positions.
	memo bool
}

// parsePattern compiles one line whose comment, line end and trailing
// spaces are already gone. ok is false for a line that is no pattern.
func parsePattern(line string) (p pattern, ok bool) {
	if strings.HasPrefix(line, "!") {
		p.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = line[:len(line)-1]
	}
	if line == "" {
		return p, false // "", "!", "/", "!/" match nothing
	}
	p.base = !strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/") // anchored: the list's directory is implied
	n := strings.IndexAny(line, `*?[\`)
	if n < 0 {
		n = len(line)
	}
	p.prefix, p.glob = line[:n], line[n:]
	runs := 0
	for i := 0; i < len(p.glob); i++ {
		if p.glob[i] == '*' && (i == 0 || p.glob[i-1] != '*') {
			runs++
		}
	}
	p.memo = runs >= 2
	return p, true
}

// match reports whether p matches the slash-separated path rel, relative
// to the directory of p's list.
func (p *pattern) match(rel string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	name := rel
	if p.base {
		name = rel[strings.LastIndexByte(rel, '/')+1:]
	}
	rest, ok := strings.CutPrefix(name, p.prefix)
	if !ok {
		return false
	}
	if p.glob == "" {
		return rest == ""
	}
	// A base pattern holds no slash and is matched against a name that
	// holds none, so the path rules ("*" stops at "/") are moot for it.
	m := matcher{pat: p.glob, text: rest, memo: p.memo}
	return m.match(0, 0)
}

// matcher matches one glob against one text with gitignore's rules (git's
// wildmatch with WM_PATHNAME):
//
//   - "?" and "*" match any byte but "/", "*" any number of them;
//   - "**" matches across "/" when it is a whole path element: at the start
//     of the glob or after "/", and at its end or before "/". "/**/" (or a
//     leading "**/") matches zero or more directories, a trailing "/**"
//     everything inside. Other runs of stars are a single "*";
//   - "[...]" is one byte of a set ("!" or "^" first negates it; "a-z"
//     ranges; "\" escapes; "[:alpha:]" and the other POSIX classes, ASCII
//     only), never "/"; a set that is not closed, or names an unknown
//     class, matches nothing, so the pattern never matches;
//   - "\" makes the next byte literal; a final "\" matches nothing.
//
// Backtracking is bounded: with two or more runs of stars (memo), a
// (glob, text) position that failed once is not tried again, so a glob of
// many stars costs at most len(glob)·len(text); with one run, trying each
// text position once is that bound already, and nothing is allocated.
type matcher struct {
	pat, text string
	memo      bool
	failed    []uint64 // bit pi*(len(text)+1)+ti: that position failed
}

func (m *matcher) match(pi, ti int) bool {
	if !m.memo {
		return m.matchAt(pi, ti)
	}
	key := pi*(len(m.text)+1) + ti
	if m.failed != nil && m.failed[key/64]&(1<<(key%64)) != 0 {
		return false
	}
	if m.matchAt(pi, ti) {
		return true
	}
	if m.failed == nil {
		m.failed = make([]uint64, ((len(m.pat)+1)*(len(m.text)+1)+63)/64)
	}
	m.failed[key/64] |= 1 << (key % 64)
	return false
}

func (m *matcher) matchAt(pi, ti int) bool {
	pat, text := m.pat, m.text
	for pi < len(pat) {
		c := pat[pi]
		switch c {
		case '*':
			start := pi
			for pi < len(pat) && pat[pi] == '*' {
				pi++
			}
			double := pi-start >= 2 &&
				(start == 0 || pat[start-1] == '/') &&
				(pi == len(pat) || pat[pi] == '/' || strings.HasPrefix(pat[pi:], `\/`))
			if !double {
				// Any run of non-slash bytes, then the rest.
				for i := ti; ; i++ {
					if m.match(pi, i) {
						return true
					}
					if i == len(text) || text[i] == '/' {
						return false
					}
				}
			}
			if pi == len(pat) {
				return true // a trailing "**": everything
			}
			// "**/": zero directories (the rest right here, without its
			// slash), or any text, slashes included, then the rest.
			if pat[pi] == '/' && m.match(pi+1, ti) {
				return true
			}
			for i := ti; i <= len(text); i++ {
				if m.match(pi, i) {
					return true
				}
			}
			return false
		case '?':
			if ti == len(text) || text[ti] == '/' {
				return false
			}
		case '[':
			if ti == len(text) {
				return false
			}
			end, ok := matchSet(pat, pi, text[ti])
			if !ok || text[ti] == '/' {
				return false
			}
			pi = end
			ti++
			continue
		case '\\':
			pi++
			if pi == len(pat) || ti == len(text) || text[ti] != pat[pi] {
				return false
			}
		default:
			if ti == len(text) || text[ti] != c {
				return false
			}
		}
		pi++
		ti++
	}
	return ti == len(text)
}

// matchSet matches byte t against the set that starts at pat[pi] == '['.
// It returns the position after the set's "]" and whether t is in it; ok
// is false too for a set that is not closed or names an unknown class.
func matchSet(pat string, pi int, t byte) (end int, ok bool) {
	i := pi + 1
	negated := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negated = true
		i++
	}
	in := false
	var prev byte // the previous member, for a range; 0 after a range or class
	first := true // a "]" right after "[" (or "[!") is a member
	for {
		if i >= len(pat) {
			return 0, false
		}
		c := pat[i]
		if c == ']' && !first {
			break
		}
		first = false
		switch {
		case c == '\\':
			i++
			if i >= len(pat) {
				return 0, false
			}
			c = pat[i]
			if t == c {
				in = true
			}
			prev = c
		case c == '-' && prev != 0 && i+1 < len(pat) && pat[i+1] != ']':
			i++
			hi := pat[i]
			if hi == '\\' {
				i++
				if i >= len(pat) {
					return 0, false
				}
				hi = pat[i]
			}
			if prev <= t && t <= hi {
				in = true
			}
			prev = 0
		case c == '[' && i+1 < len(pat) && pat[i+1] == ':':
			close := strings.IndexByte(pat[i+2:], ']')
			if close < 0 {
				return 0, false
			}
			name := pat[i+2 : i+2+close]
			if !strings.HasSuffix(name, ":") {
				// No ":]": the "[" is a plain member.
				if t == '[' {
					in = true
				}
				prev = '['
				break
			}
			cls, known := classes[name[:len(name)-1]]
			if !known {
				return 0, false
			}
			if cls(t) {
				in = true
			}
			i += 2 + close // on the "]" that closes the class
			prev = 0
		default:
			if t == c {
				in = true
			}
			prev = c
		}
		i++
	}
	return i + 1, in != negated
}

// classes are the POSIX classes a set may name, over ASCII as git's own
// ctype has them (no byte from 0x80 is in any).
var classes = map[string]func(byte) bool{
	"alnum":  func(c byte) bool { return isAlpha(c) || isDigit(c) },
	"alpha":  isAlpha,
	"blank":  func(c byte) bool { return c == ' ' || c == '\t' },
	"cntrl":  func(c byte) bool { return c < 0x20 || c == 0x7f },
	"digit":  isDigit,
	"graph":  func(c byte) bool { return c > 0x20 && c < 0x7f },
	"lower":  func(c byte) bool { return 'a' <= c && c <= 'z' },
	"print":  func(c byte) bool { return c >= 0x20 && c < 0x7f },
	"punct":  func(c byte) bool { return c > 0x20 && c < 0x7f && !isAlpha(c) && !isDigit(c) },
	"space":  func(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' },
	"upper":  func(c byte) bool { return 'A' <= c && c <= 'Z' },
	"xdigit": func(c byte) bool { return isDigit(c) || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' },
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
