package relevance

import (
	"cmp"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
	"github.com/kimi-lsp/kimi-lsp/workspace/watch"
)

// selector holds what one Select call has found out: the files it looked
// at, parsed once, and the Go package scopes it resolved names in.
type selector struct {
	src  Source
	opts workspace.Options
	in   SelectInput

	v              Folder // the active file's folder; nil outside every folder
	rel, dir, lang string
	active         *symbols.File
	// excerpt is set for an active file larger than ActiveWholeBytes:
	// its declarations may then be shown as snippets.
	excerpt bool
	// regionSpans are the byte ranges of the active file that regions
	// show.
	regionSpans [][2]int
	// hideStart and hideEnd: declarations of the active file overlapping
	// this range are shown by the caller (Snippets).
	hideStart, hideEnd int

	open     map[workspace.URI]*workspace.Snapshot
	openText map[workspace.URI]string // the open buffers' texts, taken once
	files    map[workspace.URI]*srcFile
	scopes   map[string]*goScope
	// byPath maps the open buffers' and the active file's paths to their
	// URIs (see canonical), made at the first use.
	byPath  map[string]workspace.URI
	modDone bool
	modDir  string
	modPath string
}

// srcFile is a file the selection looked at.
type srcFile struct {
	uri      workspace.URI
	abs      string
	rel      string // folder-relative ("" outside every folder)
	disp     string // workspace-relative, as prompts show it
	lang     string
	size     int64
	open     bool
	isActive bool
	v        Folder

	file       *symbols.File // nil until parsed
	parsedSize int64

	loaded, ok bool
	text       string
}

// ref is a declaration found for a name.
type ref struct {
	src *srcFile
	def *symbols.Def
}

// refKey identifies a declaration whatever copy of it a ref holds.
type refKey struct {
	src   *srcFile
	start int32
	name  string
	kind  symbols.Kind
}

func (r ref) key() refKey { return refKey{r.src, r.def.Start, r.def.Name, r.def.Kind} }

func newSelector(src Source, in SelectInput) *selector {
	s := &selector{
		src: src, opts: src.Options(), in: in,
		open: make(map[workspace.URI]*workspace.Snapshot, len(in.Open)), openText: make(map[workspace.URI]string, len(in.Open)),
		files: map[workspace.URI]*srcFile{}, scopes: map[string]*goScope{},
	}
	for _, b := range in.Open {
		s.open[b.URI], s.openText[b.URI] = b, b.Text()
	}
	s.in.SelStart = min(max(in.SelStart, 0), len(in.ActiveText))
	s.in.SelEnd = min(max(in.SelEnd, s.in.SelStart), len(in.ActiveText))
	if p, err := in.Active.Path(); err == nil {
		if v, rel, ok := src.Folder(p); ok {
			s.v, s.rel = v, rel
			s.dir = dirOf(rel)
			s.lang = workspace.LanguageOf(rel)
			s.active = v.BufferSymbols(in.Active, s.lang, in.ActiveText)
			s.excerpt = len(in.ActiveText) > ActiveWholeBytes && len(s.active.Defs) > 0
			v.StartSymbols() // the whole folder's index, for later look-ups
		}
	}
	return s
}

func dirOf(rel string) string {
	d := path.Dir(rel)
	if d == "." {
		return ""
	}
	return d
}

// file returns the srcFile for uri (nil for a non-file URI).
func (s *selector) file(uri workspace.URI) *srcFile {
	if sf, ok := s.files[uri]; ok {
		return sf
	}
	p, err := uri.Path()
	if err != nil {
		return nil
	}
	sf := &srcFile{uri: uri, abs: p, lang: workspace.LanguageOf(p), isActive: uri == s.in.Active}
	if v, rel, ok := s.src.Folder(p); ok {
		sf.v, sf.rel = v, rel
		sf.disp, _ = s.src.RelPath(p)
		if t := v.Tree(); t != nil {
			if e, ok := t.Lookup(rel); ok {
				sf.size = e.Size
			}
		}
	}
	if text, ok := s.openText[uri]; ok {
		sf.open, sf.size = true, int64(len(text))
	}
	s.files[uri] = sf
	return sf
}

