package main

import "runtime/debug"

// serverGCPercent is the garbage collector's target for the language
// server (debug.SetGCPercent), used unless GOGC is set in the environment.
//
// The server's live heap is small (about 1 MiB with 8 files open) and it
// allocates little between keystrokes, so with Go's default (100, which
// lets the heap reach at least 4 MiB before a collection) most of its heap
// pages hold garbage. 50 halves that floor: the peak resident memory of
// bench/startup's scenario (8 files, 2,000 edits) drops from about 14.5 to
// 12.9 MiB, for more collections of a small heap (4 → 12 in that
// scenario: about 8 ms more GC CPU over 2,000 edits, 4 µs an edit; no
// difference in the edits' wall time). bench/README.md has the figures.
const serverGCPercent = 50

// tuneGC applies serverGCPercent unless the user set GOGC.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
}
