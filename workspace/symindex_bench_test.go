package workspace

import (
	"context"
	gobuild "go/build"
	"log/slog"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// heapNow returns the bytes of live heap objects after a collection.
func heapNow() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sample)
	return sample[0].Value.Uint64()
}

// gorootFolders opens $(go env GOROOT)/src as a workspace folder and waits
// for its scan.
func gorootFolders(b *testing.B) (*Folders, string) {
	src := filepath.Join(gobuild.Default.GOROOT, "src")
	f := NewFolders(DefaultOptions(), Hooks{Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(func() { f.Close() })
	if err := f.Add(FileURI(src), ""); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.Ready(ctx); err != nil {
		b.Fatal(err)
	}
	return f, src
}

// BenchmarkSymbolIndexGOROOT builds the symbol index of $(go env
// GOROOT)/src (every file with a parser: Go through go/parser, the others
// by the line scan), after the folder's scan; kept-B is the heap the
// index keeps.
func BenchmarkSymbolIndexGOROOT(b *testing.B) {
	f, _ := gorootFolders(b)
	v := f.Views()[0]
	b.ReportAllocs()
	var files, defs int
	var kept uint64
	for b.Loop() {
		b.StopTimer()
		v.syms = newFolderSymbols(v)
		before := heapNow()
		b.StartTimer()
		if err := v.BuildSymbols(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		kept = heapNow() - before
		files, defs = v.Symbols().Len()
		b.StartTimer()
	}
	b.ReportMetric(float64(files), "files")
	b.ReportMetric(float64(defs), "decls")
	b.ReportMetric(float64(kept), "kept-B")
}
