//go:build unix

package main

import (
	"path/filepath"
	"syscall"
	"testing"
)

// TestEditWriteIgnoresPlantedFIFO is issue 12 item 1: a FIFO at the old
// fixed temporary name made edit --write hang forever; the confined writer
// never opens an existing name for writing.
func TestEditWriteIgnoresPlantedFIFO(t *testing.T) {
	dir := goModule(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "calc.go.kimi-tmp"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeSubtract(t, dir)
}
