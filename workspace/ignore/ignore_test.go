package ignore

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHardExcludesCannotBeNegated(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".gitignore":             "!node_modules/\n!secret/\n!*.bak\n",
		"node_modules/x/a.js":    "",
		"secret/k":               "",
		"src/a.go":               "",
		"src/a.go.bak":           "",
		"vendor/m/m.go":          "",
		"deep/node_modules/b.js": "",
	})
	m := New(root, Options{Excludes: []string{"secret/", "*.bak"}})
	tests := []struct {
		rel   string
		isDir bool
		want  bool
	}{
		{"node_modules", true, true},
		{"node_modules/x/a.js", false, true},
		{"deep/node_modules/b.js", false, true},
		{"secret", true, true},
		{"secret/k", false, true},
		{"src/a.go", false, false},
		{"src/a.go.bak", false, true},
		{"vendor/m/m.go", false, true},
		{".git/config", false, true},
		{"", true, false},
		{".", true, false},
	}
	for _, tt := range tests {
		if got := m.Ignored(tt.rel, tt.isDir); got != tt.want {
			t.Errorf("Ignored(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
	// Without defaults, vendor/ is the project's own business.
	m = New(root, Options{NoDefaults: true})
	if m.Ignored("vendor/m/m.go", false) {
		t.Errorf("with NoDefaults, vendor/m/m.go is ignored")
	}
}

func TestResetRereadsChangedRules(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{".gitignore": "*.tmp\n", "a.tmp": "", "a.txt": ""})
	m := New(root, Options{})
	if !m.Ignored("a.tmp", false) || m.Ignored("a.txt", false) {
		t.Fatalf("before change: a.tmp ignored=%v, a.txt ignored=%v", m.Ignored("a.tmp", false), m.Ignored("a.txt", false))
	}
	if err := os.WriteFile(filepath.Join(root, ".gitignore"), []byte("*.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !m.Ignored("a.tmp", false) {
		t.Errorf("rules were re-read before Reset")
	}
	m.Reset()
	if m.Ignored("a.tmp", false) || !m.Ignored("a.txt", false) {
		t.Errorf("after Reset: a.tmp ignored=%v, a.txt ignored=%v; want false, true", m.Ignored("a.tmp", false), m.Ignored("a.txt", false))
	}
}

func TestIsRuleFile(t *testing.T) {
	for rel, want := range map[string]bool{
		".gitignore": true, "a/b/.gitignore": true, ".git/info/exclude": true,
		"a.gitignore": false, ".gitignore.bak": false, "a/.git/info/exclude": false, "x.go": false,
	} {
		if got := IsRuleFile(rel); got != want {
			t.Errorf("IsRuleFile(%q) = %v, want %v", rel, got, want)
		}
	}
}

func TestListMatch(t *testing.T) {
	l := Compile([]string{"*.pem", "secrets/", "config/prod.*", "!config/prod.example", "# c", "", "   "})
	if l.Len() != 4 {
		t.Fatalf("Len = %d, want 4", l.Len())
	}
	tests := []struct {
		rel  string
		want bool
	}{
		{"a.pem", true},
		{"x/y/a.pem", true},
		{"secrets/a.txt", true},
		{"x/secrets/a.txt", true},
		{"secrets", false}, // a file named secrets: the rule is for directories
		{"config/prod.yaml", true},
		{"config/prod.example", false},
		{"x/config/prod.yaml", false},
		{"a.go", false},
	}
	for _, tt := range tests {
		if got := l.Match(tt.rel, false); got != tt.want {
			t.Errorf("Match(%q) = %v, want %v", tt.rel, got, tt.want)
		}
	}
	var nilList *List
	if nilList.Match("a", false) || nilList.Len() != 0 {
		t.Errorf("nil List matches")
	}
}

func TestParse(t *testing.T) {
	l, err := Parse(strings.NewReader("a\r\nb/\n"), 100)
	if err != nil || l.Len() != 2 {
		t.Fatalf("Parse = %v, %v; want 2 patterns", l.Len(), err)
	}
	_, err = Parse(bytes.NewReader(bytes.Repeat([]byte("x"), 101)), 100)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("Parse of 101 bytes with limit 100: err = %v, want ErrTooLarge", err)
	}
	// One very long line within the limit is fine.
	l, err = Parse(bytes.NewReader(bytes.Repeat([]byte("y"), 100000)), 1<<20)
	if err != nil || l.Len() != 1 {
		t.Errorf("Parse of a long line = %d, %v", l.Len(), err)
	}
}

func TestLooksBinary(t *testing.T) {
	latin1 := []byte("caf\xe9 na\xefve, but mostly ASCII text here")
	utf8Cut := append(bytes.Repeat([]byte("é"), 4000), 0xc3) // cut inside a rune at 8001
	tests := []struct {
		name string
		data []byte
		want bool
	}{
		{"empty", nil, false},
		{"ascii", []byte("package main\n"), false},
		{"utf8", []byte("héllo wörld ✓ 𝄞"), false},
		{"nul", []byte("abc\x00def"), true},
		{"nul late", append(bytes.Repeat([]byte("a"), 7999), 0), true},
		{"nul past sample", append(bytes.Repeat([]byte("a"), 8000), 0), false},
		{"latin1 minority", latin1, false},
		{"invalid majority", bytes.Repeat([]byte{0xff, 0xfe, 'a'}, 100), true},
		{"rune cut by sample", utf8Cut, false},
	}
	for _, tt := range tests {
		if got := LooksBinary(tt.data); got != tt.want {
			t.Errorf("%s: LooksBinary = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func FuzzCompileMatch(f *testing.F) {
	f.Add("*.log\n!keep.log\nbuild/\na/**/b\n[!a]*\n\\#x\n", "a/b/keep.log")
	f.Add("**\n/**/\n!**/\n[\n\\\n", "x")
	f.Add("[a-", "[a-")
	f.Fuzz(func(t *testing.T, patterns, path string) {
		l := Compile(strings.Split(patterns, "\n"))
		l.Match(path, false)
		l.Match(path, true)
		LooksBinary([]byte(patterns))
	})
}

// BenchmarkListMatch: the secret globs' kind of list (names and paths with
// stars, sets, "**") against a path five directories deep, each parent
// checked as Match does.
func BenchmarkListMatch(b *testing.B) {
	l := Compile([]string{".env", ".env.*", "*.pem", "*.key", "id_rsa*", "*.p12", "**/secrets/**", "credentials*.json",
		"*.[jJ][kK][sS]", "**/.aws/credentials", ".netrc", "*.kdbx", "*secret*.y*ml"})
	b.ReportAllocs()
	for b.Loop() {
		if l.Match("src/internal/app/config/settings.go", false) {
			b.Fatal("matched")
		}
	}
}

// TestManyStarsIsBounded: a glob of many star runs against a long name
// that almost matches ends at once (without the failed-position memory,
// backtracking would take exponential time).
func TestManyStarsIsBounded(t *testing.T) {
	l := Compile([]string{strings.Repeat("*a", 30) + "b"})
	if l.Match(strings.Repeat("a", 200), false) {
		t.Fatal("matched")
	}
	if !l.Match(strings.Repeat("a", 200)+"b", false) {
		t.Fatal("did not match")
	}
}
