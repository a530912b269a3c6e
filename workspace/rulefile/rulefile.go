// Package rulefile is the one way kimi-lsp reads a file it takes
// configuration or rules from: the workspace's .kimi-lsp.toml, every
// .gitignore, .git/info/exclude and the user's config.toml.
//
// Such a file may come from a cloned repository, and git stores symbolic
// links, FIFOs cannot be committed but can be made by anyone with a shell, so
// Read trusts nothing about it:
//
//   - it is opened with O_NONBLOCK, so opening a FIFO returns at once instead
//     of waiting for a writer, and then checked with fstat on the open file
//     (not a stat of the name beforehand, which a swap could outrun): only a
//     regular file is read. A FIFO, socket, device (a link to /dev/stdin, the
//     server's own LSP input) or directory is ErrNotRegular;
//   - at most limit bytes are read (callers state their cap: 1 MiB for a
//     configuration file, 4 MiB for an ignore file); a longer file is
//     ErrTooLarge, not a prefix;
//   - symbolic links follow the caller's Links rule: NoLinks (a link at the
//     file's own name is refused, git's rule for .gitignore), Inside (links
//     are followed while they stay inside dir, as the kernel's openat walk of
//     an os.Root checks; a link pointing out is refused: the rule for files
//     of a workspace folder) or ToRegular (a link anywhere is followed to a
//     regular file: the rule for the user's own config file, which dotfile
//     managers keep as a link into their repository).
//
// A missing file is an error satisfying errors.Is(err, fs.ErrNotExist), which
// callers take as "no rules"; every other error means the file was skipped,
// and callers log it once. Read never blocks on anything but the disk.
package rulefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Errors of Read, each wrapped with the path.
var (
	ErrNotRegular = errors.New("not a regular file")
	ErrTooLarge   = errors.New("too large")
	ErrLink       = errors.New("is a symbolic link, which is not followed")
	ErrOutside    = errors.New("is a symbolic link pointing out of its folder")
)

// Links is how Read treats symbolic links.
type Links int

const (
	// Inside follows links (at the name and in its directories) while they
	// stay inside dir.
	Inside Links = iota
	// NoLinks refuses a link at the file's own name (directories below dir
	// may still be links inside dir). git does not follow a .gitignore that
	// is a link.
	NoLinks
	// ToRegular follows links anywhere, to a regular file.
	ToRegular
)

// Read returns the contents of the file name (slash- or OS-separated,
// relative to dir) under the rules of the package doc.
func Read(dir, name string, limit int64, links Links) ([]byte, error) {
	path := filepath.Join(dir, filepath.FromSlash(name))
	f, fi, err := Open(dir, name, links)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s: %w (%d bytes, the cap is %d)", path, ErrTooLarge, fi.Size(), limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s: %w (grew past the cap of %d bytes)", path, ErrTooLarge, limit)
	}
	return data, nil
}

// Open opens the file name (slash- or OS-separated, relative to dir) under
// the rules of the package doc but the size cap: without blocking, through
// links as links says, and only if the open file is a regular file (its
// fstat is returned). Read uses it; a caller that streams a file of any
// size (the review of changes hashes every tracked file) opens it here and
// bounds its own reading.
func Open(dir, name string, links Links) (*os.File, fs.FileInfo, error) {
	path := filepath.Join(dir, filepath.FromSlash(name))
	f, err := open(dir, name, path, links)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, Kind(fi.Mode()))
	}
	return f, fi, nil
}

const flags = os.O_RDONLY | syscall.O_NONBLOCK

func open(dir, name, path string, links Links) (*os.File, error) {
	if links == ToRegular {
		f, err := os.OpenFile(path, flags, 0)
		if err != nil {
			return nil, err
		}
		return f, nil
	}
	// Most directories have no .gitignore: a missing name costs one lstat,
	// not the root walk below.
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	rel := filepath.FromSlash(name)
	var before fs.FileInfo
	if links == NoLinks {
		before, err = root.Lstat(rel)
		if err != nil {
			return nil, rootErr(path, err)
		}
		if before.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s: %w", path, ErrLink)
		}
	}
	f, err := root.OpenFile(rel, flags, 0)
	if err != nil {
		return nil, rootErr(path, err)
	}
	if before != nil {
		// The name was swapped for a link between the Lstat and the open.
		if fi, err := f.Stat(); err != nil || !os.SameFile(before, fi) {
			f.Close()
			return nil, fmt.Errorf("%s: %w", path, ErrLink)
		}
	}
	return f, nil
}

// rootErr names an escape from the root for what it is.
func rootErr(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if pe := (*os.PathError)(nil); errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent" {
		return fmt.Errorf("%s: %w", path, ErrOutside)
	}
	return fmt.Errorf("%s: %w", path, err)
}

// Kind names a file's type for messages ("a FIFO", "a directory"); the
// writer's refusals use it too.
func Kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "a special file"
}
