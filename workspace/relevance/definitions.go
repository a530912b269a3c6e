package relevance

import (
	"slices"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
)

// Lookup is a name the selection uses, at its first use in the active
// text: where a language server is asked for its definition
// (textDocument/definition).
type Lookup struct {
	// Qual is the name before the dot of a selector (x in x.Name), "."
	// after another expression, "" for a plain name (symbols.Ref.Qual).
	Qual, Name string
	// Offset is the byte offset of Name in the active text.
	Offset int
}

// Definition is a language server's answer to a Lookup: where the name is
// declared. A Lookup without a Definition, or with no Locations, is
// resolved through the symbol index instead.
type Definition struct {
	Lookup
	Locations []Location
}

// Location is where a definition is: a document and the 0-based line of
// the declared name.
type Location struct {
	URI  workspace.URI
	Line int
}

// MaxLookups bounds the names of one selection that Lookups returns (the
// first used first): a whole-file review does not ask for hundreds.
const MaxLookups = 48

// Lookups returns the names whose definitions Request.Definitions may
// carry: the names the selection uses (for a cursor, those of the
// declaration around it), in order of first use, at most MaxLookups. Go
// package names (fmt in fmt.Println) are left out: they are imports, not
// declarations. It returns nil where Select would look none up: related
// context off, a request for snippets, an active file outside every folder
// or in a language without a parser.
func Lookups(src Source, r Request) []Lookup {
	if src == nil || r.Active == nil || r.Snippets || !src.Options().IncludeRelated {
		return nil
	}
	s := newSelector(src, SelectInput{Active: r.Active.URI, ActiveText: r.Active.Text(), SelStart: r.SelStart, SelEnd: r.SelEnd})
	if s.v == nil || s.active == nil {
		return nil
	}
	start, end := s.selectionRange()
	pkgs := map[string]bool{}
	if s.lang == "go" {
		for _, imp := range s.active.Imports {
			name := imp.Name
			if name == "" {
				name = imp.Path[strings.LastIndexByte(imp.Path, '/')+1:]
			}
			pkgs[name] = true
		}
	}
	var out []Lookup
	for _, ref := range symbols.Refs(s.lang, []byte(s.in.ActiveText), start, end) {
		if ref.Qual == "" && pkgs[ref.Name] {
			continue
		}
		out = append(out, Lookup{Qual: ref.Qual, Name: ref.Name, Offset: ref.Offset})
		if len(out) == MaxLookups {
			break
		}
	}
	return out
}

// definitions returns the declarations SelectInput.Definitions locates,
// in their order, and the names they answered: those the symbol index
// need not resolve. A location outside the workspace, in a file that may
// not be shown, or in the active file when it is shown whole answers its
// name and adds nothing.
func (s *selector) definitions() (found []ref, answered map[[2]string]bool) {
	answered = map[[2]string]bool{}
	for _, d := range s.in.Definitions {
		if len(d.Locations) == 0 {
			continue
		}
		answered[[2]string{d.Qual, d.Name}] = true
		for _, loc := range d.Locations {
			if r, ok := s.declAt(loc, d.Name); ok {
				found = append(found, r)
			}
		}
	}
	return found, answered
}

// declAt returns the declaration of name on line loc.Line of loc's file:
// the one of that name whose text spans the line (a field or an interface
// method stands for its type), else the smallest one spanning it.
func (s *selector) declAt(loc Location, name string) (ref, bool) {
	sf := s.file(s.canonical(loc.URI))
	if sf == nil || sf.v == nil || sf.rel == "" || sf.isActive && !s.excerpt {
		return ref{}, false
	}
	if f := s.decls(sf); f == nil || !s.load(sf) || sf.file == nil {
		return ref{}, false
	}
	lo, hi, ok := lineSpan(sf.text, loc.Line)
	if !ok {
		return ref{}, false
	}
	var best *symbols.Def
	for i := range sf.file.Defs {
		d := &sf.file.Defs[i]
		if int(d.Start) > hi || int(d.End) < lo {
			continue
		}
		switch {
		case d.Name == name:
			return ref{src: sf, def: d}, true
		case d.Kind != symbols.Member && (best == nil || d.End-d.Start < best.End-best.Start):
			best = d
		}
	}
	if best == nil {
		return ref{}, false
	}
	return ref{src: sf, def: best}, true
}

// canonical returns the URI the selection knows a file by: a language
// server spells URIs its own way (escapes, a drive letter's case), so a
// location naming the active file or an open buffer is matched by its
// path.
func (s *selector) canonical(uri workspace.URI) workspace.URI {
	p, err := uri.Path()
	if err != nil {
		return uri
	}
	if s.byPath == nil {
		s.byPath = map[string]workspace.URI{}
		for u := range s.openText {
			if q, err := u.Path(); err == nil {
				s.byPath[q] = u
			}
		}
		if q, err := s.in.Active.Path(); err == nil {
			s.byPath[q] = s.in.Active
		}
	}
	if u, ok := s.byPath[p]; ok {
		return u
	}
	return workspace.FileURI(p)
}

// lineSpan returns the byte range of the 0-based line n of text.
func lineSpan(text string, n int) (lo, hi int, ok bool) {
	if n < 0 {
		return 0, 0, false
	}
	for ; n > 0; n-- {
		i := strings.IndexByte(text[lo:], '\n')
		if i < 0 {
			return 0, 0, false
		}
		lo += i + 1
	}
	hi = len(text)
	if i := strings.IndexByte(text[lo:], '\n'); i >= 0 {
		hi = lo + i
	}
	return lo, hi, true
}

// withoutAnswered drops the references a language server answered.
func withoutAnswered(refs []symbols.Ref, answered map[[2]string]bool) []symbols.Ref {
	if len(answered) == 0 {
		return refs
	}
	return slices.DeleteFunc(slices.Clone(refs), func(r symbols.Ref) bool { return answered[[2]string{r.Qual, r.Name}] })
}
