package cache

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrMalformed is returned by Reconstruct for a prompt it cannot read.
var ErrMalformed = errors.New("malformed prompt")

// Reconstruct reads back what a prompt built by a Session says about the
// files: it takes every <file> block and applies every <edit> block in order,
// and returns each file's current text by path (a snippet's by
// "path#part"). It stops at the request block. It is how the tests prove that the prompt always conveys the
// active buffer's current text, and a debugging aid.
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