// fileAt returns the srcFile of the folder-relative path rel in v.
func (s *selector) fileAt(v Folder, rel string) *srcFile {
	return s.file(workspace.FileURI(v.Abs(rel)))
}

// decls returns the declarations of sf (nil for a file that may not be
// read or has no parser). Open buffers are parsed from their text, other
// files come from the folder's index.
func (s *selector) decls(sf *srcFile) *symbols.File {
	if sf.file != nil || sf.v == nil {
		return sf.file
	}
	switch {
	case sf.isActive:
		sf.file, sf.parsedSize = s.active, int64(len(s.in.ActiveText))
	case sf.open:
		if !s.allowed(sf) || !symbols.Supported(sf.lang) {
			return nil
		}
		text := s.openText[sf.uri]
		sf.file, sf.parsedSize = sf.v.BufferSymbols(sf.uri, sf.lang, text), int64(len(text))
	default:
		if f, size, ok := sf.v.FileSymbols(sf.rel); ok {
			sf.file, sf.parsedSize = f, size
		}
	}
	return sf.file
}

// allowed reports whether sf may be shown: not secret by its name or the
// target of its links, inside the workspace.
func (s *selector) allowed(sf *srcFile) bool {
	if s.src.SecretName(sf.abs) {
		return false
	}
	real, _, err := s.src.Resolve(sf.abs)
	return err == nil && !s.src.SecretName(real)
}

// load reads sf's text for the prompt (the open buffer's, else the disk's)
// with every check, and re-parses it if it is not the text the
// declarations came from.
func (s *selector) load(sf *srcFile) bool {
	if sf.loaded {
		return sf.ok
	}
	sf.loaded = true
	if sf.isActive {
		sf.ok, sf.text = s.excerpt, s.in.ActiveText
		return sf.ok
	}
	if sf.open {
		cf, ok := bufferCandidate(s.src, sf.uri, s.openText[sf.uri], s.opts)
		sf.ok, sf.text = ok, cf.Text
	} else if sf.v != nil && !sf.v.Ignored(sf.rel) {
		file, err := s.src.ReadFile(sf.abs)
		sf.ok, sf.text = err == nil, file.Text
	}
	if sf.ok && sf.file != nil && (int64(len(sf.text)) != sf.parsedSize) {
		sf.file, sf.parsedSize = symbols.Parse(sf.lang, []byte(sf.text)), int64(len(sf.text))
	}
	return sf.ok
}

// find returns sf's declaration matching d in the text loaded (the same
// one unless the file was re-parsed). A member stands for its type.
func (sf *srcFile) find(d *symbols.Def) (symbols.Def, bool) {
	if sf.file == nil {
		return symbols.Def{}, false
	}
	var found *symbols.Def
	for i := range sf.file.Defs {
		c := &sf.file.Defs[i]
		if c.Name == d.Name && c.Kind == d.Kind && c.Recv == d.Recv {
			if c.Start == d.Start {
				found = c
				break
			}
			if found == nil {
				found = c
			}
		}
	}
	if found == nil || int(found.End) > len(sf.text) {
		return symbols.Def{}, false
	}
	out := *found
	if out.Kind == symbols.Member {
		out = symbols.Def{Name: out.Recv, Kind: symbols.Type, Start: out.Start, End: out.End}
	}
	return out, true
}

