package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// AppendFile appends data to the regular file p, creating it (not its
// directory) with the Writer's mode when it is missing. The data goes out
// in one write on a file opened with O_APPEND, so lines appended by several
// processes land whole, one after the other, on a local file system. As
// everywhere in the Writer, a symbolic link, FIFO or other special file at
// p is refused (ErrNotRegular) and never written through.
//
// AppendFile is for logs the program keeps (the request record); a file to
// be replaced as a whole goes through WriteFile or a Tx.
func (w *Writer) AppendFile(p string, data []byte) error {
	f, err := w.openAppend(p)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// openAppend opens the regular file p for appending, creating it
// exclusively when it is missing (O_EXCL never follows a link), else
// opening what lstat saw and checking it is the same regular file.
func (w *Writer) openAppend(p string) (*os.File, error) {
	rel, err := w.rel(p)
	if err != nil {
		return nil, err
	}
	fi, err := w.lstat(rel)
	if errors.Is(err, fs.ErrNotExist) {
		f, cerr := w.root.OpenFile(rel, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, w.filePerm)
		if !errors.Is(cerr, fs.ErrExist) {
			return f, cerr
		}
		// Another process created it meanwhile: open what is there.
		fi, err = w.lstat(rel)
	}
	if err != nil {
		return nil, err
	}
	f, err := w.root.OpenFile(rel, os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	got, err := f.Stat()
	if err != nil || !got.Mode().IsRegular() || !os.SameFile(fi, got) {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s was replaced while being opened: %w", rel, ErrChangedOnDisk)
		}
		return nil, err
	}
	return f, nil
}

// ReadFileAt reads at most limit bytes of the regular file p from offset
// off (a negative off: the last limit bytes), and returns them with the
// file's information as it was opened (its size tells what is left past
// the bytes read). The file is opened without blocking and checked to be
// the regular file lstat saw, as in ReadFile.
func (w *Writer) ReadFileAt(p string, off int64, limit int) ([]byte, fs.FileInfo, error) {
	rel, err := w.rel(p)
	if err != nil {
		return nil, nil, err
	}
	fi, err := w.lstat(rel)
	if err != nil {
		return nil, nil, err
	}
	f, err := w.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !got.Mode().IsRegular() || !os.SameFile(fi, got) {
		return nil, nil, fmt.Errorf("%s was replaced while being opened: %w", rel, ErrChangedOnDisk)
	}
	if off < 0 {
		off = max(got.Size()-int64(max(limit, 0)), 0)
	}
	off = min(off, got.Size())
	n := min(int64(max(limit, 0)), got.Size()-off)
	buf := make([]byte, n)
	k, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	return buf[:k], got, nil
}

// Lstat returns the lstat information of p, which must be a regular file
// (ErrNotRegular otherwise; a missing file wraps fs.ErrNotExist).
func (w *Writer) Lstat(p string) (fs.FileInfo, error) {
	rel, err := w.rel(p)
	if err != nil {
		return nil, err
	}
	return w.lstat(rel)
}

// lockWait bounds how long Lock waits for another process's lock.
const lockWait = 2 * time.Second

// ErrLocked: Lock waited its time (2 s) and another process still held the
// lock.
var ErrLocked = errors.New("locked by another process")

// Lock takes an exclusive advisory lock on the regular file p, created
// empty with the Writer's mode when missing, and returns the function that
// releases it. It is for the few files several servers (two editors) update
// in turn, such as the request record: they agree to hold the lock around
// each update. It waits at most 2 s for another holder, then fails with
// ErrLocked. Where the system has no advisory locks (not unix) the lock
// is taken at once and excludes nobody.
func (w *Writer) Lock(p string) (unlock func(), err error) {
	f, err := w.openAppend(p)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(lockWait)
	for {
		ok, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", p, err)
		}
		if ok {
			return func() { unlockFile(f); f.Close() }, nil
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", p, ErrLocked)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
