package workspace

import (
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
)

// snippet returns the text a prompt shows for declaration d of text and
// its first line (1-based): the declaration with its doc comment; a
// function longer than maxBodyBytes by its doc comment and signature (the
// body elided); anything longer than maxSnippetBytes cut at a line end.
func snippet(text string, d symbols.Def) (string, int) {
	start, end := int(d.Start), int(d.End)
	line := 1 + strings.Count(text[:start], "\n")
	s := text[start:end]
	if body := int(d.Body); body > start && end-start > maxBodyBytes {
		head := strings.TrimRight(text[start:body], " \t")
		if text[body] == '{' {
			s = head + " { … }"
		} else {
			s = head + "\t…\n"
		}
	}
	if len(s) > maxSnippetBytes {
		cut := strings.LastIndexByte(s[:maxSnippetBytes], '\n')
		if cut < 0 {
			cut = maxSnippetBytes
		}
		s = s[:cut+1] + "⋮ (cut)\n"
	}
	return s, line
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
