package cachetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// GoSource returns the text of a file of the Go tree that runs the test,
// by its path under GOROOT/src ("net/http/cookie.go"): real-size files
// the tests of prompts and next edits measure and edit.
func GoSource(t testing.TB, rel string) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "src", filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// ReplaceOnce replaces the first old in text by neu, failing the test when
// text holds no old (an edit the test makes to such a file must happen).
func ReplaceOnce(t testing.TB, text, old, neu string) string {
	t.Helper()
	if !strings.Contains(text, old) {
		t.Fatalf("no %q in the text", old)
	}
	return strings.Replace(text, old, neu, 1)
}
