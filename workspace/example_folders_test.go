package workspace_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The edit applier resolves every path before it writes: what leaves the
// workspace is refused with ErrOutsideWorkspace.
func ExampleFolders_Resolve() {
	root, _ := os.MkdirTemp("", "ws")
	defer os.RemoveAll(root)
	os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644)

	f := workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{Logger: slog.New(slog.DiscardHandler)})
	defer f.Close()
	f.Add(workspace.FileURI(root), "")

	for _, target := range []string{"main.go", "new/file.go", "../elsewhere.go", ".git/config"} {
		abs, _, err := f.Resolve(target)
		if errors.Is(err, workspace.ErrOutsideWorkspace) {
			fmt.Printf("%s: refused\n", target)
			continue
		}
		rel, _ := f.RelPath(abs)
		fmt.Printf("%s: %s\n", target, rel)
	}
	fmt.Println(workspace.IsSecret("config/.env.production"))
	// Output:
	// main.go: main.go
	// new/file.go: new/file.go
	// ../elsewhere.go: refused
	// .git/config: refused
	// true
}
