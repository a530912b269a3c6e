package assist

import (
	"fmt"
	"io/fs"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
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
