//go:build unix

package workspace

import (
	"io/fs"
	"os"
	"syscall"
)

// keepOwner gives f the owner and group of old where the process may (root
// may set both; another user the group, if a member), and reports whether
// f now has old's owner and old's group.
func keepOwner(f *os.File, old fs.FileInfo) (sameUser, sameGroup bool) {
	o, ok := old.Sys().(*syscall.Stat_t)
	if !ok {
		return false, false
	}
	fi, err := f.Stat()
	n, ok := fi.Sys().(*syscall.Stat_t)
	if err != nil || !ok {
		return false, false
	}
	if n.Uid != o.Uid || n.Gid != o.Gid {
		if f.Chown(int(o.Uid), int(o.Gid)) != nil {
			f.Chown(-1, int(o.Gid)) // the group alone, when the owner cannot be set
		}
		if fi, err = f.Stat(); err != nil {
			return false, false
		}
		if n, ok = fi.Sys().(*syscall.Stat_t); !ok {
			return false, false
		}
	}
	return n.Uid == o.Uid, n.Gid == o.Gid
}
