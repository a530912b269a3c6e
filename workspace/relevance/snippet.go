package relevance

import (
	"strings"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
)

// snippet returns the text a prompt shows for declaration d of text and
// its first line (1-based): the declaration with its doc comment; a
// function whose body is longer than maxBodyBytes by its doc comment and
// signature (the body elided); anything longer than maxSnippetBytes cut,
// its doc comment from the top first, then at a line end.
func snippet(text string, d symbols.Def) (string, int) {
	start, end := int(d.Start), int(d.End)
	line := 1 + strings.Count(text[:start], "\n")
	s := text[start:end]
	if body := int(d.Body); body > start && end-body > maxBodyBytes {
		head := strings.TrimRight(text[start:body], " \t")
		if text[body] == '{' {
			s = head + " { … }"
		} else {
			s = head + "\t…\n"
		}
	}
	if len(s) > maxSnippetBytes && d.Kind == symbols.Type {
		// A huge type: its fields or methods without their comments.
		s = dropInnerComments(s)
	}
	if len(s) > maxSnippetBytes {
		// Keep the declaration: cut its doc comment from the top first,
		// then the declaration at a line end.
		decl := declStart(s)
		if doc := s[:decl]; decl > 0 && len(s)-decl < maxSnippetBytes {
			keep := doc[len(doc)-(maxSnippetBytes-(len(s)-decl)):]
			if i := strings.IndexByte(keep, '\n'); i >= 0 {
				keep = keep[i+1:]
			}
			line += strings.Count(doc[:len(doc)-len(keep)], "\n")
			s = keep + s[decl:]
		} else {
			s = s[decl:]
			line += strings.Count(doc, "\n")
			cut := strings.LastIndexByte(s[:min(len(s), maxSnippetBytes)], '\n') + 1
			if cut <= 0 {
				// One line longer than a snippet (a minified file): cut
				// inside it, at a rune boundary.
				for cut = min(len(s), maxSnippetBytes); cut > 0 && cut < len(s) && !utf8.RuneStart(s[cut]); cut-- {
				}
				s = s[:cut] + "\n"
				cut = len(s)
			}
			s = s[:cut] + "⋮ (cut)\n"
		}
	}
	return s, line
}

// declStart returns where the declaration proper starts in a snippet: after
// its leading comment lines.
func declStart(s string) int {
	off := 0
	for off < len(s) {
		end := strings.IndexByte(s[off:], '\n')
		if end < 0 {
			return off
		}
		l := strings.TrimLeft(s[off:off+end], " \t")
		if !strings.HasPrefix(l, "//") && !strings.HasPrefix(l, "#") && !strings.HasPrefix(l, "*") &&
			!strings.HasPrefix(l, "/*") && !strings.HasPrefix(l, "--") && l != "" {
			return off
		}
		off += end + 1
	}
	return 0
}

// partName names the declaration a snippet shows: "func NewServer",
// "method Server.Start", "type Server".
func partName(d symbols.Def) string {
	switch d.Kind {
	case symbols.Method:
		return "method " + d.Recv + "." + d.Name
	case symbols.Member:
		return "type " + d.Recv
	}
	return d.Kind.String() + " " + d.Name
}

// dropInnerComments removes the comment lines after a declaration's first
// line (its doc comment stays), marking the first place with "…".
func dropInnerComments(s string) string {
	decl := declStart(s)
	head, body, ok := strings.Cut(s[decl:], "\n")
	if !ok {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:decl])
	b.WriteString(head)
	b.WriteString(" // (comments inside left out)\n")
	for line := range strings.Lines(body) {
		if t := strings.TrimLeft(line, " \t"); !strings.HasPrefix(t, "//") {
			b.WriteString(line)
		}
	}
	return b.String()
}
