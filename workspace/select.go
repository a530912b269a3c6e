package workspace

import (
	"math"
	"path"
	"sort"
	"strings"
)

// CharsPerToken is the estimate of characters per model token used for
// budgets (code and English prose average about 3.2 for the Kimi tokenizer).
const CharsPerToken = 3.2

// EstimateTokens estimates the tokens of text.
func EstimateTokens(text string) int {
	return int(math.Ceil(float64(len(text)) / CharsPerToken))
}

// Reason says why a file entered the context.
type Reason string

// Reasons, in order of priority.
const (
	ReasonOpen    Reason = "open"     // open in the editor
	ReasonImport  Reason = "import"   // imported by the active file
	ReasonSameDir Reason = "same-dir" // in the active file's directory (Go: its package)
	ReasonRecent  Reason = "recent"   // recently viewed
)

// ContextFile is one file selected for a prompt, a plain value for the
// prompt builder.
type ContextFile struct {
	// Path is workspace-relative and slash-separated.
	Path     string
	URI      URI
	Language string
	Text     string
	Reason   Reason
}

// OpenBuffer is an open document as the selection sees it.
type OpenBuffer struct {
	URI  URI
	Text string
	// LastEdit orders the buffers by their last edit: larger is more
	// recent (a sequence number or a Unix time; only the order matters).
	LastEdit int64
}

// SelectInput is the editor state a selection is made from. The lsp layer
// fills it from one snapshot of the documents.
type SelectInput struct {
	// Active is the document the action runs on; it is never part of the
	// selection (the prompt builder lays it out separately).
	Active URI
	// ActiveText is its text (used to find its imports).
	ActiveText string
	// Open are the other open documents.
	Open []OpenBuffer
	// Recent are recently viewed documents, most recent first.
	Recent []URI
}

// overheadTokens is the estimated cost of a file's header in a prompt
// (path, language, fences) beyond its path.
const overheadTokens = 8

// maxSameDir bounds how many files of the active file's directory are
// considered.
const maxSameDir = 24

// Select picks the files that enter a prompt around the active document,
// within Options.MaxTokens: first the open buffers (most recently edited
// first), then the files the active one imports (Go within its module,
// TypeScript/JavaScript relative specifiers, Python modules), then the files
// of its directory (Go: its package, tests last), then recently viewed files,
// each only if switched on in the Options. Secret files are never selected
// (even open ones; the user is told once), nor binary files, files over the
// size cap, files outside the workspace, or ignored files that are not open; a file that does not fit the
// remaining budget is skipped and smaller ones after it may still enter.
//
// The result is deterministic and ordered for a stable prompt prefix: files
// from disk first, sorted by path, then open buffers, least recently edited
// first (so the buffer being worked on is last, next to the active one).
func (f *Folders) Select(in SelectInput) []ContextFile {
	opts := f.options()
	budget := opts.MaxTokens
	sec := f.secretSet()
	taken := map[URI]bool{in.Active: true}
	var disk, open []ContextFile
	var openEdit = map[URI]int64{}

	add := func(cf ContextFile) bool {
		if taken[cf.URI] {
			return false
		}
		cost := EstimateTokens(cf.Text) + EstimateTokens(cf.Path) + overheadTokens
		if cost > budget {
			return false
		}
		taken[cf.URI] = true
		budget -= cost
		if cf.Reason == ReasonOpen {
			open = append(open, cf)
		} else {
			disk = append(disk, cf)
		}
		return true
	}
	openText := map[URI]string{}
	for _, b := range in.Open {
		openText[b.URI] = b.Text
		openEdit[b.URI] = b.LastEdit
	}
	// fromDisk makes a candidate of a workspace file, preferring its open
	// buffer; ok is false for what may not be sent.
	fromDisk := func(uri URI, reason Reason) (ContextFile, bool) {
		if taken[uri] {
			return ContextFile{}, false
		}
		p, err := uri.Path()
		if err != nil {
			return ContextFile{}, false
		}
		if v, rel, ok := f.owner(p); !ok || v.Ignored(rel) {
			return ContextFile{}, false // ignored files enter prompts only as open buffers
		}
		if text, isOpen := openText[uri]; isOpen {
			return f.bufferCandidate(uri, text, opts, sec)
		}
		file, err := f.ReadFile(p)
		if err != nil {
			return ContextFile{}, false
		}
		if file.Open {
			reason = ReasonOpen
		}
		return ContextFile{Path: file.Path, URI: uri, Language: file.Language, Text: file.Text, Reason: reason}, true
	}

	if opts.IncludeOpen {
		bufs := append([]OpenBuffer(nil), in.Open...)
		sort.SliceStable(bufs, func(i, j int) bool {
			if bufs[i].LastEdit != bufs[j].LastEdit {
				return bufs[i].LastEdit > bufs[j].LastEdit
			}
			return bufs[i].URI < bufs[j].URI
		})
		for _, b := range bufs {
			if cf, ok := f.bufferCandidate(b.URI, b.Text, opts, sec); ok {
				add(cf)
			}
		}
	}
	if opts.IncludeRelated {
		for _, c := range f.related(in) {
			if cf, ok := fromDisk(c.uri, c.reason); ok {
				add(cf)
			}
		}
	}
	if opts.IncludeRecent {
		for _, u := range in.Recent {
			if cf, ok := fromDisk(u, ReasonRecent); ok {
				add(cf)
			}
		}
	}

	sort.Slice(disk, func(i, j int) bool { return disk[i].Path < disk[j].Path })
	sort.SliceStable(open, func(i, j int) bool {
		ei, ej := openEdit[open[i].URI], openEdit[open[j].URI]
		if ei != ej {
			return ei < ej
		}
		return open[i].URI < open[j].URI
	})
	return append(disk, open...)
}

