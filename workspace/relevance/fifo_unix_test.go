//go:build unix

package relevance

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestLinkToFIFONeverBlocks (#21.3): a source file that is a link to a FIFO
// inside the folder (the watcher keeps links, and anyone with a shell can
// make the FIFO) is skipped by the symbol index: a selection does not wait
// for it forever, and Close returns. The 20 s bounds only detect a hang.
func TestLinkToFIFONeverBlocks(t *testing.T) {
	root := shopTree(t)
	if err := syscall.Mkfifo(filepath.Join(root, "shop", "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe", filepath.Join(root, "shop", "zz.go")); err != nil {
		t.Fatal(err)
	}
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	sel := "\tfor _, it := range c.Items {\n\t\tsum += Price(it, 1)\n\t}\n\tstore.Save(int(sum))\n"
	done := make(chan []ContextFile, 1)
	go func() { done <- Select(Workspace(f), selectIn(root, "shop/cart.go", cartGo, sel, 200_000)) }()
	select {
	case got := <-done:
		if _, ok := find(got, "shop/pricing.go", "func Price"); !ok {
			t.Errorf("Price's declaration is missing: %s", names(got))
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Select still waits after 20 s: the index build blocked on the FIFO")
	}
	closed := make(chan struct{})
	go func() { f.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close still waits after 20 s")
	}
}
