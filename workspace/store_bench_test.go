package workspace

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Benchmark (a) of issue 2: single-character incremental edits on a 50 KB
// and a 5 MB document must cost the same per edit. Run with
//
//	go test ./workspace -run '^$' -bench 'Documents' -benchmem -benchtime 10000x
//
// (-benchtime 10000x makes each edit benchmark exactly 10,000 edits).

var benchSizes = []struct {
	name  string
	bytes int
}{{"50KB", 50 << 10}, {"500KB", 500 << 10}, {"5MB", 5 << 20}}

// benchText returns source-like text of about n bytes: lines of 20 to 80
// bytes, LF line ends, a UTF-8 comment every 16 lines.
func benchText(n int) string {
	rng := rand.New(rand.NewPCG(42, uint64(n)))
	var b strings.Builder
	b.Grow(n + 100)
	for i := 0; b.Len() < n; i++ {
		if i%16 == 0 {
			b.WriteString("\t// café — ünïcode 😀 comment line\n")
			continue
		}
		b.WriteString("\t")
		for w := 20 + rng.IntN(60); w > 0; w-- {
			const alphabet = "abcdefghij klmnopqrstuvwxyz(){}=.:;"
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// benchEdits returns 10,000 single-character edits spread over a text of
// the given line count: even ones insert "x", odd ones delete a character,
// so the size stays about the same.
// cpuMeter reports the process CPU time per operation as "cpu-ns/op"
// beside the wall-clock ns/op. Start it after the setup.
type cpuMeter struct {
	start time.Duration
	ok    bool
}

func startCPU(b *testing.B) cpuMeter {
	b.ResetTimer()
	t, ok := processCPU()
	return cpuMeter{t, ok}
}

func (m cpuMeter) report(b *testing.B) {
	b.StopTimer()
	if t, ok := processCPU(); ok && m.ok {
		b.ReportMetric(float64(t-m.start)/float64(b.N), "cpu-ns/op")
	}
}

func benchEdits(lines int) []Change {
	rng := rand.New(rand.NewPCG(7, uint64(lines)))
	out := make([]Change, 10000)
	for i := range out {
		p := Position{uint32(rng.IntN(lines)), uint32(rng.IntN(20))}
		if i%2 == 0 {
			out[i] = Change{Range: &Range{p, p}, Text: "x"}
		} else {
			out[i] = Change{Range: &Range{p, Position{p.Line, p.Character + 1}}}
		}
	}
	return out
}

func BenchmarkDocumentsChange(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			d := NewDocuments()
			uri := FileURI("/bench/file.go")
			if err := d.Open(uri, "go", 0, benchText(size.bytes)); err != nil {
				b.Fatal(err)
			}
			s, _ := d.Snapshot(uri)
			edits := benchEdits(s.LineCount() - 1)
			batch := make([]Change, 1)
			b.ReportAllocs()
			m := startCPU(b)
			for i := range b.N {
				batch[0] = edits[i%len(edits)]
				if err := d.Change(uri, int32(i+1), batch, UTF16); err != nil {
					b.Fatal(err)
				}
			}
			m.report(b)
			s, _ = d.Snapshot(uri)
			b.ReportMetric(float64(s.text.root.height), "tree-height")
		})
	}
}

// typingEdits returns 10,000 keystrokes as an editor sends them: at a
// random line, type a 40-character word one character at a time, then
// delete it with 40 backspaces, then move to another line.
func typingEdits(lines int) []Change {
	rng := rand.New(rand.NewPCG(9, uint64(lines)))
	out := make([]Change, 0, 10000)
	for len(out) < 10000 {
		line := uint32(rng.IntN(lines))
		col := uint32(rng.IntN(10))
		for i := range uint32(40) {
			p := Position{line, col + i}
			out = append(out, Change{Range: &Range{p, p}, Text: "abcdefghijklmnopqrstuvwxyz0123456789éñ😀_"[i : i+1]})
		}
		for i := uint32(40); i > 0; i-- {
			out = append(out, Change{Range: &Range{Position{line, col + i - 1}, Position{line, col + i}}})
		}
	}
	return out[:10000]
}

// BenchmarkDocumentsTyping is the realistic pattern: keystrokes close to
// each other, so the touched leaves and nodes stay in the CPU caches.
func BenchmarkDocumentsTyping(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			d := NewDocuments()
			uri := FileURI("/bench/file.go")
			if err := d.Open(uri, "go", 0, benchText(size.bytes)); err != nil {
				b.Fatal(err)
			}
			s, _ := d.Snapshot(uri)
			edits := typingEdits(s.LineCount() - 1)
			batch := make([]Change, 1)
			b.ReportAllocs()
			m := startCPU(b)
			for i := range b.N {
				batch[0] = edits[i%len(edits)]
				if err := d.Change(uri, int32(i+1), batch, UTF16); err != nil {
					b.Fatal(err)
				}
			}
			m.report(b)
		})
	}
}