// regions returns the pieces that show a large active file: its header and
// the declarations the selection is in (see Select); nil for an active file
// shown whole.
func (s *selector) regions() []piece {
	if !s.excerpt || s.v == nil {
		return nil
	}
	sf := s.file(s.in.Active)
	if sf == nil || !s.load(sf) {
		return nil
	}
	sf.file, sf.parsedSize = s.active, int64(len(s.in.ActiveText))
	text := s.in.ActiveText
	mk := func(part string, start, end int, def *symbols.Def) piece {
		cf := ContextFile{Path: sf.disp, URI: sf.uri, Language: sf.lang, Text: text[start:end], Reason: ReasonRegion,
			Part: part, Line: 1 + strings.Count(text[:start], "\n")}
		key := sf.rel + "#" + part
		if def != nil {
			key = sf.rel + "#" + strconv.Itoa(int(def.Start))
		}
		if part != "header" {
			s.regionSpans = append(s.regionSpans, [2]int{start, end})
		}
		return piece{key: key, file: sf.rel, cf: cf}
	}
	var out []piece
	if first := int(s.active.Defs[0].Start); first > 0 {
		end := first
		if end > maxHeaderBytes {
			end = strings.LastIndexByte(text[:maxHeaderBytes], '\n') + 1
		}
		if end > 0 {
			out = append(out, mk("header", 0, end, nil))
		}
	}
	start, end := s.in.SelStart, s.in.SelEnd
	var decls []symbols.Def
	for _, d := range s.active.Defs {
		if d.Kind == symbols.Member || len(decls) > 0 && decls[len(decls)-1].Start == d.Start {
			continue
		}
		if int(d.Start) <= end && start <= int(d.End) && (start < end || start < int(d.End)) {
			decls = append(decls, d)
		}
	}
	for i := range decls {
		d := &decls[i]
		if int(d.End-d.Start) > maxRegionBytes {
			decls = nil // a huge declaration: the lines around the selection
			break
		}
		out = append(out, mk(partName(*d), int(d.Start), int(d.End), d))
	}
	if len(decls) == 0 {
		lo, hi := linesAround(text, start, end, 40)
		first, last := 1+strings.Count(text[:lo], "\n"), strings.Count(text[:hi], "\n")
		out = append(out, mk("lines "+strconv.Itoa(first)+"-"+strconv.Itoa(last), lo, hi, nil))
	}
	return out
}

// selectionRange returns the range of the active text whose names the
// selection stands for: the selection, or for a cursor the declaration
// around it (else the lines around it).
func (s *selector) selectionRange() (int, int) {
	start, end := s.in.SelStart, s.in.SelEnd
	if start < end {
		return start, end
	}
	if d, ok := s.enclosing(start, end); ok {
		return int(d.Start), int(d.End)
	}
	return linesAround(s.in.ActiveText, start, end, 10)
}

// enclosing returns the span of the active file's declarations that
// overlap [start, end] (containing a cursor).
func (s *selector) enclosing(start, end int) (symbols.Def, bool) {
	if s.active == nil {
		return symbols.Def{}, false
	}
	var out symbols.Def
	found := false
	for _, d := range s.active.Defs {
		if int(d.Start) <= end && start <= int(d.End) && (start < end || int(d.Start) <= start && start <= int(d.End)) {
			if !found {
				out, found = d, true
			} else {
				out.Start, out.End = min(out.Start, d.Start), max(out.End, d.End)
			}
		}
	}
	return out, found
}

// linesAround returns the byte range of the whole lines from n lines
// above the one holding start to n lines below the one holding end, cut
// inside lines far longer than code's (see aroundLineBytes).
func linesAround(text string, start, end, n int) (lo, hi int) {
	first := strings.Count(text[:start], "\n") - n
	last := strings.Count(text[:end], "\n") + n
	hi = len(text)
	line := 0
	for i := 0; i < len(text) && line <= last; i++ {
		if text[i] != '\n' {
			continue
		}
		line++
		switch line {
		case first:
			lo = i + 1
		case last + 1:
			hi = i + 1
		}
	}
	// Lines far longer than code's (a minified file) are cut, at rune
	// boundaries: n lines take at most max(n, 1)*aroundLineBytes on each side.
	if limit := max(n, 1) * aroundLineBytes; start-lo > limit {
		for lo = start - limit; lo < start && !utf8.RuneStart(text[lo]); lo++ {
		}
	}
	if limit := max(n, 1) * aroundLineBytes; hi-end > limit {
		for hi = end + limit; hi > end && !utf8.RuneStart(text[hi]); hi-- {
		}
	}
	return lo, hi
}

// aroundLineBytes bounds the bytes per line linesAround takes.
const aroundLineBytes = 256

