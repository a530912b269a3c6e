package config

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestVerifyKeys(t *testing.T) {
	d := Default()
	if d.Verify.Enable != VerifyAuto || d.Verify.OnNewErrors != OnNewErrorsRepair || d.Verify.IdleMinutes != 10 || d.Verify.Servers != nil {
		t.Errorf("defaults: got %+v", d.Verify)
	}
	dir := t.TempDir()
	user := writeFile(t, dir, "config.toml", `
[verify]
enable = "off"
onNewErrors = "ask"
idleMinutes = 3
[verify.servers]
go = "gopls -remote=auto"
python = ["basedpyright-langserver", "--stdio"]
rust = ""
`)
	c, errs := Load(nil, user)
	mustNoErrors(t, errs)
	v := c.Verify
	if v.Enable != VerifyOff || v.OnNewErrors != OnNewErrorsAsk || v.IdleMinutes != 3 {
		t.Errorf("got %+v", v)
	}
	if !slices.Equal(v.Servers["go"], []string{"gopls", "-remote=auto"}) || !slices.Equal(v.Servers["python"], []string{"basedpyright-langserver", "--stdio"}) {
		t.Errorf("servers: got %q", v.Servers)
	}
	if cmd, ok := v.Servers["rust"]; !ok || len(cmd) != 0 {
		t.Errorf("rust = \"\" must be an empty command (off for Rust), got %q, %v", cmd, ok)
	}
	bad := writeFile(t, dir, "bad.toml", "[verify]\nonNewErrors = \"maybe\"\nidleMinutes = 0\n")
	if _, errs := Load(nil, bad); !HasErrors(errs) || len(errs) != 2 {
		t.Errorf("want two errors, got %v", errs)
	}
}

// TestWorkspaceFileCannotChooseHelpers: a cloned repository's
// .kimi-lsp.toml may not name a program for kimi-lsp to run; it may set
// the other verify keys.
func TestWorkspaceFileCannotChooseHelpers(t *testing.T) {
	dir := t.TempDir()
	ws := writeFile(t, dir, WorkspaceFileName, `
[verify]
onNewErrors = "apply"
[verify.servers]
go = "/tmp/evil --stdio"
`)
	c, errs := Default().WithWorkspaceFiles(ws)
	if HasErrors(errs) {
		t.Fatalf("want warnings only, got %v", errs)
	}
	var warned bool
	for _, err := range errs {
		var p *Problem
		if errors.As(err, &p) && p.Warning && p.Key == "verify.servers" && strings.Contains(err.Error(), "must not choose a program") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("want a warning for verify.servers, got %v", errs)
	}
	if c.Verify.Servers != nil {
		t.Errorf("a workspace file set verify.servers: %q", c.Verify.Servers)
	}
	if c.Verify.OnNewErrors != OnNewErrorsApply {
		t.Errorf("onNewErrors from the workspace file: got %q", c.Verify.OnNewErrors)
	}
}

// TestEditorVerifySection: the verify table as the VS Code extension
// sends it (kimi.verify.* settings, in initializationOptions and
// didChangeConfiguration) sets the keys, editor settings over a user
// file, verify.servers included: the server trusts editor settings for
// it, so the extension reads kimi.verify.servers from User settings only.
// An editor section without verify gives the user file's values back.
func TestEditorVerifySection(t *testing.T) {
	user := writeFile(t, t.TempDir(), "config.toml", "[verify]\nenable = \"off\"\nidleMinutes = 3\n")
	c, errs := Load(nil, user)
	mustNoErrors(t, errs)
	sent := `{"kimi": {"verify": {"enable": "auto", "onNewErrors": "refuse", "idleMinutes": 2, "servers": {"python": ["basedpyright-langserver", "--stdio"], "rust": ""}}}}`
	e, errs := c.WithEditor([]byte(sent))
	mustNoErrors(t, errs)
	v := e.Verify
	if v.Enable != VerifyAuto || v.OnNewErrors != OnNewErrorsRefuse || v.IdleMinutes != 2 {
		t.Errorf("got %+v", v)
	}
	if cmd, ok := v.Servers["rust"]; !ok || len(cmd) != 0 || !slices.Equal(v.Servers["python"], []string{"basedpyright-langserver", "--stdio"}) {
		t.Errorf("servers: got %q", v.Servers)
	}
	if src := e.srcOf("verify.servers"); src.Kind != FromEditor {
		t.Errorf("verify.servers from %v, want the editor settings", src)
	}
	back, errs := e.WithEditor([]byte(`{"kimi": {"model": "m"}}`))
	mustNoErrors(t, errs)
	if back.Verify.Enable != VerifyOff || back.Verify.IdleMinutes != 3 || back.Verify.Servers != nil {
		t.Errorf("after the editor dropped verify: got %+v", back.Verify)
	}
}
