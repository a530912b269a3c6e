package relevance

import (
	"context"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	gobuild "go/build"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// gorootFolders opens $(go env GOROOT)/src as a workspace folder and waits
// for its scan.
func gorootFolders(b *testing.B) (*workspace.Folders, string) {
	src := filepath.Join(gobuild.Default.GOROOT, "src")
	f := workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{Logger: slog.New(slog.DiscardHandler)})
	b.Cleanup(func() { f.Close() })
	if err := f.Add(workspace.FileURI(src), ""); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := f.Ready(ctx); err != nil {
		b.Fatal(err)
	}
	return f, src
}

// BenchmarkSelect measures one context selection in $(go env GOROOT)/src
// with the 8 net/http files of the replay open, the index built: a
// selection in server.go (excerpted: 130 KB) and in header.go (whole).
func BenchmarkSelect(b *testing.B) {
	f, src := gorootFolders(b)
	if err := f.Views()[0].BuildSymbols(context.Background()); err != nil {
		b.Fatal(err)
	}
	var open []buf
	texts := map[string]string{}
	for _, n := range []string{"client.go", "cookie.go", "fs.go", "header.go", "request.go", "response.go", "server.go", "transfer.go"} {
		p := filepath.Join(src, "net/http", n)
		t, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		texts[n] = string(t)
		open = append(open, buf{workspace.FileURI(p), string(t)})
	}
	snaps := buffers(b, open...)
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
			in := SelectInput{Active: workspace.FileURI(filepath.Join(src, "net/http", c.file)), ActiveText: text,
				SelStart: at, SelEnd: at + len(c.sel), Open: snaps, Budget: 32000}
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = len(Select(Workspace(f), in))
			}
			b.ReportMetric(float64(n), "pieces")
		})
	}
}
