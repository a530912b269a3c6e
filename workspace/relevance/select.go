package relevance

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
)

// Reason says why something entered the context.
type Reason string

// Reasons, the selection's first (volatile), then the active file's
// (stable), each group in order of priority.
const (
	ReasonRegion     Reason = "region"     // the active file's header or a declaration around the selection (a large active file)
	ReasonDefinition Reason = "definition" // a language server's definition of a name the selection uses (SelectInput.Definitions)
	ReasonRef        Reason = "ref"        // defines a name the selection uses (the symbol index)
	ReasonType       Reason = "type"       // a type mentioned by a definition the selection uses (one hop)
	ReasonScope      Reason = "scope"      // defines a name the declaration around the selection uses
	ReasonUse        Reason = "use"        // defines a name the active file uses
	ReasonImport     Reason = "import"     // imported by the active file
	ReasonOpen       Reason = "open"       // open in the editor
	ReasonSameDir    Reason = "same-dir"   // in the active file's directory (Go: its package)
	ReasonRecent     Reason = "recent"     // recently viewed
)

// ContextFile is one piece of a prompt's context: a whole file or one
// declaration of a file (a snippet), a plain value for the prompt builder.
type ContextFile struct {
	// Path is workspace-relative and slash-separated.
	Path     string
	URI      workspace.URI
	Language string
	// Text is the whole file, or the snippet: the declaration with its doc
	// comment (a long function's body elided).
	Text   string
	Reason Reason
	// Part is "" for a whole file, else the declaration the snippet shows
	// ("func NewServer", "method Server.Start", "type Server").
	Part string
	// Line is the 1-based line of the file where Text begins.
	Line int
	// Volatile is set for what the selection needs that the stable part
	// does not show: it belongs in the prompt's request tail, not in its
	// cached prefix, as it changes with the selection.
	Volatile bool
	// LastEdit and Version are the open buffer's Seq and Version, 0 for
	// files on disk.
	LastEdit int64
	Version  int32
}

// SelectInput is the editor state a selection is made from. The caller
// fills it from one snapshot of the documents.
type SelectInput struct {
	// Active is the document the action runs on; it is never part of the
	// selection (the prompt builder lays it out whole, separately).
	Active workspace.URI
	// ActiveText is its text.
	ActiveText string
	// SelStart and SelEnd delimit the selection in ActiveText (byte
	// offsets; equal for a cursor, which stands for the declaration around
	// it).
	SelStart, SelEnd int
	// Open are the other open documents' snapshots; their Seq orders them
	// by their last edit.
	Open []*workspace.Snapshot
	// Recent are recently viewed documents, most recent first.
	Recent []workspace.URI
	// Budget is the size, in prompt bytes, the selection may fill, block
	// headers included: the caller converts its token budget with its
	// token estimator (cache.Estimator.Bytes). Zero selects nothing.
	Budget int
	// Cached, if set, reports whether a piece (its path and part, "" for
	// a whole file) is in the prompt session's stable part, which the
	// provider has cached (cache.Session.Shown): within each group of
	// candidates (the active file's declarations and imports; the open
	// buffers, its directory and recent files; the selection's
	// definitions) those go first, so that what a session keeps asking for
	// stays in the cached prefix and a switch of file or function re-sends
	// less.
	Cached func(path, part string) bool
	// Definitions are a language server's answers for the selection's
	// names (Lookups): the declarations they locate rank first among the
	// volatile pieces, and the names they answered are not resolved
	// through the symbol index, which stays the way for the others.
	Definitions []Definition
}

// VolatileShare is the part of SelectInput.Budget kept for the volatile
// pieces (the selection's definitions that the stable part does not show);
// the stable part gets the rest, whatever the selection.
const VolatileShare = 0.25

// PrimaryShare is the part of the stable budget kept for the declarations
// the active file uses (and the types they mention) and its imports; the
// open buffers, the directory's files and recent files get the rest.
const PrimaryShare = 2.0 / 3

// Sizes that decide between a whole file and snippets of it.
const (
	// SmallFileBytes: a file up to this size enters whole (about 2,000
	// tokens); a larger one only by the snippets of the declarations used.
	SmallFileBytes = 6 << 10
	// maxBodyBytes: a function whose body is up to this size is shown
	// with it; a longer one by its doc comment and signature.
	maxBodyBytes = 2 << 10
	// maxSnippetBytes: a longer declaration (a huge type) is cut at a line
	// end, with a marker.
	maxSnippetBytes = 6 << 10
	// maxSameDir bounds how many files of the active file's directory are
	// considered.
	maxSameDir = 24
	// ActiveWholeBytes: an active file up to this size (about 6,400
	// tokens) is shown whole; a larger one by its header and the
	// declarations around the selection (see Select).
	ActiveWholeBytes = 20 << 10
	// maxRegionBytes: a declaration around the selection larger than this
	// is shown by the lines around the selection instead.
	maxRegionBytes = 16 << 10
	// maxHeaderBytes caps the header of a large active file.
	maxHeaderBytes = 4 << 10
)

