//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestEditWriteIgnoresPlantedFIFO is issue 12 item 1: a FIFO at the old
// fixed temporary name made edit --write hang forever; the confined writer
// never opens an existing name for writing.
func TestEditWriteIgnoresPlantedFIFO(t *testing.T) {
	dir := editWorkspace(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "calc.go.kimi-tmp"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{{Match: `action="rewrite"`, Content: subtractDiff}}}})
	defer srv.Close()
	env := testEnv(t, "KIMI_API_KEY="+srv.Key, "KIMI_BASE_URL="+srv.URL)
	code, _, stderr := runBinary(t, env, dir, "edit", "calc.go:3-5", "-m", "make it subtract", "--write")
	if code != 0 {
		t.Fatalf("edit --write: code %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "calc.go")); string(b) != strings.Replace(calcText, "a + b", "a - b", 1) {
		t.Errorf("calc.go after --write:\n%s", b)
	}
}