// volatileCandidates lists what the selection uses: its names'
// declarations (those SelectInput.Definitions locates first, then the
// symbol index's for the other names), the types they mention, the names
// of the declaration around it.
func (s *selector) volatileCandidates() []candidate {
	if !s.opts.IncludeRelated || s.v == nil || s.active == nil {
		return nil
	}
	text := []byte(s.in.ActiveText)
	start, end := s.selectionRange()
	evidence := s.in.ActiveText[start:end]
	enc, hasEnc := s.enclosing(start, end)
	if hasEnc {
		evidence = s.in.ActiveText[enc.Start:enc.End]
	}
	var out []candidate
	seen := map[refKey]bool{}
	add := func(refs []ref, reason Reason) {
		for _, r := range refs {
			if k := r.key(); !seen[k] {
				seen[k] = true
				out = append(out, candidate{src: r.src, def: r.def, reason: reason})
			}
		}
	}
	// A language server's definitions first; the symbol index resolves
	// the names it did not answer.
	defined, answered := s.definitions()
	add(defined, ReasonDefinition)
	indexed := s.resolve(withoutAnswered(symbols.Refs(s.lang, text, start, end), answered), evidence, false)
	add(indexed, ReasonRef)
	add(s.oneHop(append(defined, indexed...)), ReasonType)
	if hasEnc {
		add(s.resolve(withoutAnswered(symbols.Refs(s.lang, text, int(enc.Start), int(enc.End)), answered), evidence, false), ReasonScope)
	}
	return out
}

// stableCandidates lists, in order of relevance, what depends on the
// active file alone.
// The primary ones are the declarations the active file uses, the types
// those mention, and the files it imports; the secondary ones the open
// buffers, the files of its directory and recent files, which fill what
// the primary ones leave.
func (s *selector) stableCandidates() (primary, secondary []candidate) {
	out := &primary
	add := func(sf *srcFile, def *symbols.Def, reason Reason) {
		if sf != nil && (!sf.isActive || s.excerpt && def != nil) {
			*out = append(*out, candidate{src: sf, def: def, reason: reason})
		}
	}
	wholeOrDecl := func(r ref, reason Reason) {
		if r.src.size <= SmallFileBytes {
			add(r.src, nil, reason)
		} else {
			add(r.src, r.def, reason)
		}
	}
	related := s.opts.IncludeRelated && s.v != nil && s.active != nil
	if related {
		uses := s.uses()
		for _, r := range uses {
			wholeOrDecl(r, ReasonUse)
		}
		for _, r := range s.oneHop(uses[:min(len(uses), maxHopFrom)]) {
			wholeOrDecl(r, ReasonType)
		}
		for _, sf := range s.importedFiles() {
			if sf.size <= SmallFileBytes {
				add(sf, nil, ReasonImport)
			}
		}
	}
	out = &secondary
	if s.opts.IncludeOpen {
		bufs := slices.Clone(s.in.Open)
		slices.SortStableFunc(bufs, func(a, b *workspace.Snapshot) int {
			return cmp.Or(cmp.Compare(b.Seq, a.Seq), strings.Compare(string(a.URI), string(b.URI)))
		})
		for _, b := range bufs {
			if sf := s.file(b.URI); sf != nil && sf.size <= SmallFileBytes {
				add(sf, nil, ReasonOpen)
			}
		}
	}
	if related {
		for _, sf := range s.sameDir() {
			if sf.size <= SmallFileBytes {
				add(sf, nil, ReasonSameDir)
			}
		}
	}
	if s.opts.IncludeRecent {
		for _, u := range s.in.Recent {
			if sf := s.file(u); sf != nil && sf.size <= SmallFileBytes && sf.v != nil && sf.rel != "" {
				if t := sf.v.Tree(); sf.open || t != nil && hasEntry(t, sf.rel) {
					add(sf, nil, ReasonRecent)
				}
			}
		}
	}
	return primary, secondary
}

// maxHopFrom bounds the declarations whose types are looked up one hop
// further for the stable part (the most used first).
const maxHopFrom = 32

