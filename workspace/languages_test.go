package workspace_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

func TestProjectLanguages(t *testing.T) {
	many := func(n int, format string) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf(format, i))
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string
	}{
		{"a Go module", []string{"go.mod", "go.sum", "main.go", "Makefile", "Dockerfile", "README.md", "x/x.go", "x/x_test.go"}, []string{"go"}},
		{"one Go file", []string{"go.mod", "main.go"}, []string{"go"}},
		{"Go with a web front end", slices.Concat(many(20, "s/%d.go"), many(8, "web/%d.ts"), many(4, "web/%d.tsx"), []string{"web/package.json"}), []string{"go", "typescript", "typescriptreact"}},
		{"a stray script stays out", slices.Concat(many(30, "%d.py"), []string{"tools/gen.rb"}), []string{"python"}},
		{"ties by name", []string{"a.rs", "b.c"}, []string{"c", "rust"}},
		{"at most four", slices.Concat(many(5, "%d.go"), many(5, "%d.py"), many(5, "%d.rs"), many(5, "%d.c"), many(5, "%d.java")), []string{"c", "go", "java", "python"}},
		{"scripts when there is no code", []string{"build.sh", "deploy.sh", "README.md"}, []string{"shellscript"}},
		{"markdown alone", []string{"README.md", "docs/a.md", "docs/b.md", "mkdocs.yml"}, []string{"markdown", "yaml"}},
		{"nothing known", []string{"LICENSE", "a.bin"}, nil},
		{"backslashes", []string{`cmd\main.go`}, []string{"go"}},
	} {
		if got := workspace.ProjectLanguages(tc.paths); !slices.Equal(got, tc.want) {
			t.Errorf("%s: ProjectLanguages = %q, want %q", tc.name, got, tc.want)
		}
	}
}

// TestFoldersLanguages: a Go module on disk is "go" once its scan is done,
// which the prompt's project block shows instead of languages="".
func TestFoldersLanguages(t *testing.T) {
	root := t.TempDir()
	for name, text := range map[string]string{
		"go.mod": "module example.com/m\n", "main.go": "package main\n", "util/util.go": "package util\n",
		"README.md": "# m\n", "Makefile": "all:\n", "node_modules/x/index.js": "", "vendor.js": "",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(text), 0o644)
	}
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("vendor.js\n"), 0o644)
	f := workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{Logger: slog.New(slog.DiscardHandler)})
	defer f.Close()
	if err := f.Add(workspace.FileURI(root), ""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.Languages(); !slices.Equal(got, []string{"go"}) {
		t.Errorf("Languages = %q, want [go] (ignored files do not count)", got)
	}
	// Counted once per set of folders: new files do not change the
	// project block within a session; a new folder does.
	for i := range 5 {
		os.WriteFile(filepath.Join(root, fmt.Sprintf("s%d.py", i)), []byte("x = 1\n"), 0o644)
	}
	if got := f.Languages(); !slices.Equal(got, []string{"go"}) {
		t.Errorf("after new files, Languages = %q, want [go] as counted", got)
	}
	other := t.TempDir()
	for i := range 5 {
		os.WriteFile(filepath.Join(other, fmt.Sprintf("m%d.rs", i)), nil, 0o644)
	}
	if err := f.Add(workspace.FileURI(other), ""); err != nil {
		t.Fatal(err)
	}
	if err := f.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	if got := f.Languages(); !slices.Contains(got, "rust") {
		t.Errorf("after adding a Rust folder, Languages = %q, want rust among them", got)
	}
	var none *workspace.Folders
	if got := none.Languages(); got != nil {
		t.Errorf("nil Folders: %q", got)
	}
}
