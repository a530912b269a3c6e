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

var _ patch.Files = (*Files)(nil)

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

// ContextDocuments selects the documents a prompt shows besides the active
// one: open buffers, related files and recently viewed files, as
// workspace.Folders.Select orders them. folders may be nil.
func ContextDocuments(folders *workspace.Folders, active *workspace.Snapshot, open []*workspace.Snapshot, recent []workspace.URI) []cache.Document {
	if folders == nil {
		return nil
	}
	in := workspace.SelectInput{Active: active.URI, ActiveText: active.Text(), Recent: recent}
	seq := map[workspace.URI]int64{}
	version := map[workspace.URI]int32{}
	for _, o := range open {
		if o.URI == active.URI {
			continue
		}
		in.Open = append(in.Open, workspace.OpenBuffer{URI: o.URI, Text: o.Text(), LastEdit: int64(o.Seq)})
		seq[o.URI] = int64(o.Seq)
		version[o.URI] = o.Version
	}
	var out []cache.Document
	for _, f := range folders.Select(in) {
		out = append(out, cache.Document{Path: f.Path, Language: f.Language, Text: f.Text, Version: version[f.URI], LastEdited: seq[f.URI]})
	}
	return out
}

// WorkspaceOptions maps the configuration's context section to the
// workspace's options (budget, kinds of context, excludes, size cap,
// secret globs).
func WorkspaceOptions(cfg config.Config) workspace.Options {
	o := workspace.DefaultOptions()
	o.MaxTokens = cfg.Context.MaxTokens
	o.IncludeOpen = cfg.Context.Include.OpenBuffers
	o.IncludeRelated = cfg.Context.Include.Related
	o.IncludeRecent = cfg.Context.Include.Recent
	o.Exclude = cfg.Context.Exclude
	o.MaxFileSize = cfg.Context.MaxFileSize
	o.SecretGlobs = cfg.Context.Secrets
	return o
}
