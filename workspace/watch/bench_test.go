package watch

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

func goroot(b *testing.B) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatalf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src")
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkScanGOROOT measures the first scan of $(go env GOROOT)/src:
// metadata only, no contents read. "native" adds one inotify watch per
// directory; "nowatch" is the walk alone. retained-B is the heap the index
// keeps.
func BenchmarkScanGOROOT(b *testing.B) {
	src := goroot(b)
	for _, mode := range []struct {
		name string
		m    Mode
	}{{"native", ModeNative}, {"nowatch", ModePoll}} {
		b.Run(mode.name, func(b *testing.B) {
			b.ReportAllocs()
			var files, dirs int
			var retained uint64
			for i := 0; i < b.N; i++ {
				before := heapInUse()
				tr, err := New(context.Background(), src, Options{startMode: mode.m, PollInterval: time.Hour})
				if err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				retained = heapInUse() - before
				files, dirs = tr.Len(), tr.Dirs()
				tr.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(files), "files")
			b.ReportMetric(float64(dirs), "dirs")
			b.ReportMetric(float64(retained), "retained-B")
		})
	}
}

// BenchmarkWriteLatency measures the time from a file write to the index
// showing it, in a folder of 1,000 files, with the default debounce (50ms,
// which dominates) and with 5ms.
func BenchmarkWriteLatency(b *testing.B) {
	for _, debounce := range []time.Duration{50 * time.Millisecond, 5 * time.Millisecond} {
		b.Run(fmt.Sprintf("debounce=%s", debounce), func(b *testing.B) {
			root := b.TempDir()
			for i := 0; i < 1000; i++ {
				write(b, root, fmt.Sprintf("d%02d/f%03d.go", i%20, i), "package x\n")
			}
			changed := make(chan struct{}, 1)
			tr, err := New(context.Background(), root, Options{Debounce: debounce, OnChange: func([]Change) {
				select {
				case changed <- struct{}{}:
				default:
				}
			}})
			if err != nil {
				b.Fatal(err)
			}
			defer tr.Close()
			target := filepath.Join(root, "d07/f007.go")
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				size := int64(20 + i%2)
				if err := os.WriteFile(target, []byte(strings.Repeat("x", int(size))), 0o644); err != nil {
					b.Fatal(err)
				}
				for {
					if e, _ := tr.Lookup("d07/f007.go"); e.Size == size {
						break
					}
					select {
					case <-changed:
					case <-time.After(10 * time.Second):
						b.Fatal("write never seen")
					}
				}
			}
		})
	}
}

// BenchmarkMemoryPerDir measures the Go heap a watched directory costs
// (index entry, fsnotify's bookkeeping), over 2,000 directories of one file.
// The kernel's own cost per inotify watch (about 1 KiB on 64-bit) is not in
// the Go heap.
func BenchmarkMemoryPerDir(b *testing.B) {
	root := b.TempDir()
	const n = 2000
	for i := 0; i < n; i++ {
		write(b, root, fmt.Sprintf("d%04d/f.go", i), "")
	}
	var perDir float64
	for i := 0; i < b.N; i++ {
		before := heapInUse()
		tr, err := New(context.Background(), root, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		perDir = float64(heapInUse()-before) / float64(tr.Dirs())
		if tr.Dirs() != n+1 {
			b.Fatalf("Dirs = %d", tr.Dirs())
		}
		tr.Close()
		b.StartTimer()
	}
	b.ReportMetric(perDir, "B/dir")
}
