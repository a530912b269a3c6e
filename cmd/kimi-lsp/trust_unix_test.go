//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// TestEditWriteIgnoresPlantedFIFO is issue 12 item 1: a FIFO at the old
// fixed temporary name made edit --write hang forever; the confined writer
// never opens an existing name for writing.
func TestEditWriteIgnoresPlantedFIFO(t *testing.T) {
	dir := goModule(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "calc.go.kimi-tmp"), 0o644); err != nil {
		t.Fatal(err)
	}
	writeSubtract(t, dir)
}

// TestCommandOnAFIFO: explain and edit on a FIFO (or a link to one) refuse
// it as not a regular file at once; reading it would wait forever for a
// writer.
func TestCommandOnAFIFO(t *testing.T) {
	dir := goModule(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("pipe.go", filepath.Join(dir, "link.go")); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"explain", "pipe.go"},
		{"explain", "link.go:1"},
		{"edit", "pipe.go", "-m", "x"},
	} {
		r := runBinary(t, testEnv(t), dir, args...)
		if r.code != 2 || !strings.Contains(r.stderr, "is not a regular file") {
			t.Errorf("kimi-lsp %q: exit %d, stderr %q; want 2 and \"is not a regular file\"", args, r.code, r.stderr)
		}
	}
}

// TestTargetWording: a directory and a line number beyond any int get a
// plain sentence, not a mode string or a parse error.
func TestTargetWording(t *testing.T) {
	dir := goModule(t)
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explain", "sub"}, "sub is a directory: name a file in it"},
		{[]string{"explain", "calc.go:3-99999999999999999999"}, "calc.go:3-99999999999999999999 ends past the end of calc.go"},
		{[]string{"explain", "calc.go:99999999999999999999"}, "calc.go:99999999999999999999 is past the end of calc.go"},
	} {
		r := runBinary(t, testEnv(t), dir, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("kimi-lsp %q: exit %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestRuleFilesNeverReadTheLSPInput is issue 21 items 2 and 3 through the
// real process: a cloned workspace whose .kimi-lsp.toml is a link to
// /dev/stdin (the server's own LSP input), FIFOs as .gitignore,
// sub/.gitignore and .git/info/exclude, and a user config.toml linked to
// /dev/stdin. Each is skipped (and the workspace file's problem told); no
// request is lost, an explain ends, and the process exits after exit.
func TestRuleFilesNeverReadTheLSPInput(t *testing.T) {
	t.Run("link-to-stdin", func(t *testing.T) { ruleFilesNeverBlock(t, false) })
	t.Run("fifo", func(t *testing.T) { ruleFilesNeverBlock(t, true) })
}

// ruleFilesNeverBlock runs the session with .kimi-lsp.toml a link to
// /dev/stdin, or a FIFO (fifo).
func ruleFilesNeverBlock(t *testing.T, fifo bool) {
	srv := modeltest.NewServer(modeltest.Config{Key: "sk-test-rules", Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Content: "It declares package a."},
	}}})
	defer srv.Close()
	dir := t.TempDir()
	wsFile, want := filepath.Join(dir, ".kimi-lsp.toml"), "pointing out of its folder"
	if fifo {
		want = "not a regular file (a FIFO)"
		if err := syscall.Mkfifo(wsFile, 0o644); err != nil {
			t.Fatal(err)
		}
	} else if err := os.Symlink("/dev/stdin", wsFile); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{".gitignore", "sub/.gitignore", ".git/info/exclude"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "sub", "b.go"), []byte("package a\n\nfunc B() {}\n"), 0o644)
	file := filepath.Join(dir, "a.go")
	os.WriteFile(file, []byte("package a\n"), 0o644)
	env := testEnv(t, "KIMI_API_KEY=sk-test-rules", "KIMI_BASE_URL="+srv.URL)
	userFile := filepath.Join(envFunc(env)("XDG_CONFIG_HOME"), "kimi-lsp", "config.toml")
	os.MkdirAll(filepath.Dir(userFile), 0o755)
	if err := os.Symlink("/dev/stdin", userFile); err != nil {
		t.Fatal(err)
	}

	p := start(t, env)
	if _, err := p.ed.Initialize(ctxT(t), lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))); err != nil {
		t.Fatal(err)
	}
	p.ed.Notify("initialized", map[string]any{})
	uri := string(workspace.FileURI(file))
	p.ed.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "package a\n"}})
	rng := map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 9}}
	for i := range 3 { // every request is answered: none of their bytes went to a config reader
		var acts []map[string]any
		if err := p.ed.Call(ctxT(t), "textDocument/codeAction", map[string]any{
			"textDocument": map[string]any{"uri": uri}, "range": rng, "context": map[string]any{"diagnostics": []any{}, "triggerKind": 1},
		}, &acts); err != nil || len(acts) == 0 {
			t.Fatalf("codeAction %d: %v, %d actions", i, err, len(acts))
		}
	}
	if err := p.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.explain", "arguments": []any{map[string]any{"uri": uri, "range": rng}}, "workDoneToken": "t",
	}, nil); err != nil {
		t.Fatal(err)
	}
	end, err := p.ed.WaitMethod(ctxT(t), "$/progress", func(raw json.RawMessage) bool { return strings.Contains(string(raw), `"end"`) })
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(end.Params), "failed") {
		t.Errorf("explain: %s", end.Params)
	}
	if _, err := p.ed.Wait(ctxT(t), func(m *lsptest.Message) bool {
		return strings.HasPrefix(m.Method, "window/") && strings.Contains(string(m.Params), ".kimi-lsp.toml") &&
			strings.Contains(string(m.Params), want)
	}); err != nil {
		t.Errorf("the skipped .kimi-lsp.toml was not reported: %v", err)
	}
	if err := p.ed.Call(ctxT(t), "shutdown", nil, nil); err != nil {
		t.Fatal(err)
	}
	p.ed.Notify("exit", nil)
	if code := p.wait(t); code != 0 {
		t.Errorf("exit code %d; stderr:\n%s", code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), "not a regular file") {
		t.Errorf("the skipped user config was not logged; stderr:\n%s", p.stderr)
	}
}

// TestEditWriteKeepsSetuid is issue 21 item 13 through the command line:
// edit --write keeps a file's setuid and setgid bits.
func TestEditWriteKeepsSetuid(t *testing.T) {
	dir := goModule(t)
	p := filepath.Join(dir, "calc.go")
	want := 0o755 | os.ModeSetuid | os.ModeSetgid
	if err := os.Chmod(p, want); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(p); fi.Mode() != want {
		t.Skipf("chmod cannot set %v here (got %v): the file system or the user's groups do not allow it", want, fi.Mode())
	}
	writeSubtract(t, dir)
	if fi, _ := os.Stat(p); fi.Mode() != want {
		t.Errorf("calc.go is %v after edit --write, want %v", fi.Mode(), want)
	}
}
