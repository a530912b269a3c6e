package relevance

import (
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Request is what a prompt's context is chosen from, for an action or a
// completion: the active document and the selection (or the cursor), the
// editor's other open documents, and the budget.
type Request struct {
	// Active is the active document's snapshot.
	Active *workspace.Snapshot
	// SelStart and SelEnd delimit the selection in Active's text (bytes;
	// equal for a cursor).
	SelStart, SelEnd int
	// Open are the open documents' snapshots (Active among them or not).
	Open []*workspace.Snapshot
	// Recent are recently viewed documents, most recent first (actions).
	Recent []workspace.URI
	// MaxTokens is the budget, converted to bytes by Bytes (the prompt
	// session's estimator, so that its correction by the provider's
	// counts applies; nil: 4 bytes a token).
	MaxTokens int
	Bytes     func(tokens int) int
	// Snippets asks for a small prompt's context, such as a
	// completion's: only the declarations the code around the cursor uses
	// (see Snippets), never whole files. ShownStart and ShownEnd delimit
	// the part of Active the caller's prompt shows (both 0: all of it);
	// Active's own declarations outside it may be returned.
	Snippets             bool
	ShownStart, ShownEnd int
	// Cached reports what the prompt session's stable part holds (the
	// prompt cache's session); see SelectInput.Cached.
	Cached func(path, part string) bool
	// Definitions are a language server's answers for Lookups(src, r);
	// see SelectInput.Definitions. Not used with Snippets.
	Definitions []Definition
}

// Docs is what Choose chose, laid out as a prompt wants it (the prompt
// cache's request takes them as they are: assist converts).
type Docs struct {
	// Stable are the documents of the cached part besides the active one:
	// they depend on the active file, not on the selection. With
	// ExcerptActive, the active file's parts are among them. For
	// Request.Snippets, the snippets, most relevant first.
	Stable []ContextFile
	// Volatile are those only this selection needs (the prompt's tail).
	Volatile []ContextFile
	// ExcerptActive is set when the active file is too large to show
	// whole.
	ExcerptActive bool
}

// Choose is the one entry point of the selection: it chooses the documents
// a prompt shows besides the active one, by relevance (Select, or Snippets
// for Request.Snippets), with the open buffers' versions. src may be nil
// (no workspace: nothing).
func Choose(src Source, r Request) Docs {
	var out Docs
	if src == nil || r.Active == nil || r.MaxTokens <= 0 {
		return out
	}
	text := r.Active.Text()
	budget := r.MaxTokens * 4
	if r.Bytes != nil {
		budget = r.Bytes(r.MaxTokens)
	}
	var open []*workspace.Snapshot
	for _, o := range r.Open {
		if o.URI != r.Active.URI {
			open = append(open, o)
		}
	}
	if r.Snippets {
		in := SnippetInput{Active: r.Active.URI, Text: text, Cursor: r.SelStart,
			ShownStart: r.ShownStart, ShownEnd: r.ShownEnd, Open: open, Budget: budget}
		if in.ShownStart == 0 && in.ShownEnd == 0 {
			in.ShownEnd = len(text)
		}
		out.Stable = Snippets(src, in)
		return out
	}
	in := SelectInput{Active: r.Active.URI, ActiveText: text, SelStart: r.SelStart, SelEnd: r.SelEnd,
		Open: open, Recent: r.Recent, Budget: budget, Cached: r.Cached, Definitions: r.Definitions}
	for _, f := range Select(src, in) {
		switch {
		case f.Volatile:
			out.Volatile = append(out.Volatile, f)
		case f.URI == r.Active.URI:
			// A part of the active file: edited with it, laid out last.
			f.Version, f.LastEdit = r.Active.Version, int64(r.Active.Seq)
			out.ExcerptActive = true
			out.Stable = append(out.Stable, f)
		default:
			out.Stable = append(out.Stable, f)
		}
	}
	return out
}
