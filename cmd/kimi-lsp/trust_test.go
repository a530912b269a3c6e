package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// onRequest is a modeltest request log that calls fn with the number of
// each request (from 1) as it arrives, before it is answered: a hook for
// "the user does something while the model runs".
type onRequest struct {
	mu sync.Mutex
	n  int
	fn func(n int)
}

func (o *onRequest) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n++
	o.fn(o.n)
	return len(p), nil
}

// calcText is calc.go of goModule.
const calcText = "package m\n\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n"

// subtractDiff is the model's answer to "make it subtract".
const subtractDiff = "```diff\n--- a/calc.go\n+++ b/calc.go\n@@ -3,3 +3,3 @@\n func Sub(a, b int) int {\n-\treturn a + b\n+\treturn a - b\n }\n```"

// writeSubtract runs the real binary's edit --write on dir's calc.go with
// the model answering subtractDiff, and checks that it succeeded.
func writeSubtract(t *testing.T, dir string) {
	t.Helper()
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Match: `action="rewrite"`, Content: subtractDiff}}}})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	r := runBinary(t, env, dir, "edit", "calc.go:3-5", "-m", "make it subtract", "--write")
	if r.code == -1 {
		t.Fatalf("edit --write hangs (killed after a minute); stderr:\n%s", r.stderr)
	}
	if r.code != 0 {
		t.Fatalf("edit --write: code %d: %s", r.code, r.stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); string(b) != strings.Replace(calcText, "a + b", "a - b", 1) {
		t.Errorf("calc.go after --write:\n%s", b)
	}
}

// TestEditWriteIgnoresPlantedTempLink is issue 12 item 1: a repository that
// ships calc.go.kimi-tmp as a symbolic link to a file elsewhere does not
// get that file overwritten by edit --write, and calc.go stays a regular
// file.
func TestEditWriteIgnoresPlantedTempLink(t *testing.T) {
	dir := goModule(t)
	victim := filepath.Join(t.TempDir(), "victim.txt")
	os.WriteFile(victim, []byte("not yours\n"), 0o644)
	if err := os.Symlink(victim, filepath.Join(dir, "calc.go.kimi-tmp")); err != nil {
		t.Fatal(err)
	}
	writeSubtract(t, dir)
	if b, _ := os.ReadFile(victim); string(b) != "not yours\n" {
		t.Errorf("the file the planted link points to was overwritten: %q", b)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "calc.go")); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("calc.go is no longer a regular file (%v)", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".kimi-") && e.Name() != "calc.go.kimi-tmp" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

// toolEditRules are a two-round tool conversation: round 1 edits calc.go
// (and, with more calls, other files) with replace_text; round 2, after
// the tool results, says it is done.
func toolEditRules(calls ...modeltest.ScriptToolCall) []modeltest.Rule {
	return []modeltest.Rule{
		{Match: `action="rewrite"`, Times: 1, Reasoning: "Edit with the tools.", ToolCalls: calls},
		{LastRole: "tool", Content: "Done."},
	}
}

var subtractCall = modeltest.ScriptToolCall{Name: "replace_text", Arguments: `{"path":"calc.go","old_text":"return a + b","new_text":"return a - b"}`}

// TestEditWriteRebasesDiskChange is issue 12 item 2: a line the user
// appends to the file while the model is in its second round survives
// --write (the edit is rebased onto it); a change to the lines the edit
// changes makes --write refuse with nothing written.
func TestEditWriteRebasesDiskChange(t *testing.T) {
	for _, tc := range []struct {
		name     string
		userText string // what the user saves during round 2
		code     int
		want     string // calc.go at the end
		stderr   string
	}{
		{"apart", calcText + "\n// Added by the user.\n", 0,
			strings.Replace(calcText, "a + b", "a - b", 1) + "\n// Added by the user.\n", "changed on disk while the model ran; the edit was applied on top"},
		{"same lines", strings.Replace(calcText, "a + b", "b + a", 1), 1,
			strings.Replace(calcText, "a + b", "b + a", 1), "nothing was written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := goModule(t)
			file := filepath.Join(dir, "calc.go")
			hook := &onRequest{fn: func(n int) {
				if n == 2 { // round 2: the tool already read calc.go
					os.WriteFile(file, []byte(tc.userText), 0o644)
				}
			}}
			srv := modeltest.NewServer(modeltest.Config{RequestLog: hook, Script: &modeltest.Script{Rules: toolEditRules(subtractCall)}})
			defer srv.Close()
			env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
			r := runBinary(t, env, dir, "edit", "calc.go", "-m", "make it subtract", "--write")
			code, stderr := r.code, r.stderr
			if len(srv.Requests()) != 2 {
				t.Fatalf("%d model requests, want 2; stderr: %s", len(srv.Requests()), stderr)
			}
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("code %d, stderr %q; want code %d and %q", code, stderr, tc.code, tc.stderr)
			}
			if b, _ := os.ReadFile(file); string(b) != tc.want {
				t.Errorf("calc.go:\n%s\nwant:\n%s", b, tc.want)
			}
		})
	}
}

// TestEditWriteAllOrNothing is issue 12 item 3: an edit of two files whose
// second file cannot be written (it became a directory while the model
// ran) leaves the first file unchanged too, and leaves nothing behind.
func TestEditWriteAllOrNothing(t *testing.T) {
	dir := goModule(t)
	util := filepath.Join(dir, "sub", "util.go")
	os.MkdirAll(filepath.Dir(util), 0o755)
	os.WriteFile(util, []byte("package sub\n\nconst Version = 1\n"), 0o644)
	hook := &onRequest{fn: func(n int) {
		if n == 2 {
			os.Remove(util)
			os.Mkdir(util, 0o755)
		}
	}}
	srv := modeltest.NewServer(modeltest.Config{RequestLog: hook, Script: &modeltest.Script{Rules: toolEditRules(subtractCall,
		modeltest.ScriptToolCall{Name: "replace_text", Arguments: `{"path":"sub/util.go","old_text":"Version = 1","new_text":"Version = 2"}`})}})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	r := runBinary(t, env, dir, "edit", "calc.go", "-m", "make it subtract", "--write")
	code, stderr := r.code, r.stderr
	if code != 1 || !strings.Contains(stderr, "nothing was written") {
		t.Errorf("code %d, stderr %q; want 1 and \"nothing was written\"", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); string(b) != calcText {
		t.Errorf("calc.go was changed though sub/util.go could not be:\n%s", b)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(d.Name(), ".kimi-") {
			t.Errorf("left behind: %s", p)
		}
		return nil
	})
}

// TestExplainRefusesLinkToSecret is issue 12 item 4 on the command line:
// envlink.txt → .env is a secret file; nothing reaches the provider.
func TestExplainRefusesLinkToSecret(t *testing.T) {
	dir := goModule(t)
	os.WriteFile(filepath.Join(dir, ".env"), []byte("API_TOKEN=sk-live-MUST-NOT-LEAK\n"), 0o600)
	os.Symlink(".env", filepath.Join(dir, "envlink.txt"))
	srv := modeltest.NewServer(modeltest.Config{})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	r := runBinary(t, env, dir, "explain", "envlink.txt")
	code, out, stderr := r.code, r.stdout, r.stderr
	if code == 0 || !strings.Contains(stderr, "secret") {
		t.Errorf("explain envlink.txt: code %d, stderr %q; want a refusal saying the file is secret", code, stderr)
	}
	if len(srv.Requests()) != 0 || strings.Contains(out, "MUST-NOT-LEAK") {
		t.Errorf("the secret reached the provider (%d requests)", len(srv.Requests()))
	}
}