// uses returns the declarations of other files that the active file uses,
// most used first; for a large active file, those its shown regions use.
func (s *selector) uses() []ref {
	text := []byte(s.in.ActiveText)
	var refs []symbols.Ref
	if s.excerpt {
		for _, r := range s.regionSpans {
			refs = mergeRefs(refs, symbols.Refs(s.lang, text, r[0], r[1]))
		}
	} else {
		refs = symbols.Refs(s.lang, text, 0, len(text))
	}
	found := s.resolve(refs, "", true)
	// resolve keeps the order of refs, which is the order of first use;
	// count the uses of each name to rank them.
	count := map[string]int{}
	for _, r := range refs {
		count[r.Name] += r.Count
	}
	slices.SortStableFunc(found, func(a, b ref) int { return cmp.Compare(count[b.def.Name], count[a.def.Name]) })
	return found
}

// mergeRefs adds b's names to a, counts summed.
func mergeRefs(a, b []symbols.Ref) []symbols.Ref {
	for _, r := range b {
		i := slices.IndexFunc(a, func(x symbols.Ref) bool { return x.Qual == r.Qual && x.Name == r.Name })
		if i >= 0 {
			a[i].Count += r.Count
		} else {
			a = append(a, r)
		}
	}
	return a
}

// resolve returns the declarations the names refer to, in the order of the
// names. evidence is the text around the names (a selector's declaring
// type must be named there to be chosen among several); strict drops a
// selector with more than one possible declaration and no evidence.
func (s *selector) resolve(refs []symbols.Ref, evidence string, strict bool) []ref {
	if s.lang == "go" {
		return s.resolveGo(refs, evidence, strict)
	}
	return s.resolveOther(refs)
}

// importedFiles returns the workspace files the active file imports
// (non-Go languages; Go packages enter through the declarations used).
func (s *selector) importedFiles() []*srcFile {
	if s.v == nil {
		return nil
	}
	var out []*srcFile
	for _, c := range related(s.v, s.rel, s.in.ActiveText, false) {
		if c.reason == ReasonImport {
			if sf := s.file(c.uri); sf != nil {
				out = append(out, sf)
			}
		}
	}
	return out
}

// sameDir returns the files of the active file's directory: for Go, the
// other files of its package (tests only for a test file), else files of
// its language family, tests last.
func (s *selector) sameDir() []*srcFile {
	if s.v == nil {
		return nil
	}
	if s.lang == "go" {
		return s.goScope(s.dir, s.active.Package, isTestFile(path.Base(s.rel))).files()
	}
	var out []*srcFile
	for _, c := range related(s.v, s.rel, s.in.ActiveText, true) {
		if sf := s.file(c.uri); sf != nil {
			out = append(out, sf)
		}
	}
	return out
}

// oneHop returns the types the declarations in refs mention.
func (s *selector) oneHop(refs []ref) []ref {
	var out []ref
	for _, r := range refs {
		if !s.load(r.src) {
			continue
		}
		d, ok := r.src.find(r.def)
		if !ok {
			continue
		}
		text, _ := snippet(r.src.text, d)
		names := symbols.Refs(r.src.lang, []byte(text), 0, len(text))
		var found []ref
		if r.src.lang == "go" && r.src.file != nil {
			sc := s.goScope(dirOf(r.src.rel), r.src.file.Package, false)
			found = s.resolveGoIn(names, sc, s.goImports(r.src.v, dirOf(r.src.rel), r.src.file.Imports), "", true)
		} else {
			found = s.resolveOther(names)
		}
		for _, t := range found {
			if t.def.Kind == symbols.Type || t.def.Kind == symbols.Member {
				out = append(out, t)
			}
		}
	}
	return out
}

