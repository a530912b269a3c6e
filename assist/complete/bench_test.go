package complete

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// BenchmarkPromptAndAnswer is the server's own work for a completion that
// asks the provider, without the debounce and the provider: the prompt's
// layout in the document's session after one typed character (the window,
// the edit log, the request block), the request's JSON, and the answer's
// normalisation. On $(go env GOROOT)/src/net/http/server.go (~130 KB), at
// a cursor in its middle. Figures: bench/README.md.
func BenchmarkPromptAndAnswer(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command")
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", "net", "http", "server.go"))
	if err != nil {
		b.Fatal(err)
	}
	text := string(src)
	at := strings.Index(text, "func (c *conn) serve(")
	at += strings.IndexByte(text[at:], '\n') + 1
	docs := workspace.NewDocuments()
	uri := workspace.FileURI("/ws/server.go")
	if err := docs.Open(uri, "go", 1, text[:at]+"\n"+text[at:]); err != nil {
		b.Fatal(err)
	}
	cfg := config.Default()
	c := New(Options{Config: func() config.Config { return cfg }})
	d := c.docLocked(string(uri))
	answer := "```go\n\tif c.server.trace != nil {\n\t\tc.server.trace.connStart(c)\n\t}\n```"
	typed := "\tctx = context.WithValue(ctx, LocalAddrContextKey, c.rwc.LocalAddr())\n"
	pos, version := at, int32(1) // typing on the empty line inserted at at
	dropped := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ch := typed[i%len(typed) : i%len(typed)+1]
		cur, _ := docs.Snapshot(uri)
		p := cur.OffsetPosition(pos, workspace.UTF8)
		version++
		if err := docs.Change(uri, version, []workspace.Change{{Range: &workspace.Range{Start: p, End: p}, Text: ch}}, workspace.UTF8); err != nil {
			b.Fatal(err)
		}
		pos++
		snap, _ := docs.Snapshot(uri)
		req := Request{Key: string(uri), Path: "net/http/server.go", Language: "go", Doc: snap, Offset: pos, Project: "http"}
		b.StartTimer()
		c.mu.Lock()
		j, err := c.promptLocked(d, req, cfg, nil)
		c.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := j.req.Marshal(); err != nil {
			b.Fatal(err)
		}
		// The answer continues the line being typed (what a model answers
		// there); at a line's end the fixed answer, a next line. An answer
		// Normalize drops is counted, not fatal: the work was done.
		ans := answer
		if k := i%len(typed) + 1; k < len(typed)-1 {
			ans = "```go\n" + typed[k:] + "```"
		}
		if Normalize(ans, j.around) == "" {
			dropped++
		}
	}
	b.ReportMetric(float64(dropped)/float64(b.N), "dropped/op")
}
