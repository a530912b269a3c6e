package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTrustOnlyFromTheUser (#30.1): trust.folders comes from the user file
// only and workspaceTrusted from the editor only; a workspace file, the
// environment or the editor's settings trusting a folder is ignored with a
// warning.
func TestTrustOnlyFromTheUser(t *testing.T) {
	dir := t.TempDir()
	repo := filepath.Join(dir, "repo")
	if err := os.Mkdir(repo, 0o755); err != nil {
		t.Fatal(err)
	}
	user := writeFile(t, dir, "config.toml", "[trust]\nfolders = [\""+repo+"\", \""+repo+"\"]\n")
	c, errs := Load(nil, user)
	mustNoErrors(t, errs)
	if len(c.Trust.Folders) != 1 || c.Trust.Folders[0] != repo {
		t.Fatalf("trust.folders from the user file: got %q, want [%q]", c.Trust.Folders, repo)
	}
	if ok, why := c.TrustOf(filepath.Join(repo, "sub")); !ok || !strings.Contains(why, repo) {
		t.Errorf("a folder below a trusted one: got %v %q", ok, why)
	}

	warnedAbout := func(errs []error, key string) bool {
		for _, err := range errs {
			if p, ok := err.(*Problem); ok && p.Warning && p.Key == key {
				return true
			}
		}
		return false
	}
	other := filepath.Join(dir, "other")
	ws := writeFile(t, repo, WorkspaceFileName, "workspaceTrusted = true\n[trust]\nfolders = [\""+other+"\", \"/\"]\n")
	cw, errs := Default().WithWorkspaceFiles(ws)
	if HasErrors(errs) || !warnedAbout(errs, "trust") && !warnedAbout(errs, "trust.folders") || !warnedAbout(errs, "workspaceTrusted") {
		t.Errorf("a workspace file trusting folders: want warnings for trust and workspaceTrusted, got %v", errs)
	}
	if cw.Trusts([]string{other}) || cw.Trusts([]string{repo}) || cw.Trust.Editor {
		t.Errorf("a workspace file made a folder trusted: %+v", cw.Trust)
	}

	ce, errs := Default().WithEditor(json.RawMessage(`{"kimi": {"trust": {"folders": ["/"]}}}`))
	if !warnedAbout(errs, "trust.folders") || len(ce.Trust.Folders) != 0 {
		t.Errorf("editor settings setting trust.folders: got %q, %v", ce.Trust.Folders, errs)
	}
	userEditor := writeFile(t, dir, "editor.toml", "workspaceTrusted = true\n")
	cu, errs := Load(nil, userEditor)
	if !warnedAbout(errs, "workspaceTrusted") || cu.Trust.Editor {
		t.Errorf("the user file setting workspaceTrusted: got %v, %v", cu.Trust.Editor, errs)
	}
	cv, errs := Default().WithInitOptions(json.RawMessage(`{"kimi": {"workspaceTrusted": true}}`))
	mustNoErrors(t, errs)
	if !cv.Trusts([]string{other}) {
		t.Error("the editor's workspaceTrusted did not trust its folder")
	}
	if ok, why := cv.TrustOf(other); !ok || why != "trusted by the editor" {
		t.Errorf("TrustOf: got %v %q", ok, why)
	}
	if cv.Trusts(nil) {
		t.Error("no folder at all must not count as trusted")
	}
}

// TestTrustOf: a folder is trusted when it is a trusted folder or below
// one, after symbolic links; a sibling sharing a prefix, a parent, and a
// link inside a trusted folder that leads out are not.
func TestTrustOf(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"trusted/sub", "trustedness", "elsewhere"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	trusted := filepath.Join(dir, "trusted")
	if err := os.Symlink(filepath.Join(dir, "elsewhere"), filepath.Join(trusted, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(trusted, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	var c Config
	c.Trust.Folders = []string{trusted}
	for _, tc := range []struct {
		dir  string
		want bool
	}{
		{trusted, true},
		{filepath.Join(trusted, "sub"), true},
		{filepath.Join(dir, "link", "sub"), true},
		{filepath.Join(dir, "trustedness"), false},
		{dir, false},
		{filepath.Join(trusted, "out"), false},
		{filepath.Join(trusted, "sub", ".."), true},
	} {
		if got, why := c.TrustOf(tc.dir); got != tc.want {
			t.Errorf("TrustOf(%s) = %v (%s), want %v", tc.dir, got, why, tc.want)
		}
	}
	if c.Trusts([]string{trusted, filepath.Join(dir, "elsewhere")}) {
		t.Error("Trusts with one untrusted folder must be false")
	}
	if _, err := TrustPath("relative/dir", "/home/u"); err == nil {
		t.Error("a relative trust path must be refused")
	}
	if got, err := TrustPath("~/src/", "/home/u"); err != nil || got != "/home/u/src" {
		t.Errorf("TrustPath(~/src/) = %q, %v", got, err)
	}
}

// TestWorkspaceFileOnlyTurnsVerifyOff (#30.3): the user file says off and
// the repository's says auto: off; the repository may turn it off.
func TestWorkspaceFileOnlyTurnsVerifyOff(t *testing.T) {
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", "[verify]\nenable = \"off\"\n")
	ws := writeFile(t, dir, WorkspaceFileName, "[verify]\nenable = \"auto\"\n")
	c, errs := Load(nil, user)
	mustNoErrors(t, errs)
	c, errs = c.WithWorkspaceFiles(ws)
	if c.Verify.Enable != VerifyOff {
		t.Errorf("a workspace file turned verification on: %q", c.Verify.Enable)
	}
	var warned bool
	for _, err := range errs {
		warned = warned || strings.Contains(err.Error(), "verify.enable")
	}
	if !warned {
		t.Errorf("no warning about verify.enable: %v", errs)
	}
	off := writeFile(t, t.TempDir(), WorkspaceFileName, "[verify]\nenable = \"off\"\n")
	c, errs = Default().WithWorkspaceFiles(off)
	mustNoErrors(t, errs)
	if c.Verify.Enable != VerifyOff {
		t.Errorf("a workspace file could not turn verification off: %q", c.Verify.Enable)
	}
}
