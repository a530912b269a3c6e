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
