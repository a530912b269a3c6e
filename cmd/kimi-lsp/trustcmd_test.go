package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
)

// TestTrustCommand (#30.1): kimi-lsp trust DIR adds the folder, its links
// resolved, to trust.folders in the user file and keeps the file's other
// settings; untrust removes it; doctor says which it is and what that
// changes.
func TestTrustCommand(t *testing.T) {
	env := testEnv(t)
	getenv := envFunc(env)
	userConfig(t, env, "# my settings\nmodel = \"kimi-k3\"\n")
	repo := filepath.Join(t.TempDir(), "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(repo, link); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(repo)
	cli := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &errOut, getenv)
		return code, out.String(), errOut.String()
	}
	userFile := config.UserFilePath(getenv)
	load := func() config.Config {
		c, errs := config.Load(nil, userFile)
		if config.HasErrors(errs) {
			t.Fatalf("the user file no longer loads: %v", errs)
		}
		return c
	}
	if code, out, _ := cli("doctor", "--offline", "--dir", repo); !strings.Contains(out, real+" is untrusted: ") || code != 0 {
		t.Errorf("doctor before trust (exit %d) does not say the folder is untrusted:\n%s", code, out)
	}
	if code, out, errOut := cli("trust", link); code != 0 || !strings.Contains(out, "trusted "+real) {
		t.Fatalf("trust: exit %d, %q %q", code, out, errOut)
	}
	c := load()
	if ok, _ := c.TrustOf(filepath.Join(repo, "sub")); !ok || c.Model != "kimi-k3" {
		t.Errorf("after trust: folders %q, model %q", c.Trust.Folders, c.Model)
	}
	text, _ := os.ReadFile(userFile)
	if !strings.HasPrefix(string(text), "# my settings\nmodel = \"kimi-k3\"\n") {
		t.Errorf("trust rewrote the user's own lines:\n%s", text)
	}
	if code, out, _ := cli("trust", repo); code != 0 || !strings.Contains(out, "trusted already") {
		t.Errorf("trust again: exit %d, %q", code, out)
	}
	if code, out, _ := cli("doctor", "--offline", "--dir", repo); !strings.Contains(out, "trust.folders: "+real) || code != 0 {
		t.Errorf("doctor after trust does not say the folder is trusted:\n%s", out)
	}
	if code, _, errOut := cli("untrust", filepath.Join(repo, "missing")); code == 0 || !strings.Contains(errOut, "untrust that folder instead") {
		t.Errorf("untrust below a trusted folder: exit %d, %q", code, errOut)
	}
	if code, out, errOut := cli("untrust", repo); code != 0 || !strings.Contains(out, "untrusted "+real) {
		t.Fatalf("untrust: exit %d, %q %q", code, out, errOut)
	}
	if c := load(); len(c.Trust.Folders) != 0 || c.Model != "kimi-k3" {
		t.Errorf("after untrust: folders %q, model %q", c.Trust.Folders, c.Model)
	}
	if code, _, errOut := cli("trust", filepath.Join(repo, "nope")); code == 0 || !strings.Contains(errOut, "name a folder to trust") {
		t.Errorf("trust of a missing folder: exit %d, %q", code, errOut)
	}
}
