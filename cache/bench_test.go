package cache_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache"
)

// fiftyBuffers returns 50 documents of about 40 KB each (2 MB in all), cut
// from the real sources of net and net/http.
func fiftyBuffers(b *testing.B) []cache.Document {
	var names []string
	for _, dir := range []string{"net/http", "net"} {
		n, _ := filepath.Glob(filepath.Join(goroot(b), "src", dir, "*.go"))
		names = append(names, n...)
	}
	var all strings.Builder
	for _, n := range names {
		src, err := os.ReadFile(n)
		if err != nil {
			b.Fatal(err)
		}
		all.Write(src)
		if all.Len() > 2<<20 {
			break
		}
	}
	text := all.String()
	const size = (2 << 20) / 50
	docs := make([]cache.Document, 50)
	for i := range docs {
		chunk := text[i*size : (i+1)*size]
		docs[i] = cache.Document{Path: fmt.Sprintf("pkg/file%02d.go", i), Language: "go", Text: chunk, Version: 1, LastEdited: int64(i)}
	}
	return docs
}

// BenchmarkBuild measures building a prompt for 50 open buffers totalling
// 2 MB, the serialisation of unchanged segments reused:
//   - unchanged: nothing changed since the last request (texts are the same
//     strings);
//   - copied: nothing changed, but every text is a fresh copy (the
//     comparison with what was sent cannot take the pointer shortcut);
//   - edit: one small edit to the active buffer per request, the edit log
//     growing and being rebased when it passes its limit (amortised);
//   - switch: another active buffer per request, no edits.
func BenchmarkBuild(b *testing.B) {
	for _, mode := range []string{"unchanged", "copied", "edit", "switch"} {
		b.Run(mode, func(b *testing.B) {
			docs := fiftyBuffers(b)
			s, err := cache.NewSession(cache.Config{Tools: tools, BudgetTokens: 1_000_000})
			if err != nil {
				b.Fatal(err)
			}
			now := t0
			req := request(docs, 49, 5000, "explain", now)
			if _, err := s.Build(req); err != nil {
				b.Fatal(err)
			}
			base := docs[49].Text
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				now = now.Add(time.Second)
				active := 49
				switch mode {
				case "copied":
					b.StopTimer()
					for j := range docs {
						docs[j].Text = strings.Clone(docs[j].Text)
					}
					b.StartTimer()
				case "edit":
					at := 5000 + (i%50)*10
					docs[49].Text = base[:at] + fmt.Sprintf("x%d", i) + base[at:]
					docs[49].LastEdited = int64(100 + i)
				case "switch":
					active = i % 50
				}
				p, err := s.Build(request(docs, active, 5000, "explain", now))
				if err != nil {
					b.Fatal(err)
				}
				s.Record(p.Handle, cache.Usage{PromptTokens: p.EstimatedTokens, CachedTokens: p.PredictedCachedTokens})
			}
		})
	}
}
