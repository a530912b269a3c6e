package main

import (
	"bytes"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hideInBlock overwrites with '*' the values of the variables secret
// names in the environment block the kernel set up at exec, which
// /proc/PID/environ shows (the Go runtime reads a copy of it). The block
// follows the argument strings, whose memory os.Args still points to;
// /proc/self/stat's env_start and env_end confirm where it is and bound
// it, and nothing is written unless they agree.
func hideInBlock(secret func(name string) bool) {
	block := environBlock()
	for off := 0; off < len(block); {
		end := bytes.IndexByte(block[off:], 0)
		if end < 0 {
			end = len(block) - off
		}
		entry := block[off : off+end]
		if name, _, ok := bytes.Cut(entry, []byte{'='}); ok && secret(string(name)) {
			for i := len(name) + 1; i < len(entry); i++ {
				entry[i] = '*'
			}
		}
		off += end + 1
	}
}

// environBlock is the process's environment block, nil when it cannot be
// found for certain.
func environBlock() []byte {
	if len(os.Args) == 0 {
		return nil
	}
	last := os.Args[len(os.Args)-1]
	p := unsafe.StringData(last)
	if p == nil {
		return nil
	}
	start := unsafe.Add(unsafe.Pointer(p), len(last)+1)
	envStart, envEnd, ok := envRange()
	if !ok || uintptr(start) != envStart || envEnd <= envStart || envEnd-envStart > 1<<26 {
		return nil
	}
	return unsafe.Slice((*byte)(start), envEnd-envStart)
}

// envRange reads env_start and env_end from /proc/self/stat (fields 50
// and 51, see proc(5)).
func envRange() (start, end uintptr, ok bool) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := strings.Fields(string(b[i+1:])) // from field 3, state
	if len(f) < 49 {
		return 0, 0, false
	}
	s, err1 := strconv.ParseUint(f[47], 10, 64)
	e, err2 := strconv.ParseUint(f[48], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(s), uintptr(e), true
}

// makeNonDumpable makes the process non-dumpable: its /proc files belong
// to root and other processes of the user cannot attach to it.
func makeNonDumpable() { _ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
