//go:build !unix

package workspace

import "os"

// tryLock: no advisory locks here; the lock excludes nobody (see Lock).
func tryLock(*os.File) (bool, error) { return true, nil }

func unlockFile(*os.File) {}
