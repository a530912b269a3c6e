package symbols

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goSources returns the .go files of $(go env GOROOT)/src/net/http and
// below (testdata left out), read into memory.
func goSources(b *testing.B, dir string) map[string][]byte {
	root := filepath.Join(build.Default.GOROOT, "src", dir)
	files := map[string][]byte{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, ".go") {
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files[filepath.ToSlash(rel)] = src
		}
		return nil
	})
	return files
}

// BenchmarkParseGo parses every Go file of net/http and below (in memory)
// and records it in an Index; it reports the throughput.
func BenchmarkParseGo(b *testing.B) {
	files := goSources(b, "net/http")
	var bytes int64
	for _, src := range files {
		bytes += int64(len(src))
	}
	b.SetBytes(bytes)
	b.ReportAllocs()
	var x *Index
	for b.Loop() {
		x = NewIndex()
		for p, src := range files {
			x.Set(p, Stamp{Size: int64(len(src))}, ParseGo(src))
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(len(files)), "files")
	_, defs := x.Len()
	b.ReportMetric(float64(defs), "decls")
}