// resolveOther resolves names in a language without packages: in the
// files the active file imports, then its directory, then (plain names
// only, when few files declare them) the whole folder's index.
func (s *selector) resolveOther(refs []symbols.Ref) []ref {
	if s.v == nil {
		return nil
	}
	pool := append(s.importedFiles(), s.sameDir()...)
	fam := symbols.Family(s.lang)
	var out []ref
	seen := map[refKey]bool{}
	for _, r := range refs {
		var found []ref
		for _, sf := range pool {
			if f := s.decls(sf); f != nil {
				for i := range f.Defs {
					if d := &f.Defs[i]; d.Name == r.Name && d.Kind != symbols.Member && d.Kind != symbols.Method {
						found = append(found, ref{sf, d})
					}
				}
			}
		}
		if len(found) == 0 && r.Qual == "" {
			var locs []symbols.Located
			for _, l := range s.v.Symbols().Lookup(r.Name) {
				if l.Path != s.rel && symbols.Family(workspace.LanguageOf(l.Path)) == fam {
					locs = append(locs, l)
				}
			}
			if len(locs) <= 3 {
				for _, l := range locs {
					sf := s.fileAt(s.v, l.Path)
					if f := s.decls(sf); f != nil {
						for i := range f.Defs {
							if d := &f.Defs[i]; d.Name == r.Name && d.Kind == l.Kind {
								found = append(found, ref{sf, d})
							}
						}
					}
				}
			}
		}
		for _, fr := range found {
			if k := fr.key(); !seen[k] && (!fr.src.isActive || s.excerpt) {
				seen[k] = true
				out = append(out, fr)
			}
		}
	}
	return out
}

// goScope is a Go package: the files of a directory with one package
// name, as the folder's table has them, the open ones (and the active one)
// read from their buffers instead.
type goScope struct {
	s     *selector
	pkg   string
	tests bool
	tb    *workspace.PackageTable
	over  map[string]*srcFile // open files of the directory, by folder-relative path
	list  []*srcFile          // files, made by files()
}

// goScope returns the package in the folder-relative dir of the active
// file's folder: the files named pkg ("" for the most common name but
// main), with test files when tests is set.
func (s *selector) goScope(dir, pkg string, tests bool) *goScope {
	key := dir + "\x00" + pkg
	if tests {
		key += "\x00t"
	}
	if sc, ok := s.scopes[key]; ok {
		return sc
	}
	sc := &goScope{s: s, tests: tests, tb: s.v.PackageTable(dir), over: map[string]*srcFile{}}
	s.scopes[key] = sc
	for _, rel := range sc.tb.Files {
		sf := s.fileAt(s.v, rel)
		if sf.open || sf.isActive {
			if f := s.decls(sf); f != nil {
				sc.over[rel] = sf
			}
		}
	}
	if pkg == "" {
		count := map[string]int{}
		for _, rel := range sc.tb.Files {
			if p := sc.pkgOf(rel); !strings.HasSuffix(p, "_test") && p != "main" && !strings.HasSuffix(rel, "_test.go") {
				count[p]++
			}
		}
		for p, n := range count {
			if n > count[pkg] || n == count[pkg] && p < pkg {
				pkg = p
			}
		}
	}
	sc.pkg = pkg
	return sc
}

// pkgOf returns the package name of a file of the scope's directory.
func (sc *goScope) pkgOf(rel string) string {
	if sf := sc.over[rel]; sf != nil {
		return sf.file.Package
	}
	return sc.tb.PkgOf[rel]
}

// accept reports whether a file of the directory belongs to the scope.
func (sc *goScope) accept(rel string) bool {
	if !sc.tests && strings.HasSuffix(rel, "_test.go") {
		return false
	}
	p := sc.pkgOf(rel)
	return p == sc.pkg || sc.tests && p == sc.pkg+"_test"
}

// files returns the scope's files.
func (sc *goScope) files() []*srcFile {
	if sc.list == nil {
		sc.list = []*srcFile{}
		for _, rel := range sc.tb.Files {
			if sc.accept(rel) {
				sf := sc.s.fileAt(sc.s.v, rel)
				sc.s.decls(sf)
				sc.list = append(sc.list, sf)
			}
		}
	}
	return sc.list
}

// Kinds of look-up in a scope.
const (
	lookNames   = iota // functions, types, vars, consts
	lookMethods        // methods
	lookMembers        // fields and interface methods
)