// bufferCandidate checks an open buffer: inside the workspace, not secret,
// not binary, within the size cap.
func (f *Folders) bufferCandidate(uri URI, text string, opts Options, sec *Secrets) (ContextFile, bool) {
	p, err := uri.Path()
	if err != nil {
		return ContextFile{}, false // untitled: and other in-memory documents
	}
	disp, ok := f.RelPath(p)
	if !ok {
		return ContextFile{}, false
	}
	if sec.IsSecret(f.secretKey(p)) {
		sec.Refused(disp)
		return ContextFile{}, false
	}
	if real, _, err := f.Resolve(p); err != nil || sec.IsSecret(f.secretKey(real)) {
		return ContextFile{}, false
	}
	if int64(len(text)) > opts.MaxFileSize || looksBinaryString(text) {
		return ContextFile{}, false
	}
	return ContextFile{Path: disp, URI: uri, Language: LanguageOf(p), Text: text, Reason: ReasonOpen}, true
}

type candidate struct {
	uri    URI
	reason Reason
}

// related lists the files related to the active one, imports first (in
// import order), then its directory's files (by name, tests last).
func (f *Folders) related(in SelectInput) []candidate {
	p, err := in.Active.Path()
	if err != nil {
		return nil
	}
	v, rel, ok := f.owner(p)
	if !ok {
		return nil
	}
	dir := path.Dir(rel)
	if dir == "." {
		dir = ""
	}
	lang := LanguageOf(rel)
	exists := func(r string) bool { _, ok := v.Stat(r); return ok }
	var out []candidate
	addRel := func(r string, reason Reason) {
		out = append(out, candidate{uri: FileURI(v.abs(r)), reason: reason})
	}

	switch family(lang) {
	case "go":
		if modDir, modPath := f.goModule(v, dir); modPath != "" {
			for _, imp := range goImports(in.ActiveText) {
				var sub string
				switch {
				case imp == modPath:
					sub = modDir
				case strings.HasPrefix(imp, modPath+"/"):
					sub = path.Join(modDir, strings.TrimPrefix(imp, modPath+"/"))
				default:
					continue
				}
				for _, fi := range v.Dir(sub) {
					name := path.Base(fi.Path)
					if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
						addRel(joinRel(sub, name), ReasonImport)
					}
				}
			}
		}
	case "js":
		for _, spec := range jsImports(in.ActiveText) {
			for _, c := range jsCandidates(dir, spec) {
				if exists(c) {
					addRel(c, ReasonImport)
					break
				}
			}
		}
	case "python":
		for _, imp := range pyImports(in.ActiveText) {
			for _, c := range pyCandidates(dir, imp) {
				if exists(c) {
					addRel(c, ReasonImport)
				}
			}
		}
	}

	// The directory: same language family first, tests last, by name.
	type sib struct {
		rel  string
		rank int
	}
	var sibs []sib
	for _, fi := range v.Dir(dir) {
		name := path.Base(fi.Path)
		r := joinRel(dir, name)
		if r == rel {
			continue
		}
		l := LanguageOf(name)
		if l == "" {
			continue
		}
		rank := 0
		if family(l) != family(lang) {
			rank = 2
		} else if isTestFile(name) {
			rank = 1
		}
		if family(lang) == "go" && rank == 2 {
			continue // another package's business
		}
		sibs = append(sibs, sib{r, rank})
	}
	sort.SliceStable(sibs, func(i, j int) bool {
		if sibs[i].rank != sibs[j].rank {
			return sibs[i].rank < sibs[j].rank
		}
		return sibs[i].rel < sibs[j].rel
	})
	if len(sibs) > maxSameDir {
		sibs = sibs[:maxSameDir]
	}
	for _, s := range sibs {
		addRel(s.rel, ReasonSameDir)
	}
	return out
}

// goModule finds the go.mod governing dir (looking upward inside the
// folder) and returns its directory and module path.
func (f *Folders) goModule(v *View, dir string) (modDir, modPath string) {
	for d := dir; ; d = path.Dir(d) {
		if d == "." {
			d = ""
		}
		gm := joinRel(d, "go.mod")
		if _, ok := v.Stat(gm); ok {
			text, err := v.readDisk(gm)
			if err != nil {
				return "", ""
			}
			return d, goModulePath(text)
		}
		if d == "" {
			return "", ""
		}
	}
}

func joinRel(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

func isTestFile(name string) bool {
	base := strings.ToLower(name)
	return strings.HasSuffix(base, "_test.go") || strings.HasPrefix(base, "test_") ||
		strings.Contains(base, ".test.") || strings.Contains(base, ".spec.") || strings.HasSuffix(base, "_test.py")
}

func looksBinaryString(s string) bool {
	n := min(len(s), 8000)
	return strings.IndexByte(s[:n], 0) >= 0
}