// BenchmarkDocumentsOpen measures opening a document (cutting it into
// chunks and building the tree) and reports the heap the store keeps per
// document beyond its text ("overhead-B/doc", with 100 documents open).
func BenchmarkDocumentsOpen(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			texts := make([]string, 100)
			for i := range texts {
				texts[i] = strings.Clone(benchText(size.bytes))
			}
			d := NewDocuments()
			d.SetLogger(slog.New(slog.DiscardHandler)) // reopening is the point here
			b.ReportAllocs()
			m := startCPU(b)
			for i := range b.N {
				if err := d.Open(FileURI(fmt.Sprintf("/bench/%d.go", i%100)), "go", 1, texts[i%100]); err != nil {
					b.Fatal(err)
				}
			}
			m.report(b)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			d = NewDocuments()
			for i, t := range texts {
				_ = d.Open(FileURI(fmt.Sprintf("/bench/%d.go", i)), "go", 1, t)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(int64(after.HeapAlloc)-int64(before.HeapAlloc))/100, "overhead-B/doc")
			runtime.KeepAlive(d)
			runtime.KeepAlive(texts)
		})
	}
}

func BenchmarkDocumentsSnapshot(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			d := NewDocuments()
			uri := FileURI("/bench/file.go")
			if err := d.Open(uri, "go", 0, benchText(size.bytes)); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			m := startCPU(b)
			for range b.N {
				if s, ok := d.Snapshot(uri); !ok || s.Len() == 0 {
					b.Fatal("no snapshot")
				}
			}
			m.report(b)
		})
	}
}

// BenchmarkDocumentsSnapshotText measures an edit, then a snapshot and its
// whole text (a fresh snapshot each time, so Text is never memoised).
func BenchmarkDocumentsSnapshotText(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			d := NewDocuments()
			uri := FileURI("/bench/file.go")
			text := benchText(size.bytes)
			if err := d.Open(uri, "go", 0, text); err != nil {
				b.Fatal(err)
			}
			edits := benchEdits(strings.Count(text, "\n"))
			batch := make([]Change, 1)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			m := startCPU(b)
			for i := range b.N {
				batch[0] = edits[i%len(edits)]
				if err := d.Change(uri, int32(i+1), batch, UTF16); err != nil {
					b.Fatal(err)
				}
				s, _ := d.Snapshot(uri)
				if len(s.Text()) < len(text)/2 {
					b.Fatal("short text")
				}
			}
			m.report(b)
		})
	}
}

func BenchmarkDocumentsPositionOffset(b *testing.B) {
	for _, size := range benchSizes {
		for _, enc := range []Encoding{UTF16, UTF8} {
			b.Run(fmt.Sprintf("%s/%v", size.name, enc), func(b *testing.B) {
				s := snapshotOf(benchText(size.bytes), defaultShape)
				rng := rand.New(rand.NewPCG(1, 1))
				pos := make([]Position, 4096)
				for i := range pos {
					pos[i] = Position{uint32(rng.IntN(s.LineCount())), uint32(rng.IntN(40))}
				}
				b.ReportAllocs()
				m := startCPU(b)
				for i := range b.N {
					if s.PositionOffset(pos[i%len(pos)], enc) < 0 {
						b.Fatal("negative offset")
					}
				}
				m.report(b)
			})
		}
	}
}

func BenchmarkDocumentsOffsetPosition(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			s := snapshotOf(benchText(size.bytes), defaultShape)
			rng := rand.New(rand.NewPCG(2, 2))
			offs := make([]int, 4096)
			for i := range offs {
				offs[i] = rng.IntN(s.Len() + 1)
			}
			b.ReportAllocs()
			m := startCPU(b)
			for i := range b.N {
				if s.OffsetPosition(offs[i%len(offs)], UTF16).Line > uint32(s.LineCount()) {
					b.Fatal("line past the end")
				}
			}
			m.report(b)
		})
	}
}

// BenchmarkFlatStringChange is the baseline the rope avoids: a flat string
// copied on every edit plus a line-start table rebuilt by a scan, as a
// naive document model would do.
func BenchmarkFlatStringChange(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			text := benchText(size.bytes)
			edits := benchEdits(strings.Count(text, "\n"))
			lineStarts := func(s string) []int {
				out := []int{0}
				for i := 0; i < len(s); i++ {
					if s[i] == '\n' {
						out = append(out, i+1)
					}
				}
				return out
			}
			starts := lineStarts(text)
			b.ReportAllocs()
			m := startCPU(b)
			for i := range b.N {
				c := edits[i%len(edits)]
				off := min(starts[min(int(c.Range.Start.Line), len(starts)-1)]+int(c.Range.Start.Character), len(text))
				end := off
				if c.Text == "" {
					end = min(off+1, len(text))
				}
				text = text[:off] + c.Text + text[end:]
				starts = lineStarts(text)
			}
			m.report(b)
		})
	}
}