// find returns the scope's declarations of name, of one kind of look-up.
func (sc *goScope) find(kind int, name string) []ref {
	table := [...]map[string][]symbols.Located{sc.tb.Names, sc.tb.Methods, sc.tb.Members}[kind]
	var out []ref
	for _, l := range table[name] {
		if sc.over[l.Path] != nil || !sc.accept(l.Path) {
			continue
		}
		sf := sc.s.fileAt(sc.s.v, l.Path)
		if sc.s.decls(sf) == nil {
			continue
		}
		d := l.Def
		out = append(out, ref{sf, &d})
	}
	for _, rel := range sc.tb.Files {
		sf := sc.over[rel]
		if sf == nil || !sc.accept(rel) {
			continue
		}
		for i := range sf.file.Defs {
			d := &sf.file.Defs[i]
			if d.Name != name {
				continue
			}
			switch {
			case kind == lookMethods && d.Kind == symbols.Method,
				kind == lookMembers && d.Kind == symbols.Member,
				kind == lookNames && d.Kind != symbols.Method && d.Kind != symbols.Member:
				out = append(out, ref{sf, d})
			}
		}
	}
	return out
}

// goImports returns the module-local packages a file of dir imports, by
// the name the file knows each by ("." for dot imports, which may repeat).
func (s *selector) goImports(v Folder, dir string, imports []symbols.Import) map[string][]*goScope {
	out := map[string][]*goScope{}
	if v != s.v {
		return out
	}
	for _, imp := range imports {
		sub, ok := s.goImportDir(dir, imp.Path)
		if !ok || imp.Name == "_" {
			continue
		}
		sc := s.goScope(sub, "", false)
		name := imp.Name
		if name == "" {
			name = cmp.Or(sc.pkg, imp.ImportName())
		}
		out[name] = append(out[name], sc)
	}
	return out
}

// goImportDir maps an import path to a directory of the active file's
// folder, through the go.mod above dir (module "std" is Go's own tree).
func (s *selector) goImportDir(dir, imp string) (string, bool) {
	if !s.modDone {
		s.modDone = true
		s.modDir, s.modPath = goModule(s.v, dir)
	}
	var sub string
	switch {
	case s.modPath == "":
		return "", false
	case imp == s.modPath:
		sub = s.modDir
	case strings.HasPrefix(imp, s.modPath+"/"):
		sub = path.Join(s.modDir, strings.TrimPrefix(imp, s.modPath+"/"))
	case s.modPath == "std" && !strings.Contains(strings.Split(imp, "/")[0], "."):
		sub = path.Join(s.modDir, imp)
	default:
		return "", false
	}
	if sub == "." {
		sub = ""
	}
	t := s.v.Tree()
	return sub, t != nil && t.IsDir(sub)
}

// resolveGo resolves names used in the active file.
func (s *selector) resolveGo(refs []symbols.Ref, evidence string, strict bool) []ref {
	sc := s.goScope(s.dir, s.active.Package, isTestFile(path.Base(s.rel)))
	return s.resolveGoIn(refs, sc, s.goImports(s.v, s.dir, s.active.Imports), evidence, strict)
}

// resolveGoIn resolves names as Go does in a file of package sc with the
// given imports: a plain name in the package (or a dot import), pkg.Name in
// the imported package, x.Name (a field or method) among the package's
// methods and fields, kept when the declaring type is named in evidence,
// or when there are at most two and strict is not set.
func (s *selector) resolveGoIn(refs []symbols.Ref, sc *goScope, imps map[string][]*goScope, evidence string, strict bool) []ref {
	var words map[string]bool
	var out []ref
	seen := map[refKey]bool{}
	for _, r := range refs {
		var found []ref
		switch {
		case r.Qual == "":
			if imps[r.Name] != nil {
				continue // a package name
			}
			found = sc.find(lookNames, r.Name)
			if len(found) == 0 {
				for _, dot := range imps["."] {
					found = append(found, dot.find(lookNames, r.Name)...)
				}
			}
		case imps[r.Qual] != nil && r.Qual != ".":
			if !isExported(r.Name) {
				continue
			}
			for _, is := range imps[r.Qual] {
				found = append(found, is.find(lookNames, r.Name)...)
			}
		default:
			cands := append(sc.find(lookMethods, r.Name), sc.find(lookMembers, r.Name)...)
			if len(cands) == 0 {
				continue
			}
			if words == nil {
				words = map[string]bool{}
				for _, w := range symbols.Refs("go", []byte(evidence), 0, len(evidence)) {
					words[w.Name] = true
				}
			}
			// x.f.Name: the type of field f says whose Name it is.
			fieldTypes := s.fieldTypes(sc, r.Qual)
			for _, c := range cands {
				if words[c.def.Recv] || c.def.Recv == r.Qual || fieldTypes[c.def.Recv] {
					found = append(found, c)
				}
			}
			if len(found) == 0 && !strict && len(cands) <= 2 {
				found = cands
			}
		}
		for _, fr := range goVariants(found) {
			if k := fr.key(); !seen[k] && (!fr.src.isActive || s.excerpt) {
				seen[k] = true
				out = append(out, fr)
			}
		}
	}
	return out
}

