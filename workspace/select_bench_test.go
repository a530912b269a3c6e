package workspace

import (
	"context"
	gobuild "go/build"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
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

// BenchmarkSelect measures one context selection in $(go env GOROOT)/src
// with the 8 net/http files of the replay open, the index built: a
// selection in server.go (excerpted: 130 KB) and in header.go (whole).
func BenchmarkSelect(b *testing.B) {
	f, src := gorootFolders(b)
	if err := f.Views()[0].BuildSymbols(context.Background()); err != nil {
		b.Fatal(err)
	}
	var open []OpenBuffer
	texts := map[string]string{}
	for i, n := range []string{"client.go", "cookie.go", "fs.go", "header.go", "request.go", "response.go", "server.go", "transfer.go"} {
		p := filepath.Join(src, "net/http", n)
		t, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		texts[n] = string(t)
		open = append(open, OpenBuffer{URI: FileURI(p), Text: string(t), LastEdit: int64(i)})
	}
	for _, c := range []struct{ file, sel string }{
		{"server.go", "\t\tw, err := c.readRequest(ctx)\n"},
		{"header.go", "\tfor k, vv := range h {\n"},
	} {
		b.Run(c.file, func(b *testing.B) {
			text := texts[c.file]
			at := strings.Index(text, c.sel)
			if at < 0 {
				b.Fatalf("%q not in %s", c.sel, c.file)
			}
			in := SelectInput{Active: FileURI(filepath.Join(src, "net/http", c.file)), ActiveText: text,
				SelStart: at, SelEnd: at + len(c.sel), Open: open, Budget: 32000}
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = len(f.Select(in))
			}
			b.ReportMetric(float64(n), "pieces")
		})
	}
}
