package relevance

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

func writeFile(t testing.TB, root, rel, content string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// newFolders makes Folders over real directories and waits for their scans.
func newFolders(t testing.TB, opts workspace.Options, hooks workspace.Hooks, roots ...string) *workspace.Folders {
	t.Helper()
	if hooks.Logger == nil {
		hooks.Logger = slog.New(slog.DiscardHandler)
	}
	f := workspace.NewFolders(opts, hooks)
	t.Cleanup(func() { f.Close() })
	for _, r := range roots {
		if err := f.Add(workspace.FileURI(r), ""); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := f.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	return f
}

// buf is an open buffer of a test: its URI and text.
type buf struct {
	uri  workspace.URI
	text string
}

// buffers opens bufs in a document store, in order (so each one's Seq is
// larger than the previous one's), and returns their snapshots.
func buffers(t testing.TB, bufs ...buf) []*workspace.Snapshot {
	t.Helper()
	docs := workspace.NewDocuments()
	var out []*workspace.Snapshot
	for _, b := range bufs {
		if err := docs.Open(b.uri, workspace.LanguageOf(string(b.uri)), 1, b.text); err != nil {
			t.Fatal(err)
		}
		s, _ := docs.Snapshot(b.uri)
		out = append(out, s)
	}
	return out
}
