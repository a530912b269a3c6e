package cache

// The reader of the prompts a Session builds, for the tests: Reconstruct and
// the edit blocks' applier. Production code writes prompts and never reads
// them back (issue 31: no production code that only tests reach).

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace/linediff"
)

// ErrMalformed is returned by Reconstruct for a prompt it cannot read.
var ErrMalformed = errors.New("malformed prompt")

// Reconstruct reads back what a prompt built by a Session says about the
// files: it takes every <file> block and applies every <edit> block in order,
// and returns each file's current text by path (a snippet's by
// "path#part"). It stops at the request block. It is how the tests prove
// that the prompt always conveys the active buffer's current text; only
// tests need it, so it lives in a test file (the cache_test package's tests
// and examples see it as cache.Reconstruct).
func Reconstruct(msgs []Message) (map[string]string, error) {
	files := make(map[string]string)
	inContext := false
	for _, m := range msgs {
		if m.Role != "user" {
			continue
		}
		b := []byte(m.Content)
		for len(b) > 0 {
			line, rest := cutLine(b)
			switch {
			case bytes.HasPrefix(line, []byte("<request ")):
				b = nil
				continue
			case bytes.Equal(line, []byte("<context>\n")), bytes.Equal(line, []byte("</context>\n")):
				// The documents of this request only are read (their
				// lengths delimit them) but not part of what the prompt
				// conveys from request to request.
				inContext = line[1] != '/'
				b = rest
				continue
			case bytes.HasPrefix(line, []byte("<file ")):
				path, err := segAttr(line)
				if err != nil {
					return nil, err
				}
				ns, err := attr(line, "bytes")
				if err != nil {
					return nil, err
				}
				n, err := strconv.Atoi(ns)
				if err != nil || n < 0 || n > len(rest) || !bytes.HasPrefix(rest[n:], []byte(fileFooter)) {
					return nil, fmt.Errorf("%w: file block %q of %s bytes is cut or unterminated", ErrMalformed, path, ns)
				}
				if !inContext {
					files[path] = string(rest[:n])
				}
				b = rest[n+len(fileFooter):]
				continue
			case bytes.HasPrefix(line, []byte("<edit ")):
				path, err := segAttr(line)
				if err != nil {
					return nil, err
				}
				end := bytes.Index(rest, []byte("\n</edit>\n"))
				var body []byte
				switch {
				case bytes.HasPrefix(rest, []byte("</edit>\n")):
					end, body = 0, nil
				case end < 0:
					return nil, fmt.Errorf("%w: edit block for %q unterminated", ErrMalformed, path)
				default:
					body = rest[:end+1]
					end += 1
				}
				text, ok := files[path]
				if !ok {
					return nil, fmt.Errorf("%w: edit block for %q, which no file block shows", ErrMalformed, path)
				}
				text, err = applyEditBody(text, body)
				if err != nil {
					return nil, fmt.Errorf("%w: edit block for %q: %w", ErrMalformed, path, err)
				}
				files[path] = text
				b = rest[end+len("</edit>\n"):]
				continue
			}
			b = rest
		}
	}
	return files, nil
}

// segAttr returns the key of the document a block header names: its path,
// with "#part" for a snippet.
func segAttr(line []byte) (string, error) {
	path, err := attr(line, "path")
	if err != nil {
		return "", err
	}
	if part, err := attr(line, "part"); err == nil {
		return docKey(path, part), nil
	}
	return path, nil
}

// attr returns the value of name="..." (Go-quoted) in a block header line
// such as `<file path="a.go" language="go" bytes="12">`, reading the
// attributes in order so that a quoted value is never mistaken for a name.
func attr(line []byte, name string) (string, error) {
	s := string(bytes.TrimRight(line, "\n"))
	i := bytes.IndexByte(line, ' ')
	if i < 0 {
		return "", fmt.Errorf("%w: %.60q has no %s", ErrMalformed, line, name)
	}
	s = s[i:]
	for {
		s = strings.TrimLeft(s, " ")
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			return "", fmt.Errorf("%w: %.60q has no %s", ErrMalformed, line, name)
		}
		key := s[:eq]
		q, err := strconv.QuotedPrefix(s[eq+1:])
		if err != nil {
			return "", fmt.Errorf("%w: %.60q: bad attribute %s", ErrMalformed, line, key)
		}
		if key == name {
			v, _ := strconv.Unquote(q)
			return v, nil
		}
		s = s[eq+1+len(q):]
	}
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

// parseHunkHeader parses "@@ -a,b +c,d @@\n" with linediff's reader; an
// edit block's header has both counts (appendEdit writes them).
func parseHunkHeader(line []byte) (oldStart, oldCount, newCount int, err error) {
	s := strings.TrimSuffix(string(line), "\n")
	h, ok := linediff.ParseHunkHeader(s)
	if !ok || !h.HasCounts || (h.OldCount > 0 && h.OldStart == 0) {
		return 0, 0, 0, fmt.Errorf("%w: bad hunk header %.40q", errBadEdit, s)
	}
	return h.OldStart, h.OldCount, h.NewCount, nil
}
