package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestToolsAreConstant: the session's tool definitions open every request,
// so they are the same bytes on every call, strict, and the edit tools'
// and the agent's own are all there; run_command's schema marshals.
func TestToolsAreConstant(t *testing.T) {
	a, _ := json.Marshal(Tools())
	b, _ := json.Marshal(Tools())
	if string(a) != string(b) {
		t.Fatal("two calls of Tools give different bytes")
	}
	var names []string
	for _, tl := range append(Tools(), commandTool()) {
		if tl.Function == nil || !tl.Function.Strict || !json.Valid(tl.Function.Parameters) {
			t.Errorf("tool %+v is not a strict function with a valid schema", tl)
			continue
		}
		names = append(names, tl.Function.Name)
	}
	if got, want := strings.Join(names, ","), "read_file,replace_text,create_file,delete_file,apply_diff,list_files,search_files,run_command"; got != want {
		t.Errorf("tools %s, want %s", got, want)
	}
}

// TestPinnedContextLeavesSecretsAndIgnoredFilesOut: the pinned context
// and list_files name neither a secret file nor an ignored one.
func TestPinnedContextLeavesSecretsAndIgnoredFilesOut(t *testing.T) {
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for name, text := range map[string]string{"main.go": "package main\n", ".env": "KEY=1\n", ".gitignore": "build/\n", "build/out.go": "package out\n", "id_rsa": "key\n"} {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	folders := workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{})
	t.Cleanup(func() { folders.Close() })
	if err := folders.Add(workspace.FileURI(dir), "ws"); err != nil {
		t.Fatal(err)
	}
	if err := folders.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := pinned(folders)
	if !strings.Contains(p, "main.go\n") || strings.Contains(p, ".env") || strings.Contains(p, "out.go") || strings.Contains(p, "id_rsa") {
		t.Errorf("pinned context:\n%s", p)
	}
	s := &Session{opts: Options{Folders: folders}}
	if r := s.list(`{"directory":null}`); r.IsError || strings.Contains(r.Content, ".env") || !strings.Contains(r.Content, "main.go") {
		t.Errorf("list_files: %+v", r)
	}
	if r := s.search(context.Background(), `{"query":"KEY","regex":null,"directory":null}`, func(string, int) {}); r.Content != "no match" {
		t.Errorf("search_files found the secret: %+v", r)
	}
	if r := s.search(context.Background(), `{"query":"(","regex":true,"directory":null}`, func(string, int) {}); !r.IsError {
		t.Errorf("an invalid regular expression was accepted: %+v", r)
	}
}

// TestUserTextSaysModeAndLastEdit: the mode and the last edit's fate open
// the user's message, after the cached part.
func TestUserTextSaysModeAndLastEdit(t *testing.T) {
	got := userText(ModeAsk, "the user rejected your edit of a.go; the files are unchanged", "why?")
	if !strings.HasPrefix(got, "[mode: ask") || !strings.Contains(got, "[the user rejected your edit of a.go") || !strings.HasSuffix(got, "\nwhy?") {
		t.Errorf("user text %q", got)
	}
	if got := userText(ModeCode, "", "fix it"); got != "fix it" {
		t.Errorf("code mode, nothing to say: %q", got)
	}
}

// TestCommandText: a command's result says how it ended and keeps the end
// of a long output.
func TestCommandText(t *testing.T) {
	code := 2
	long := strings.Repeat("x", maxCommandOutput) + "THE END"
	got := commandText("go test", CommandResult{Output: long, ExitCode: &code})
	if !strings.HasPrefix(got, "`go test` exited with status 2 (output cut") || !strings.HasSuffix(got, "THE END") || len(got) > maxCommandOutput+200 {
		t.Errorf("command text %.120q… (%d bytes)", got, len(got))
	}
	if got := commandText("sleep 9", CommandResult{Signal: "SIGKILL"}); !strings.Contains(got, "ended by signal SIGKILL") {
		t.Errorf("signal: %q", got)
	}
}
