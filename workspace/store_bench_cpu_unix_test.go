//go:build unix

package workspace

import (
	"syscall"
	"time"
)

// processCPU returns the user+system CPU time the process has used so far,
// so benchmarks can report CPU time per operation, which other processes
// competing for the cores disturb much less than wall-clock time.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
