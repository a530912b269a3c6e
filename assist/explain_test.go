package assist

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExplanationStoreBounded is issue 12 item 18: the store keeps the
// newest MaxExplanations explanations and none older than
// MaxExplanationAge, removes what a killed write left behind, never
// touches other files, and forgets the keys of what it deleted.
func TestExplanationStoreBounded(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	put := func(name string, age time.Duration) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("<!-- x -->\n\nold"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, now.Add(-age), now.Add(-age))
	}
	// A long session's worth: 250 recent explanations, 20 stale ones, a
	// temporary file from a killed write, and a file that is not ours.
	for i := range 250 {
		put(fmt.Sprintf("calc-%012x.md", i), time.Duration(250-i)*time.Minute)
	}
	for i := range 20 {
		put(fmt.Sprintf("old-%012x.md", i), MaxExplanationAge+time.Duration(i+1)*time.Hour)
	}
	put(".calc-000000000001.md.kimi-tmp-abcdef012345", 2*time.Hour)
	put("notes.txt", 400*24*time.Hour)

	x, err := NewExplanations(dir)
	if err != nil {
		t.Fatal(err)
	}
	check := func(when string) []os.DirEntry {
		t.Helper()
		entries, _ := os.ReadDir(dir)
		n := 0
		for _, e := range entries {
			fi, _ := e.Info()
			switch {
			case e.Name() == "notes.txt":
			case strings.HasSuffix(e.Name(), ".md"):
				n++
				if now.Sub(fi.ModTime()) > MaxExplanationAge {
					t.Errorf("%s: %s is older than %v", when, e.Name(), MaxExplanationAge)
				}
			default:
				t.Errorf("%s: %s left behind", when, e.Name())
			}
		}
		if n > MaxExplanations {
			t.Errorf("%s: %d explanations kept, want at most %d", when, n, MaxExplanations)
		}
		if _, err := os.Stat(filepath.Join(dir, "notes.txt")); err != nil {
			t.Errorf("%s: a file that is not an explanation was deleted", when)
		}
		return entries
	}
	check("at open")
	if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("calc-%012x.md", 249))); err != nil {
		t.Errorf("the newest explanation was deleted")
	}
	// Each new explanation pushes the oldest out; a key whose file went is
	// forgotten.
	var keys []string
	for i := range 3 {
		key := ExplanationKey("m", "", "a.go", fmt.Sprint(i), "text")
		keys = append(keys, key)
		if _, err := x.Store(key, "a.go", "explanation "+fmt.Sprint(i)); err != nil {
			t.Fatal(err)
		}
	}
	check("after three more")
	if text, _, ok := x.Lookup(keys[2]); !ok || text != "explanation 2" {
		t.Errorf("Lookup of the newest: %q %v", text, ok)
	}
	x.maxFiles = 1
	x.Store(ExplanationKey("m", "", "b.go", "", ""), "b.go", "newest")
	if _, _, ok := x.Lookup(keys[0]); ok || len(x.known) != 1 {
		t.Errorf("keys of deleted explanations kept: %d known", len(x.known))
	}
}

// TestExplanationStoreConfined: a link planted in the store at an
// explanation's name is not written through.
func TestExplanationStoreConfined(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("untouched"), 0o600)
	x, err := NewExplanations(dir)
	if err != nil {
		t.Fatal(err)
	}
	key := ExplanationKey("m", "", "a.go", "sel", "text")
	os.Symlink(victim, x.path(key, "a.go"))
	if _, err := x.Store(key, "a.go", "pwned"); err == nil {
		t.Errorf("Store wrote over a planted link")
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Errorf("written through the link: %q", b)
	}
}
