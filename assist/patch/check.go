package patch

import (
	"fmt"
	goparser "go/parser"
	"go/scanner"
	"go/token"
	"strings"
)

// placeholderWords are the words a comment may use to stand for elided code.
var placeholderWords = map[string]bool{
	"existing": true, "code": true, "rest": true, "of": true, "the": true, "file": true,
	"function": true, "method": true, "class": true, "body": true, "unchanged": true,
	"remains": true, "remain": true, "remaining": true, "same": true, "as": true,
	"before": true, "above": true, "below": true, "previous": true, "previously": true,
	"other": true, "omitted": true, "elided": true, "here": true, "keep": true, "kept": true,
	"is": true, "are": true, "lines": true, "implementation": true, "imports": true,
	"fields": true, "methods": true, "functions": true, "cases": true, "tests": true,
	"etc": true, "and": true, "more": true, "for": true, "brevity": true, "truncated": true,
	"skip": true, "skipped": true, "snip": true, "content": true, "contents": true,
	"original": true, "still": true, "stays": true, "logic": true, "no": true,
	"changes": true, "unmodified": true, "struct": true, "type": true, "package": true,
	"this": true, "that": true, "in": true, "to": true, "be": true, "a": true,
}

// placeholderKeys are the words of which at least one must appear when the
// comment has no ellipsis.
var placeholderKeys = []string{"existing", "unchanged", "omitted", "elided", "remaining", "unmodified", "snip"}

// isPlaceholder reports whether a line is a comment (or a bare ellipsis)
// that stands for code left out, like "// ... existing code ..." or
// "# ...rest unchanged".
func isPlaceholder(line string) bool {
	s := strings.TrimSpace(line)
	if s == "" || !strings.ContainsAny(s[:1], "{</#-;*.") && !strings.HasPrefix(s, "…") || !mayBePlaceholder(s) {
		return false
	}
	if s == "..." || s == "…" {
		return true
	}
	comment := false
	for _, lead := range []string{"{/*", "<!--", "//", "/*", "#", "--", ";", "*"} {
		if strings.HasPrefix(s, lead) {
			s = strings.TrimPrefix(s, lead)
			comment = true
			break
		}
	}
	if !comment {
		return false
	}
	for _, tail := range []string{"*/}", "-->", "*/"} {
		s = strings.TrimSuffix(strings.TrimSpace(s), tail)
	}
	s = strings.ToLower(s)
	dots := strings.Contains(s, "...") || strings.Contains(s, "…")
	words := strings.FieldsFunc(s, func(r rune) bool { return r < 'a' || r > 'z' })
	if !dots {
		key := false
		for _, w := range words {
			for _, k := range placeholderKeys {
				if w == k {
					key = true
				}
			}
		}
		if !key {
			return false
		}
	}
	for _, w := range words {
		if !placeholderWords[w] {
			return false
		}
	}
	return true
}

// mayBePlaceholder is a cheap filter for isPlaceholder.
func mayBePlaceholder(s string) bool {
	for _, sub := range []string{"...", "…", "xisting", "nchanged", "mitted", "lided", "emaining", "nmodified", "nip"} {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// ellipsisIsCode reports whether a bare "..." line is code in the file's
// language: Python's Ellipsis (stub bodies, doctest continuation lines).
func ellipsisIsCode(path string) bool {
	return strings.HasSuffix(path, ".py") || strings.HasSuffix(path, ".pyi")
}

// newPlaceholder returns the first placeholder line of after that before
// does not have as often, with its 1-based line number. path names the
// file, whose language decides whether a bare ellipsis is code.
func newPlaceholder(path, before, after string) (int, string, bool) {
	code := ellipsisIsCode(path)
	placeholder := func(l string) bool {
		if code {
			if t := strings.TrimSpace(l); t == "..." || t == "…" {
				return false
			}
		}
		return isPlaceholder(l)
	}
	count := func(s string) map[string]int {
		c := map[string]int{}
		for _, l := range strings.Split(s, "\n") {
			if placeholder(l) {
				c[strings.TrimSpace(l)]++
			}
		}
		return c
	}
	if !mayBePlaceholder(after) {
		return 0, "", false
	}
	cb, ca := count(before), count(after)
	for i, l := range strings.Split(after, "\n") {
		t := strings.TrimSpace(l)
		if placeholder(l) && ca[t] > cb[t] {
			return i + 1, t, true
		}
	}
	return 0, "", false
}

// goSyntaxError returns the first syntax error of a Go source, or nil.
func goSyntaxError(name, src string) error {
	_, err := goparser.ParseFile(token.NewFileSet(), name, src, goparser.SkipObjectResolution)
	if err == nil {
		return nil
	}
	if list, ok := err.(scanner.ErrorList); ok && len(list) > 0 {
		return fmt.Errorf("line %d:%d: %s", list[0].Pos.Line, list[0].Pos.Column, list[0].Msg)
	}
	return err
}