// fieldTypes returns the base type names of the package's struct fields
// named name ("d.fast" → deflateFast when a struct declares fast
// *deflateFast), read from the declaring types' text.
func (s *selector) fieldTypes(sc *goScope, name string) map[string]bool {
	if name == "" || name == "." {
		return nil
	}
	var out map[string]bool
	for _, m := range sc.find(lookMembers, name) {
		if !s.load(m.src) {
			continue
		}
		d, ok := m.src.find(m.def)
		if !ok {
			continue
		}
		for line := range strings.Lines(m.src.text[d.Start:d.End]) {
			line, _, _ = strings.Cut(line, "//")
			line, _, _ = strings.Cut(line, "`")
			f := strings.Fields(line)
			if len(f) < 2 || strings.TrimSuffix(f[0], ",") != name {
				continue
			}
			// "name T", "name *T", "name, other T", "name []T" …
			t := strings.TrimLeft(f[len(f)-1], "*[]")
			if i := strings.LastIndexByte(t, '.'); i >= 0 {
				t = t[i+1:]
			}
			if i := strings.IndexByte(t, '['); i >= 0 {
				t = t[:i]
			}
			if t != "" {
				if out == nil {
					out = map[string]bool{}
				}
				out[t] = true
			}
		}
	}
	return out
}

// goVariants keeps, of declarations of one name in several files (build
// constraints: net_linux.go, net_windows.go…), those of files for this
// system or for none, at most two.
func goVariants(found []ref) []ref {
	if len(found) <= 1 {
		return found
	}
	var best []ref
	for _, r := range found {
		if goFileForHere(path.Base(r.src.rel)) {
			best = append(best, r)
		}
	}
	if len(best) == 0 {
		best = found
	}
	return best[:min(len(best), 2)]
}

// goFileForHere reports whether a Go file name has no GOOS or GOARCH
// suffix other than this system's.
func goFileForHere(name string) bool {
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".go"), "_test")
	parts := strings.Split(name, "_")
	for _, p := range parts[1:] {
		if knownOS[p] && p != runtime.GOOS || knownArch[p] && p != runtime.GOARCH {
			return false
		}
	}
	return true
}

var (
	knownOS = map[string]bool{"aix": true, "android": true, "darwin": true, "dragonfly": true, "freebsd": true,
		"hurd": true, "illumos": true, "ios": true, "js": true, "linux": true, "nacl": true, "netbsd": true,
		"openbsd": true, "plan9": true, "solaris": true, "wasip1": true, "windows": true, "zos": true}
	knownArch = map[string]bool{"386": true, "amd64": true, "arm": true, "arm64": true, "loong64": true,
		"mips": true, "mipsle": true, "mips64": true, "mips64le": true, "ppc64": true, "ppc64le": true,
		"riscv64": true, "s390x": true, "wasm": true}
)

func hasEntry(t interface {
	Lookup(string) (watch.Entry, bool)
}, rel string) bool {
	_, ok := t.Lookup(rel)
	return ok
}

func isExported(name string) bool {
	return name != "" && 'A' <= name[0] && name[0] <= 'Z'
}
