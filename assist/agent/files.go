package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// editorFiles is the patch.Files of a turn whose editor offers
// fs/read_text_file: paths are confined and secret files refused as for
// the disk (assist.Files), then read through the editor, so that unsaved
// buffers are what the model sees and edits.
type editorFiles struct {
	*assist.Files
	folders *workspace.Folders
	read    func(path string) (string, error)
}

var _ patch.Files = editorFiles{}

// Read reads path (resolved) through the editor; a file the disk does not
// have is missing (a file about to be created).
func (f editorFiles) Read(path string) (string, int32, error) {
	if f.folders.IsSecret(path) {
		return "", 0, fmt.Errorf("%s: %w", path, workspace.ErrSecret)
	}
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return "", 0, fmt.Errorf("%s: %w", path, fs.ErrNotExist)
	}
	text, err := f.read(path)
	if err != nil {
		return "", 0, fmt.Errorf("reading %s through the editor: %w", path, err)
	}
	return text, patch.NoVersion, nil
}

// files is the turn's patch.Files: the editor's when it reads files,
// else the disk's.
func (s *Session) files(ctx context.Context) patch.Files {
	base := assist.NewFiles(s.opts.Folders, nil)
	if s.opts.FS == nil {
		return base
	}
	return editorFiles{Files: base, folders: s.opts.Folders, read: func(path string) (string, error) {
		return s.opts.FS.ReadTextFile(ctx, path)
	}}
}

// write lands changes whole or not at all. Through the editor
// (fs/write_text_file) when it offers it and the edit only modifies files
// that are not empty before or after (ACP has no delete, and its SDKs
// refuse an empty write): each file is read again first, and if one
// changed since the model read it nothing is written; a write that fails
// puts back the files written before it. Otherwise through the confined
// writer (assist.WriteChanges: staged, rebased over changes on disk,
// rolled back on a failure).
func (s *Session) write(ctx context.Context, changes []patch.FileChange) error {
	if s.opts.FS == nil || !onlyTexts(changes) {
		_, err := assist.WriteChanges(ctx, s.opts.Root, changes)
		return err
	}
	for _, c := range changes {
		now, err := s.opts.FS.ReadTextFile(ctx, c.Path)
		if err != nil {
			return fmt.Errorf("reading %s again: %w (nothing was written)", c.Path, err)
		}
		if now != c.Before {
			return fmt.Errorf("%s changed in the editor while the model worked (nothing was written)", c.Path)
		}
	}
	for i, c := range changes {
		if err := s.opts.FS.WriteTextFile(ctx, c.Path, c.After); err != nil {
			s.undo(changes[:i])
			return fmt.Errorf("writing %s: %w (nothing was written)", c.Path, err)
		}
	}
	return nil
}

// undo puts back the files of changes, written through the editor before
// a later write failed.
func (s *Session) undo(changes []patch.FileChange) {
	ctx := context.Background() // the turn may be over: the files must be put back
	for _, c := range changes {
		if err := s.opts.FS.WriteTextFile(ctx, c.Path, c.Before); err != nil {
			s.log.Error("a file written by a failed edit could not be put back", "file", c.Path, "error", err)
		}
	}
}

// onlyTexts reports whether changes only modify files, none empty before
// or after.
func onlyTexts(changes []patch.FileChange) bool {
	for _, c := range changes {
		if c.Kind != patch.ModifyFile || c.Before == "" || c.After == "" {
			return false
		}
	}
	return true
}