// blockOverhead is the prompt bytes a piece costs beyond its text and
// path: the block's header and footer.
func blockOverhead(cf ContextFile) int {
	n := 48 + len(cf.Path)
	if cf.Part != "" {
		n += 20 + len(cf.Part)
	}
	return n
}

// Cost returns the prompt bytes cf takes: its text and its block.
func (cf ContextFile) Cost() int { return len(cf.Text) + blockOverhead(cf) }

// Select picks what enters a prompt around the active document, by
// relevance, within SelectInput.Budget:
//
// The stable part depends only on the active file and the editor's open
// buffers, never on the selection, so that it stays the same from request
// to request (the provider caches it): the declarations the active file
// uses (most used first), the files it imports, the open buffers by
// recency, the files of its directory (Go: its package), recently viewed
// files. It gets the budget less VolatileShare.
//
// The volatile part is what the selection needs that the stable part does
// not show: the declarations the selection uses — first those a language
// server located (SelectInput.Definitions), then, for the names it did not
// answer, those the folder's symbol index resolves (its package and
// imports for Go, imports, the directory and then the whole folder for
// other languages) — then the types those mention (one hop), then the
// names the declaration around the selection uses.
//
// A file up to SmallFileBytes enters whole, a larger one only by snippets
// of the declarations used (a doc comment and the declaration; a long
// function's body elided), so that a big unrelated buffer stays out. Where
// a budget cuts, the least relevant goes first; a piece that does not fit is
// skipped and smaller ones after it may still enter. Secret files (by name
// or by the target of a link) never enter, even open, nor binary files,
// files over the size cap, files outside the workspace, or ignored files
// that are not open. IncludeRelated switches the declarations, imports and
// directory off, IncludeOpen the open buffers, IncludeRecent the recent
// files.
//
// An active file larger than ActiveWholeBytes is not shown whole: Select
// adds its header (what precedes its first declaration: package clause,
// imports) and the declarations the selection is in (whole, or the lines
// around the selection for one larger than maxRegionBytes), with Reason
// ReasonRegion, outside the budget; its other declarations are candidates
// like any file's. These depend on where the selection is, not on what it
// says: they stay the same while the user works in one declaration, so
// they are stable pieces (at the end of the prompt's stable part, where a
// new one is appended cheaply).
//
// The result is deterministic: the stable pieces first, files on disk then
// open buffers least recently edited first, each by path and line; then
// the active file's regions, by line; then the volatile pieces, by path
// and line.
func Select(src Source, in SelectInput) []ContextFile {
	s := newSelector(src, in)
	if s == nil || in.Budget <= 0 {
		return nil
	}
	regions := s.regions()
	volatile := int(float64(in.Budget) * VolatileShare)
	stableBudget := in.Budget - volatile
	primary, secondary := s.stableCandidates()
	primary, secondary = s.cachedFirst(primary), s.cachedFirst(secondary)
	// The primary candidates get PrimaryShare of the stable budget, the
	// secondary ones the rest and what the primary ones leave in whole
	// eighths: an edit that changes what the active file uses must not
	// move the cut among the open buffers and the directory's files.
	primaryBudget := int(float64(stableBudget) * PrimaryShare)
	stable := s.fill(primary, primaryBudget, regions)
	left := primaryBudget
	for _, p := range stable {
		left -= p.cf.Cost()
	}
	if q := stableBudget / 8; q > 0 {
		left = left / q * q
	}
	stable = append(stable, s.fill(secondary, stableBudget-primaryBudget+left, append(slices.Clone(regions), stable...))...)
	// What the session's stable part shows already is served from the
	// cache, not repeated (cache.Session): it has an allowance of its own.
	cachedVol, newVol := s.splitCached(s.volatileCandidates())
	vol := s.fill(cachedVol, volatile, append(slices.Clone(regions), stable...))
	vol = append(vol, s.fill(newVol, volatile, append(append(slices.Clone(regions), stable...), vol...))...)
	out := make([]ContextFile, 0, len(regions)+len(stable)+len(vol))
	for _, p := range stable {
		out = append(out, p.cf)
	}
	slices.SortStableFunc(out, func(a, b ContextFile) int {
		return cmp.Or(cmp.Compare(a.LastEdit, b.LastEdit), strings.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line))
	})
	for _, p := range regions {
		out = append(out, p.cf)
	}
	// The budget took the volatile pieces by relevance; they are laid out
	// by place, so that the same pieces give the same bytes whatever the
	// selection's order of names.
	slices.SortStableFunc(vol, func(a, b piece) int {
		return cmp.Or(strings.Compare(a.cf.Path, b.cf.Path), cmp.Compare(a.cf.Line, b.cf.Line))
	})
	for _, p := range vol {
		p.cf.Volatile = true
		out = append(out, p.cf)
	}
	return uniqueParts(out)
}

