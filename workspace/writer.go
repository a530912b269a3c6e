package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/workspace/rulefile"
)

// Errors of the Writer. Each is wrapped with the path.
var (
	// ErrNotRegular: the file exists and is not a regular file (a
	// directory, a symbolic link, a FIFO, a socket or a device). The
	// Writer never reads, writes or replaces such a file.
	ErrNotRegular = errors.New("not a regular file")
	// ErrChangedOnDisk: the file changed on disk after it was read (or
	// appeared, for a file to create); nothing was written.
	ErrChangedOnDisk = errors.New("changed on disk")
)

// maxWriterRead bounds Writer.ReadFile: larger files are refused.
const maxWriterRead = 256 << 20

// Writer is the program's one way to write a file. It writes below one
// directory, its root, and nowhere else:
//
//   - Every access goes through an os.Root opened on the root, so a path
//     that leaves it ("..", a symbolic link pointing out, a directory
//     swapped for such a link mid-way) is refused by the kernel's openat
//     walk, not by a string check alone. Paths inside a .git directory are
//     refused too.
//   - A target is replaced only if it is a regular file (checked with
//     lstat, never through a link); a FIFO, device, socket, directory or
//     symbolic link at the target is refused (ErrNotRegular) and never
//     opened, so it cannot hang the program or redirect the write.
//   - New contents go to a temporary file created exclusively
//     (O_CREATE|O_EXCL, which never follows a link) with a random name in
//     the target's directory, synced, then renamed over the target: a
//     reader sees the old or the new file, never half of one.
//
// Several files are changed all or nothing with a Tx (see Begin). A Writer
// is safe for concurrent use; the files it writes are not locked against
// other processes (see Tx.Commit for the window that remains).
type Writer struct {
	dir, real string // the root as given (cleaned) and with links resolved
	root      *os.Root
	filePerm  fs.FileMode
	dirPerm   fs.FileMode
}

// NewWriter opens a Writer on the existing directory dir. perm is the mode
// of the files it creates (0o644 in a workspace, 0o600 in the user's cache
// directory); directories it creates get perm with the execute bit added
// wherever the read bit is set (0o755, 0o700). The umask applies to both.
func NewWriter(dir string, perm fs.FileMode) (*Writer, error) {
	dir = filepath.Clean(dir)
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("open writer: %w", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("open writer: %w", err)
	}
	perm &= 0o777
	return &Writer{dir: dir, real: real, root: root, filePerm: perm, dirPerm: perm | (perm&0o444)>>2}, nil
}

// Close releases the root directory.
func (w *Writer) Close() error { return w.root.Close() }

// Dir returns the root directory with symbolic links resolved.
func (w *Writer) Dir() string { return w.real }

// rel maps p — an absolute path below the root (as given or resolved), or a
// path relative to it — to the root-relative, OS-separated path the os.Root
// methods take.
func (w *Writer) rel(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("write %q: NUL in path", p)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(w.real, p)
	}
	p = filepath.Clean(p)
	r, ok := within(w.real, p)
	if !ok {
		r, ok = within(w.dir, p)
	}
	if !ok || r == "" {
		return "", fmt.Errorf("%s is not below %s: %w", p, w.real, ErrOutsideWorkspace)
	}
	if hasGitDir(r) {
		return "", fmt.Errorf("%s is inside a .git directory: %w", p, ErrOutsideWorkspace)
	}
	// The os.Root refuses a link that leads out whenever it is met; this
	// early look only gives the error a clear cause.
	if real, err := resolveLinks(filepath.Join(w.real, filepath.FromSlash(r))); err == nil {
		rr, ok := within(w.real, real)
		if !ok {
			return "", fmt.Errorf("%s resolves through a symbolic link to %s: %w", p, real, ErrOutsideWorkspace)
		}
		if hasGitDir(rr) {
			return "", fmt.Errorf("%s resolves into a .git directory: %w", p, ErrOutsideWorkspace)
		}
	}
	return filepath.FromSlash(r), nil
}

// Stamp identifies the state of a file as ReadFile saw it: the same file
// (device and inode), size, modification time and mode. Tx.Replace and
// Tx.Remove refuse to act on a file whose stamp changed.
type Stamp struct{ info fs.FileInfo }

