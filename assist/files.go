package assist

import (
	"fmt"
	"io/fs"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Files is the patch.Files a task reads through: open documents from the
// snapshots taken when the task started (so an edit is computed against the
// text the prompt showed), other files from the workspace's disk view, with
// the workspace's confinement and secret rules.
type Files struct {
	folders *workspace.Folders
	open    map[workspace.URI]*workspace.Snapshot
}

var (
	_ patch.Files  = (*Files)(nil)
	_ patch.Lister = (*Files)(nil)
	_ patch.Namer  = (*Files)(nil)
)

// NewFiles returns the files of a task. folders may be nil (no workspace:
// every path is refused); open are the open documents' snapshots.
func NewFiles(folders *workspace.Folders, open []*workspace.Snapshot) *Files {
	m := make(map[workspace.URI]*workspace.Snapshot, len(open))
	for _, s := range open {
		m[s.URI] = s
	}
	return &Files{folders: folders, open: m}
}

// Resolve confines path to the workspace folders (symlinks resolved).
func (f *Files) Resolve(path string) (string, error) {
	if f.folders == nil {
		return "", fmt.Errorf("%s: %w (no workspace folder is open)", path, patch.ErrOutside)
	}
	abs, _, err := f.folders.Resolve(path)
	if err != nil {
		return "", fmt.Errorf("%w: %w", patch.ErrOutside, err)
	}
	return abs, nil
}

// Paths implements patch.Lister: the workspace's files as the disk views
// list them (workspace-relative; none before a folder's first scan).
func (f *Files) Paths() []string {
	if f.folders == nil {
		return nil
	}
	var out []string
	for _, v := range f.folders.Views() {
		for _, fi := range v.Files() {
			out = append(out, fi.Path)
		}
	}
	return out
}

// Relative implements patch.Namer: the folders' absolute paths become
// workspace-relative ones, the home directory "~".
func (f *Files) Relative(text string) string {
	var roots []patch.Root
	if f.folders != nil {
		list := f.folders.List()
		for _, fo := range list {
			r := patch.Root{Paths: []string{fo.Path, fo.Real}}
			if len(list) > 1 {
				r.Prefix = fo.Name + "/"
			}
			roots = append(roots, r)
		}
	}
	return patch.RelativeText(text, roots)
}

// Read returns the snapshot's text for an open document, else the disk
// text. Secret files are refused even when open.
func (f *Files) Read(path string) (string, int32, error) {
	if f.folders != nil && f.folders.IsSecret(path) {
		return "", 0, fmt.Errorf("%s: %w", path, workspace.ErrSecret)
	}
	if s, ok := f.open[workspace.FileURI(path)]; ok {
		return s.Text(), s.Version, nil
	}
	if f.folders == nil {
		return "", 0, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	file, err := f.folders.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	return file.Text, patch.NoVersion, nil
}

// ContextRequest is what a prompt's context is chosen from: the active
// document and the selection, the editor's other open documents, and the
// budget.
type ContextRequest struct {
	// Active is the active document's snapshot.
	Active *workspace.Snapshot
	// SelStart and SelEnd delimit the selection in Active's text (bytes).
	SelStart, SelEnd int
	// Open are the open documents' snapshots (Active among them or not).
	Open []*workspace.Snapshot
	// Recent are recently viewed documents, most recent first.
	Recent []workspace.URI
	// MaxTokens is the budget (context.maxTokens).
	MaxTokens int
	// Estimator converts it into bytes (the prompt session's, so that its
	// correction by the provider's counts applies).
	Estimator cache.Estimator
}

// ContextDocs is what Context chose, in cache.Request's terms.
type ContextDocs struct {
	// Stable are the documents of the cached part besides the active one
	// (cache.Request.Documents): they depend on the active file, not on
	// the selection. With ExcerptActive, the active file's parts are among
	// them.
	Stable []cache.Document
	// Volatile are those only this selection needs (cache.Request.Volatile).
	Volatile []cache.Document
	// ExcerptActive is set when the active file is too large to show
	// whole (cache.Request.ExcerptActive).
	ExcerptActive bool
}

// Context chooses the documents a prompt shows besides the active one, by
// relevance (workspace.Folders.Select). folders may be nil (no workspace:
// nothing).
func Context(folders *workspace.Folders, r ContextRequest) ContextDocs {
	var out ContextDocs
	if folders == nil || r.Active == nil || r.MaxTokens <= 0 {
		return out
	}
	text := r.Active.Text()
	in := workspace.SelectInput{
		Active: r.Active.URI, ActiveText: text, SelStart: r.SelStart, SelEnd: r.SelEnd,
		Recent: r.Recent, Budget: r.Estimator.Bytes(r.MaxTokens),
	}
	version := map[workspace.URI]int32{}
	for _, o := range r.Open {
		if o.URI == r.Active.URI {
			continue
		}
		in.Open = append(in.Open, workspace.OpenBuffer{URI: o.URI, Text: o.Text(), LastEdit: int64(o.Seq)})
		version[o.URI] = o.Version
	}
	for _, f := range folders.Select(in) {
		d := cache.Document{Path: f.Path, Part: f.Part, Line: f.Line, Language: f.Language, Text: f.Text,
			Version: version[f.URI], LastEdited: f.LastEdit}
		switch {
		case f.Volatile:
			out.Volatile = append(out.Volatile, d)
		case f.URI == r.Active.URI:
			// A part of the active file: edited with it, laid out last.
			d.Version, d.LastEdited = r.Active.Version, int64(r.Active.Seq)
			out.ExcerptActive = true
			out.Stable = append(out.Stable, d)
		default:
			out.Stable = append(out.Stable, d)
		}
	}
	return out
}

// SnippetRequest is what Snippets works from: a buffer and a cursor.
type SnippetRequest struct {
	// Document is the buffer's snapshot, Cursor a byte offset in it.
	Document *workspace.Snapshot
	Cursor   int
	// ShownStart and ShownEnd delimit the part of the document the
	// caller's prompt shows (both 0: all of it); the document's own
	// declarations outside it may be returned.
	ShownStart, ShownEnd int
	// Open are the open documents' snapshots.
	Open []*workspace.Snapshot
	// MaxTokens bounds the snippets (block headers included), converted to
	// bytes by Estimator (the zero value: the uncorrected estimate).
	MaxTokens int
	Estimator Estimator
}

// Snippets returns the declarations the code around the cursor uses, most
// relevant first, as cache documents (Path, Part "func Name"…, Line,
// Language, Text; Version and LastEdited of an open buffer), for a small
// prompt such as a completion's: see workspace.Folders.Snippets. folders
// may be nil (nothing).
func Snippets(folders *workspace.Folders, r SnippetRequest) []cache.Document {
	if folders == nil || r.Document == nil || r.MaxTokens <= 0 {
		return nil
	}
	text := r.Document.Text()
	in := workspace.SnippetInput{Active: r.Document.URI, Text: text, Cursor: r.Cursor,
		ShownStart: r.ShownStart, ShownEnd: r.ShownEnd, Budget: r.Estimator.Bytes(r.MaxTokens)}
	if in.ShownStart == 0 && in.ShownEnd == 0 {
		in.ShownEnd = len(text)
	}
	version := map[workspace.URI]int32{}
	for _, o := range r.Open {
		if o.URI != r.Document.URI {
			in.Open = append(in.Open, workspace.OpenBuffer{URI: o.URI, Text: o.Text(), LastEdit: int64(o.Seq)})
			version[o.URI] = o.Version
		}
	}
	var out []cache.Document
	for _, f := range folders.Snippets(in) {
		out = append(out, cache.Document{Path: f.Path, Part: f.Part, Line: f.Line, Language: f.Language, Text: f.Text,
			Version: version[f.URI], LastEdited: f.LastEdit})
	}
	return out
}

// ContextSlack is how much the prompt's stable part may hold besides the
// active file, as a multiple of context.maxTokens: what a request no longer
// asks for stays there, read from the provider's cache, until this is
// reached (the Select budget keeps what is asked for within
// 1-VolatileShare of it). Chosen with bench/contextbench: more slack buys
// cache hits with tokens read at a tenth of the price, at a higher cost
// per action past 1.5.
const ContextSlack = 1.5

// ContextBudget returns cache.Request.ContextBudget for a context budget of
// maxTokens.
func ContextBudget(maxTokens int) int { return int(float64(maxTokens) * ContextSlack) }

// WorkspaceOptions maps the configuration's context section to the
// workspace's options (kinds of context, excludes, size cap, secret
// globs; the budget goes with each request, see Context).
func WorkspaceOptions(cfg config.Config) workspace.Options {
	o := workspace.DefaultOptions()
	o.IncludeOpen = cfg.Context.Include.OpenBuffers
	o.IncludeRelated = cfg.Context.Include.Related
	o.IncludeRecent = cfg.Context.Include.Recent
	o.Exclude = cfg.Context.Exclude
	o.MaxFileSize = cfg.Context.MaxFileSize
	o.SecretGlobs = cfg.Context.Secrets
	return o
}