// uniqueParts names every piece of a file apart: a file may declare a
// name twice (Go's several func init, a Python function defined again, a
// declaration the user just copied), and two of its pieces would then
// carry one part name, which the prompt cannot tell apart. The first in
// the prompt keeps its name; a later one gets its line ("func init, line
// 40"); a piece repeating one already there (same part, same line) goes.
func uniqueParts(out []ContextFile) []ContextFile {
	type at struct{ path, part string }
	var seen map[at]int // → the line of the piece that has the name
	keep := out[:0]
	for _, cf := range out {
		if cf.Part == "" {
			keep = append(keep, cf)
			continue
		}
		if seen == nil {
			seen = make(map[at]int, len(out))
		}
		k := at{cf.Path, cf.Part}
		if line, dup := seen[k]; dup {
			if line == cf.Line {
				continue
			}
			cf.Part += ", line " + strconv.Itoa(cf.Line)
			k.part = cf.Part
			if _, again := seen[k]; again {
				continue
			}
		}
		seen[k] = cf.Line
		keep = append(keep, cf)
	}
	return keep
}

// candidate is a piece that may enter the context: a whole file (def nil)
// or one declaration of a file.
type candidate struct {
	src    *srcFile
	def    *symbols.Def
	reason Reason
}

// piece is an accepted candidate.
type piece struct {
	key, file string // what it covers: "rel" for a whole file, "rel#start" for a snippet
	cf        ContextFile
}

// fill accepts candidates in order within budget bytes, skipping what is
// already covered — by an accepted piece, or by covered, the pieces of a
// part filled before. A whole file accepted after snippets of it replaces
// them (their bytes are given back).
func (s *selector) fill(cands []candidate, budget int, covered []piece) []piece {
	var out []piece
	have := map[string]bool{}
	snipped := map[string]bool{} // files with snippets among covered
	for _, p := range covered {
		have[p.key] = true
		if p.key != p.file {
			snipped[p.file] = true
		}
	}
	for _, c := range cands {
		key := c.src.rel
		if c.def != nil {
			key += "#" + strconv.Itoa(int(c.def.Start))
		}
		if have[key] || have[c.src.rel] || c.def == nil && snipped[c.src.rel] {
			continue
		}
		cf, ok := s.render(c)
		if !ok {
			continue
		}
		cost := cf.Cost()
		if c.def == nil {
			// The file's snippets already in this part go.
			for _, p := range out {
				if p.file == c.src.rel {
					cost -= p.cf.Cost()
				}
			}
		}
		if cost > budget {
			continue
		}
		if c.def == nil {
			out = slices.DeleteFunc(out, func(p piece) bool { return p.file == c.src.rel })
		}
		budget -= cost
		have[key] = true
		out = append(out, piece{key: key, file: c.src.rel, cf: cf})
	}
	return out
}

// render makes the piece a candidate shows, reading its file; ok is false
// for what may not be sent.
func (s *selector) render(c candidate) (ContextFile, bool) {
	sf := c.src
	if !s.load(sf) {
		return ContextFile{}, false
	}
	cf := ContextFile{Path: sf.disp, URI: sf.uri, Language: sf.lang, Text: sf.text, Reason: c.reason, Line: 1}
	if sf.open {
		cf.LastEdit, cf.Version = int64(s.open[sf.uri].Seq), s.open[sf.uri].Version
	}
	if c.def != nil {
		d, ok := sf.find(c.def)
		if !ok || sf.isActive && int(d.Start) < s.hideEnd && s.hideStart < int(d.End) {
			return ContextFile{}, false
		}
		cf.Text, cf.Line = snippet(sf.text, d)
		cf.Part = partName(d)
	}
	return cf, true
}

// bufferCandidate checks an open buffer: inside the workspace, not secret
// (by its name or its link's target), not binary, within the size cap.
func bufferCandidate(src Source, uri workspace.URI, text string, opts workspace.Options) (ContextFile, bool) {
	p, err := uri.Path()
	if err != nil {
		return ContextFile{}, false // untitled: and other in-memory documents
	}
	disp, ok := src.RelPath(p)
	if !ok {
		return ContextFile{}, false
	}
	if src.SecretName(p) {
		src.RefuseSecret(disp)
		return ContextFile{}, false
	}
	if real, _, err := src.Resolve(p); err != nil || src.SecretName(real) {
		return ContextFile{}, false
	}
	if int64(len(text)) > opts.MaxFileSize || looksBinaryString(text) {
		return ContextFile{}, false
	}
	return ContextFile{Path: disp, URI: uri, Language: workspace.LanguageOf(p), Text: text, Reason: ReasonOpen, Line: 1}, true
}

// cachedFirst moves the candidates the session's stable part holds
// (SelectInput.Cached) before the others, each group in its order: among
// what is relevant enough to be chosen, what is already cached is taken
// first, so that switching files or functions re-sends less.
func (s *selector) cachedFirst(cands []candidate) []candidate {
	hit, miss := s.splitCached(cands)
	return append(hit, miss...)
}

// splitCached splits cands into those the session's stable part holds and
// the others, each in its order.
func (s *selector) splitCached(cands []candidate) (hit, miss []candidate) {
	if s.in.Cached == nil {
		return nil, cands
	}
	for _, c := range cands {
		part := ""
		if c.def != nil {
			part = partName(*c.def)
		}
		if s.in.Cached(c.src.disp, part) {
			hit = append(hit, c)
		} else {
			miss = append(miss, c)
		}
	}
	return hit, miss
}
