package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: the server's GC target applies unless GOGC is set.
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	tuneGC(func(string) string { return "" })
	if got := debug.SetGCPercent(100); got != serverGCPercent {
		t.Errorf("GC percent %d without GOGC, want %d", got, serverGCPercent)
	}
	tuneGC(func(k string) string {
		if k == "GOGC" {
			return "200"
		}
		return ""
	})
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("GC percent changed to %d although GOGC is set", got)
	}
}
