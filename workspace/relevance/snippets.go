package relevance

import "github.com/kimi-lsp/kimi-lsp/workspace"

// SnippetInput is what Snippets works from: a buffer and a cursor.
type SnippetInput struct {
	// Active is the document being edited, Text its text, Cursor a byte
	// offset in it.
	Active workspace.URI
	Text   string
	Cursor int
	// ShownStart and ShownEnd delimit the part of Text the caller's
	// prompt shows (0, len(Text) for all of it): the declarations of the
	// active file outside it may be returned as snippets too.
	ShownStart, ShownEnd int
	// Open are the other open documents (their buffers win over the disk).
	Open []*workspace.Snapshot
	// Budget is the size, in prompt bytes (block headers included), the
	// snippets may take; zero returns nothing.
	Budget int
}

// Snippets returns the declarations the code around a cursor uses, for a
// small prompt such as a completion's: the names used by the declaration
// the cursor is in (else by the lines around it) are resolved as Select
// resolves a selection's, then the types those declarations mention; each
// is a snippet (doc comment and declaration, a long body elided), never a
// whole file, most relevant first, within Budget. Declarations of the
// active file are returned when they lie outside [ShownStart, ShownEnd).
// The same secret, ignore and size rules as Select's apply.
//
// The result depends only on the declaration around the cursor and the
// names it uses, not on the cursor's place in it, so it stays the same
// while the user types inside a function (until a new name appears). A
// call costs a few milliseconds once the folder's index holds the files
// involved (the first call in a package parses them).
func Snippets(src Source, in SnippetInput) []ContextFile {
	if in.Budget <= 0 {
		return nil
	}
	s := newSelector(src, SelectInput{Active: in.Active, ActiveText: in.Text, SelStart: in.Cursor, SelEnd: in.Cursor, Open: in.Open})
	if s.v == nil || s.active == nil {
		return nil
	}
	start, end := min(max(in.ShownStart, 0), len(in.Text)), min(max(in.ShownEnd, 0), len(in.Text))
	if end <= start {
		start, end = 0, len(in.Text)
	}
	// The active file's declarations are candidates, but for those the
	// prompt shows.
	s.excerpt, s.hideStart, s.hideEnd = true, start, end
	var out []ContextFile
	for _, p := range s.fill(s.volatileCandidates(), in.Budget, nil) {
		out = append(out, p.cf)
	}
	return out
}
