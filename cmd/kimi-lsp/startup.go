package main

import "runtime/debug"

// serverGCPercent is the garbage collector's target for the language
// server (debug.SetGCPercent), used unless GOGC is set in the environment.
//
// The server's live heap is small (about 1 MiB with 8 files open) and it
// allocates little between keystrokes, so with Go's default (100, which
// lets the heap reach at least 4 MiB before a collection) most of its heap
// pages hold garbage. 50 halves that floor: the peak resident memory of
// bench/startup's scenario (8 files, 2,000 edits) drops from about 14.4 to
// 12.7 MiB, for a few more collections of a small heap (5 → 10 in that
// scenario, well under a millisecond each). bench/README.md has the
// figures.
const serverGCPercent = 50

// tuneGC applies serverGCPercent unless the user set GOGC.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
}
