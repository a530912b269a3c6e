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
			case e.IsDir() && explanationDir().MatchString(e.Name()):
				n++
				inner, _ := os.ReadDir(filepath.Join(dir, e.Name()))
				if len(inner) != 1 || !strings.HasSuffix(inner[0].Name(), ".md") {
					t.Errorf("%s: %s holds %v, want one explanation", when, e.Name(), inner)
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
	// A pruned explanation's directory goes with it.
	entries, _ := os.ReadDir(dir)
	dirs := 0
	for _, e := range entries {
		if e.IsDir() {
			dirs++
		}
	}
	if dirs != 1 {
		t.Errorf("%d explanation directories left, want the newest only", dirs)
	}
}

// TestExplanationTitles: the stored file is named by file and range, and
// two explanations of the same range (changed code) do not share a file.
func TestExplanationTitles(t *testing.T) {
	for _, c := range []struct {
		file       string
		start, end int
		want       string
	}{
		{"cmd/main.go", 16, 30, "main.go L16-30 — explanation"},
		{"a.go", 7, 7, "a.go L7 — explanation"},
		{"a.go", 0, 0, "a.go — explanation"},
	} {
		if got := ExplanationTitle(c.file, c.start, c.end, "explanation"); got != c.want {
			t.Errorf("ExplanationTitle(%q, %d, %d) = %q, want %q", c.file, c.start, c.end, got, c.want)
		}
	}
	x, err := NewExplanations(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	title := ExplanationTitle("main.go", 16, 30, "explanation")
	p1, err1 := x.Store(ExplanationKey("m", "", "main.go", "sel", "v1"), title, "one")
	p2, err2 := x.Store(ExplanationKey("m", "", "main.go", "sel", "v2"), title, "two")
	if err1 != nil || err2 != nil || p1 == p2 || filepath.Base(p1) != title+".md" || filepath.Base(p2) != title+".md" {
		t.Errorf("stored as %q and %q (%v, %v)", p1, p2, err1, err2)
	}
	if b, _ := os.ReadFile(p1); string(b) != "one" {
		t.Errorf("the first explanation was overwritten: %q", b)
	}
	if p, _ := x.Store(ExplanationKey("m", "", "x", "", ""), "../../evil/x", "t"); filepath.Dir(filepath.Dir(p)) != x.dir {
		t.Errorf("a title with slashes was stored at %s", p)
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
	os.MkdirAll(filepath.Dir(x.path(key, "a.go")), 0o700)
	if err := os.Symlink(victim, x.path(key, "a.go")); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Store(key, "a.go", "pwned"); err == nil {
		t.Errorf("Store wrote over a planted link")
	}
	if b, _ := os.ReadFile(victim); string(b) != "untouched" {
		t.Errorf("written through the link: %q", b)
	}
	// The explanation's directory planted as a link out of the store.
	outside := t.TempDir()
	key2 := ExplanationKey("m", "", "b.go", "sel", "text")
	if err := os.Symlink(outside, filepath.Dir(x.path(key2, "b.go"))); err != nil {
		t.Fatal(err)
	}
	if _, err := x.Store(key2, "b.go", "pwned"); err == nil {
		t.Errorf("Store wrote through a planted directory link")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written out of the store: %v", entries)
	}
}