// matches reports whether fi is the file of s, unchanged.
func (s Stamp) matches(fi fs.FileInfo) bool {
	return s.info != nil && fi != nil && os.SameFile(s.info, fi) && s.info.Size() == fi.Size() &&
		s.info.ModTime().Equal(fi.ModTime()) && s.info.Mode() == fi.Mode()
}

// lstat returns the lstat of rel, refusing anything but a regular file.
func (w *Writer) lstat(rel string) (fs.FileInfo, error) {
	fi, err := w.root.Lstat(rel)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s (%s): %w", rel, FileKind(fi.Mode()), ErrNotRegular)
	}
	return fi, nil
}

// ReadFile returns the contents of the regular file p (see Writer for the
// paths taken) and its Stamp. A missing file is an error wrapping
// fs.ErrNotExist; a symbolic link, FIFO or other special file is refused
// with ErrNotRegular without being opened for long: the open does not wait
// for a FIFO's writer, and what was opened is checked to be the file that
// was lstat'ed.
func (w *Writer) ReadFile(p string) ([]byte, Stamp, error) {
	rel, err := w.rel(p)
	if err != nil {
		return nil, Stamp{}, err
	}
	return w.read(rel)
}

func (w *Writer) read(rel string) ([]byte, Stamp, error) {
	fi, err := w.lstat(rel)
	if err != nil {
		return nil, Stamp{}, err
	}
	f, err := w.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, Stamp{}, err
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil {
		return nil, Stamp{}, err
	}
	if !got.Mode().IsRegular() || !os.SameFile(fi, got) {
		return nil, Stamp{}, fmt.Errorf("%s was replaced while being opened: %w", rel, ErrChangedOnDisk)
	}
	if got.Size() > maxWriterRead {
		return nil, Stamp{}, fmt.Errorf("%s is larger than %d bytes", rel, maxWriterRead)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxWriterRead+1))
	if err != nil {
		return nil, Stamp{}, err
	}
	return data, Stamp{got}, nil
}

// WriteFile replaces the regular file p with data, or creates it (and its
// missing parent directories) with the Writer's mode, atomically: through
// an exclusive temporary file and a rename. An existing file keeps its
// permission bits.
func (w *Writer) WriteFile(p string, data []byte) error {
	tx := w.Begin()
	if err := tx.Put(p, data); err != nil {
		tx.Abort()
		return err
	}
	return tx.Commit()
}

// Remove removes the regular file p; a missing file is no error.
func (w *Writer) Remove(p string) error {
	rel, err := w.rel(p)
	if err != nil {
		return err
	}
	if _, err := w.lstat(rel); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	if err := w.root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// RemoveDir removes the empty directory p (never a link, never a
// directory with anything left in it); a missing one is no error.
func (w *Writer) RemoveDir(p string) error {
	rel, err := w.rel(p)
	if err != nil {
		return err
	}
	fi, err := w.root.Lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s (%s): not a directory", rel, FileKind(fi.Mode()))
	}
	return w.root.Remove(rel)
}

// List returns the entries of the directory p (absolute below the root,
// relative to it, or "" for the root itself) with their lstat information,
// in directory order.
func (w *Writer) List(p string) ([]fs.FileInfo, error) {
	rel := "."
	if p != "" && filepath.Clean(p) != w.real && filepath.Clean(p) != w.dir {
		var err error
		if rel, err = w.rel(p); err != nil {
			return nil, err
		}
	}
	d, err := w.root.Open(rel)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdir(-1)
}

// opKind is what a Tx does to one file.
type opKind uint8

const (
	opPut     opKind = iota // create or replace, whatever regular file is there
	opReplace               // replace the file of a Stamp
	opCreate                // create a file that must not exist
	opRemove                // remove the file of a Stamp
)

// txOp is one staged change.
type txOp struct {
	kind   opKind
	rel    string
	tmp    string // staged contents (not for opRemove)
	stamp  Stamp
	backup string // hard link to (or copy of) the old file, during Commit
	done   bool   // applied by Commit; undone by a rollback
}

