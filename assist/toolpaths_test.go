package assist_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestToolErrorsNameNoAbsolutePath: what a failing tool call sends back to
// the model names files workspace-relative, never by the absolute paths of
// the user's directories (issue 21.13).
func TestToolErrorsNameNoAbsolutePath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	root := filepath.Join(home, "src", "project")
	outside := filepath.Join(home, "private")
	for _, d := range []string{filepath.Join(root, "pkg", "sub"), outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "pkg", "a.go"), []byte("package pkg\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("secret plans\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "notes.txt"), filepath.Join(root, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	folders := workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{})
	t.Cleanup(func() { folders.Close() })
	if err := folders.Add(workspace.FileURI(root), "project"); err != nil {
		t.Fatal(err)
	}
	folders.Ready(context.Background())
	real, err := filepath.EvalSymlinks(root)
	if err != nil {
		t.Fatal(err)
	}
	x := tools.NewExecutor(patch.NewEditSet(assist.NewFiles(folders, nil), patch.Options{}), nil)
	calls := []struct{ tool, args string }{
		{tools.ReadFile, `{"path":"pkg/sub","start_line":null,"end_line":null}`},
		{tools.ReadFile, `{"path":"notes.txt","start_line":null,"end_line":null}`},
		{tools.ReadFile, `{"path":"pkg/missing.go","start_line":null,"end_line":null}`},
		{tools.ReplaceText, `{"path":"pkg/sub","old_text":"a","new_text":"b"}`},
		{tools.ReplaceText, `{"path":"notes.txt","old_text":"secret","new_text":"public"}`},
		{tools.ReplaceText, `{"path":"pkg/a.go","old_text":"package nope","new_text":"package pkg2"}`},
		{tools.ApplyDiff, `{"diff":"--- a/notes.txt\n+++ b/notes.txt\n@@\n-secret plans\n+public plans\n"}`},
	}
	for _, c := range calls {
		res := x.Call(c.tool, c.args)
		if !res.IsError {
			t.Errorf("%s %s: succeeded: %s", c.tool, c.args, res.Content)
			continue
		}
		for _, p := range []string{root, real, home, outside} {
			if strings.Contains(res.Content, p) {
				t.Errorf("%s %s: result names %s:\n%s", c.tool, c.args, p, res.Content)
			}
		}
	}
	for _, f := range x.Failed() {
		for _, p := range []string{root, real, home} {
			if strings.Contains(f.String(), p) {
				t.Errorf("failed call %s names %s", f, p)
			}
		}
	}
}
