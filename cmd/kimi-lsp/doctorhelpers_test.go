package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDoctorListsHelpers (#33 item 12): doctor lists, per language, the
// helper that will check edits — the real gopls with its path and version
// — and says what is missing and how to get it; a program of the folder's
// own on PATH is not listed (a check would not run it either), and the
// defaults are behind --all.
func TestDoctorListsHelpers(t *testing.T) {
	gopls, err := exec.LookPath("gopls")
	if err != nil {
		t.Fatal("gopls is not on PATH: the verification tests need it (.ci/run installs it)")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The folder's own "clangd", first on PATH, prints a version when run.
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	if err := os.WriteFile(filepath.Join(bin, "clangd"), []byte("#!/bin/sh\necho hostile clangd 99\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := bin + string(os.PathListSeparator) + filepath.Dir(gopls)
	env := testEnv(t)
	for i, kv := range env {
		if strings.HasPrefix(kv, "PATH=") {
			env[i] = "PATH=" + path
		}
	}
	var out, errb bytes.Buffer
	run(context.Background(), []string{"doctor", "--offline", "--dir", dir}, nil, &out, &errb, envFunc(env))
	text := out.String()
	if !strings.Contains(text, "  go: gopls ("+gopls+", golang.org/x/tools/gopls v") {
		t.Errorf("doctor does not name gopls's path and version:\n%s", text)
	}
	if strings.Contains(text, "hostile") || strings.Contains(text, filepath.Join(bin, "clangd")) {
		t.Errorf("doctor lists (or ran) the folder's own clangd:\n%s", text)
	}
	if !strings.Contains(text, "python: not checked: no pyright-langserver or basedpyright-langserver found on PATH (npm install --global pyright)") {
		t.Errorf("doctor does not say pyright is missing and how to get it:\n%s", text)
	}
	if strings.Contains(text, "(from default)") || !strings.Contains(text, "settings at their defaults (kimi-lsp doctor --all lists them)") {
		t.Errorf("doctor lists the defaults without --all:\n%s", text)
	}
	out.Reset()
	run(context.Background(), []string{"doctor", "--offline", "--all", "--dir", dir}, nil, &out, &errb, envFunc(env))
	if !strings.Contains(out.String(), `cacheTTL = "5m" (from default)`) {
		t.Errorf("doctor --all does not list the defaults:\n%s", out.String())
	}
}