// Tx changes several files below a Writer's root all or nothing: Replace,
// Create, Remove and Put stage each change (new contents are written and
// synced to temporary files at once, so a full disk or a read-only
// directory fails here, before any file changed); Commit applies them;
// Abort drops them. A Tx is not safe for concurrent use.
type Tx struct {
	w       *Writer
	ops     []*txOp
	dirs    []string // directories created while staging, parents first
	touched map[string]bool
	closed  bool

	// beforeApply, if set (tests), runs before the i-th change is applied
	// and can fail it.
	beforeApply func(i int) error
}

// Begin starts a transaction.
func (w *Writer) Begin() *Tx { return &Tx{w: w, touched: map[string]bool{}} }

func (tx *Tx) add(kind opKind, p string, data []byte, stamp Stamp) error {
	if tx.closed {
		return errors.New("write: the transaction is already committed or aborted")
	}
	rel, err := tx.w.rel(p)
	if err != nil {
		return err
	}
	if tx.touched[rel] {
		return fmt.Errorf("write %s: the file is changed twice in one transaction", rel)
	}
	op := &txOp{kind: kind, rel: rel, stamp: stamp}
	if kind != opRemove {
		perm, old := tx.w.filePerm, fs.FileInfo(nil)
		if stamp.info != nil {
			perm, old = stamp.info.Mode()&keptMode, stamp.info
		} else if fi, err := tx.w.root.Lstat(rel); kind == opPut && err == nil && fi.Mode().IsRegular() {
			perm, old = fi.Mode()&keptMode, fi // Put over an existing file keeps its mode
		}
		if err := tx.mkdirs(filepath.Dir(rel)); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
		if op.tmp, err = tx.w.stage(rel, data, perm, old); err != nil {
			return fmt.Errorf("write %s: %w", rel, err)
		}
	}
	tx.touched[rel] = true
	tx.ops = append(tx.ops, op)
	return nil
}

// Replace stages new contents for the regular file p, which must still be
// the file of stamp (from ReadFile) when Commit runs.
func (tx *Tx) Replace(p string, stamp Stamp, data []byte) error {
	if stamp.info == nil {
		return fmt.Errorf("write %s: no stamp (read the file with ReadFile first)", p)
	}
	return tx.add(opReplace, p, data, stamp)
}

// Create stages a new file p, which must not exist when Commit runs.
// Missing parent directories are created now (and removed again if the
// transaction does not commit).
func (tx *Tx) Create(p string, data []byte) error { return tx.add(opCreate, p, data, Stamp{}) }

// Remove stages the removal of the regular file p, which must still be the
// file of stamp when Commit runs.
func (tx *Tx) Remove(p string, stamp Stamp) error {
	if stamp.info == nil {
		return fmt.Errorf("remove %s: no stamp (read the file with ReadFile first)", p)
	}
	return tx.add(opRemove, p, nil, stamp)
}

// Put stages data as the contents of p, creating it or replacing whatever
// regular file is there when Commit runs (for files only this program
// writes, such as its caches).
func (tx *Tx) Put(p string, data []byte) error { return tx.add(opPut, p, data, Stamp{}) }

// mkdirs creates the missing directories of rel, one component at a time
// through the root, and remembers them for a rollback.
func (tx *Tx) mkdirs(rel string) error {
	if rel == "." || rel == "" {
		return nil
	}
	parts := strings.Split(rel, string(filepath.Separator))
	for i := range parts {
		d := filepath.Join(parts[:i+1]...)
		err := tx.w.root.Mkdir(d, tx.w.dirPerm)
		switch {
		case err == nil:
			tx.dirs = append(tx.dirs, d)
		case errors.Is(err, fs.ErrExist):
			fi, err := tx.w.root.Stat(d)
			if err != nil {
				return err
			}
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", d)
			}
		default:
			return err
		}
	}
	return nil
}

// keptMode are the mode bits a replaced file keeps: its permissions and the
// setuid, setgid and sticky bits.
const keptMode = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// stage writes data to a new temporary file beside rel and returns its
// root-relative name. When old is the file it replaces, the new file gets
// old's owner and group where the process may set them (see keepOwner) and
// old's mode bits (perm): setuid and setgid only while the owner,
// respectively the group, is old's — a setuid file never becomes setuid to
// the user who edited it.
func (w *Writer) stage(rel string, data []byte, perm fs.FileMode, old fs.FileInfo) (string, error) {
	f, tmp, err := w.createTemp(rel, "tmp", perm.Perm())
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		f.Close()
		w.root.Remove(tmp)
		return "", err
	}
	if old != nil {
		// The umask applied at creation; a replaced file keeps its bits.
		// Chown first: it clears setuid and setgid.
		sameUser, sameGroup := keepOwner(f, old)
		if !sameUser {
			perm &^= fs.ModeSetuid
		}
		if !sameGroup {
			perm &^= fs.ModeSetgid
		}
		if err := f.Chmod(perm); err != nil {
			return fail(err)
		}
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		w.root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// createTemp creates a file exclusively, with a random name beside rel
// (see exclusiveName). O_EXCL never follows a link and never opens an
// existing file (a FIFO planted there included).
func (w *Writer) createTemp(rel, kind string, perm fs.FileMode) (*os.File, string, error) {
	var f *os.File
	name, err := w.exclusiveName(rel, kind, func(name string) (err error) {
		f, err = w.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		return err
	})
	return f, name, err
}

// exclusiveName calls try with random names beside rel,
// ".NAME.kimi-KIND-RANDOM", until one is free (try does not fail with
// fs.ErrExist), and returns it.
func (w *Writer) exclusiveName(rel, kind string, try func(name string) error) (string, error) {
	dir, base := filepath.Split(rel)
	if len(base) > 64 {
		base = base[:64]
		for !utf8.ValidString(base) {
			base = base[:len(base)-1]
		}
	}
	var err error
	for range 8 {
		var rnd [6]byte
		if _, err := rand.Read(rnd[:]); err != nil {
			return "", err
		}
		name := filepath.Join(dir, "."+base+".kimi-"+kind+"-"+hex.EncodeToString(rnd[:]))
		if err = try(name); err == nil {
			return name, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	return "", fmt.Errorf("creating a file beside %s: %w", rel, err)
}

// Commit applies the staged changes, all or nothing:
//
//  1. Check: every file to replace or remove is still the file that was
//     read (same inode, size, modification time), every file to create is
//     still absent, every target is a regular file. Otherwise nothing is
//     changed and the error wraps ErrChangedOnDisk (or ErrNotRegular).
//  2. Keep: a hard link to each file about to be replaced or removed (a
//     copy where the file system has no hard links) is made beside it.
//  3. Apply: one rename (or unlink) per file, in a tight loop. If one
//     fails, the files already changed are put back from step 2, in
//     reverse order, and the error is returned.
//  4. Clean up the kept links.
//
// The window that remains: a change another process makes to a file
// between its check and its rename (microseconds) is lost, as with any
// rename-based save; and if this process is killed during step 3, the
// files renamed so far have their new contents and the others their old
// ones — the old contents of every file are then still on disk beside it
// as ".NAME.kimi-old-RANDOM", and the new contents not yet applied as
// ".NAME.kimi-tmp-RANDOM".
func (tx *Tx) Commit() error {
	if tx.closed {
		return errors.New("write: the transaction is already committed or aborted")
	}
	tx.closed = true
	w := tx.w
	// 1. Check.
	for _, op := range tx.ops {
		if err := w.check(op); err != nil {
			tx.cleanup()
			return fmt.Errorf("write: %w (nothing was written)", err)
		}
	}
	// 2. Keep the old files.
	for _, op := range tx.ops {
		if op.kind == opCreate {
			continue
		}
		if op.kind == opPut {
			if _, err := w.root.Lstat(op.rel); errors.Is(err, fs.ErrNotExist) {
				continue
			}
		}
		b, err := w.keep(op.rel)
		if err != nil {
			tx.cleanup()
			return fmt.Errorf("write %s: keeping the old file: %w (nothing was written)", op.rel, err)
		}
		op.backup = b
	}
	// 3. Apply.
	for i, op := range tx.ops {
		err := error(nil)
		if tx.beforeApply != nil {
			err = tx.beforeApply(i)
		}
		if err == nil {
			err = w.apply(op)
		}
		if err != nil {
			rerr := tx.rollback()
			tx.cleanup()
			if rerr != nil {
				return fmt.Errorf("write %s: %w; rolling back failed too: %v (the old files are kept beside them as .NAME.kimi-old-*)", op.rel, err, rerr)
			}
			return fmt.Errorf("write %s: %w (nothing was written: the files changed so far were put back)", op.rel, err)
		}
		op.done = true
	}
	// 4. Clean up.
	for _, op := range tx.ops {
		if op.backup != "" {
			w.root.Remove(op.backup)
		}
	}
	return nil
}

// check verifies that op can be applied to the file as it is now.
func (w *Writer) check(op *txOp) error {
	fi, err := w.root.Lstat(op.rel)
	switch op.kind {
	case opCreate:
		if err == nil {
			return fmt.Errorf("%s exists, it was to be created: %w", op.rel, ErrChangedOnDisk)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	case opPut:
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s is gone: %w", op.rel, ErrChangedOnDisk)
		}
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s (%s): %w", op.rel, FileKind(fi.Mode()), ErrNotRegular)
	}
	if op.kind != opPut && !op.stamp.matches(fi) {
		return fmt.Errorf("%s was modified since it was read: %w", op.rel, ErrChangedOnDisk)
	}
	return nil
}

// keep makes a hard link to the file rel beside it (or, where hard links
// are not supported, a copy) and returns its name.
func (w *Writer) keep(rel string) (string, error) {
	name, err := w.exclusiveName(rel, "old", func(name string) error { return w.root.Link(rel, name) })
	if err == nil {
		return name, nil
	}
	// No hard links here: copy the file instead.
	data, stamp, err := w.read(rel)
	if err != nil {
		return "", err
	}
	f, tmp, err := w.createTemp(rel, "old", stamp.info.Mode().Perm())
	if err != nil {
		return "", err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.root.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// apply makes one staged change.
func (w *Writer) apply(op *txOp) error {
	switch op.kind {
	case opRemove:
		return w.root.Remove(op.rel)
	case opCreate:
		// A link fails if the name was taken since the check; a rename
		// would silently replace the newcomer.
		if err := w.root.Link(op.tmp, op.rel); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s appeared while writing: %w", op.rel, ErrChangedOnDisk)
			}
			if _, lerr := w.root.Lstat(op.rel); !errors.Is(lerr, fs.ErrNotExist) {
				return fmt.Errorf("%s appeared while writing: %w", op.rel, ErrChangedOnDisk)
			}
			return w.root.Rename(op.tmp, op.rel)
		}
		w.root.Remove(op.tmp)
		return nil
	}
	return w.root.Rename(op.tmp, op.rel)
}

// rollback undoes the applied changes, newest first.
func (tx *Tx) rollback() error {
	var errs []error
	for i := len(tx.ops) - 1; i >= 0; i-- {
		op := tx.ops[i]
		if !op.done {
			continue
		}
		var err error
		if op.backup != "" {
			err = tx.w.root.Rename(op.backup, op.rel)
			if err == nil {
				op.backup = ""
			}
		} else {
			err = tx.w.root.Remove(op.rel) // a created file
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", op.rel, err))
		}
	}
	return errors.Join(errs...)
}

// cleanup removes what the transaction staged and did not use: temporary
// files, kept old files no longer needed, directories created for files
// that were not created.
func (tx *Tx) cleanup() {
	for _, op := range tx.ops {
		if op.tmp != "" && !(op.done && op.kind != opCreate) {
			tx.w.root.Remove(op.tmp)
		}
		if op.backup != "" && !op.done {
			tx.w.root.Remove(op.backup)
		}
	}
	for i := len(tx.dirs) - 1; i >= 0; i-- {
		tx.w.root.Remove(tx.dirs[i]) // only if empty
	}
}

// Abort drops the staged changes: nothing is changed on disk.
func (tx *Tx) Abort() {
	if tx.closed {
		return
	}
	tx.closed = true
	tx.cleanup()
}

// FileKind names a non-regular file's type for error messages ("a FIFO").
func FileKind(m fs.FileMode) string { return rulefile.Kind(m) }
