package ignore

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"
)

// FuzzAgainstGit is a differential test: a random root .gitignore, a
// random a/.gitignore and random paths, with Matcher.Ignored held to what
// `git check-ignore` says about every file and directory of the tree.
// Paths are made of a small alphabet (with the glob and escape characters)
// so that the patterns meet them often.
func FuzzAgainstGit(f *testing.F) {
	if _, err := exec.LookPath("git"); err != nil {
		f.Fatalf("git is required for this test: %v", err)
	}
	for _, c := range gitCases {
		var paths []string
		for p := range c.files {
			if !strings.HasPrefix(p, ".git") && !strings.HasSuffix(p, IgnoreFile) {
				paths = append(paths, p)
			}
		}
		f.Add([]byte(c.files[IgnoreFile]), []byte(c.files["a/"+IgnoreFile]), []byte(strings.Join(paths, "\n")))
	}
	f.Add([]byte("a**/b\n[]a]x\n[!]]y\n*[[:digit:]]\n\\ \\\nq[\n"), []byte("!b\n/x/**\n"), []byte("a/b\nab/c/b\n]x\nay\n]y\nf7\nq[\na/x/y/z\na/b/c"))
	f.Add([]byte("[a-c-e]\n[\\]-a]\n[[:alpha:]-z]\n[[:nope:]]\n[[:ab]\n#c\n\\#c\n  \n!\n/\n"), []byte(""), []byte("a\nd\n-\ne\n]\n^\n[\n#c\nc\nx\na/-"))
	f.Fuzz(func(t *testing.T, root, sub, rawPaths []byte) {
		if len(root)+len(sub) > 1024 || len(rawPaths) > 1024 {
			return
		}
		files := map[string]string{IgnoreFile: string(root), "a/" + IgnoreFile: string(sub)}
		for _, p := range strings.Split(string(rawPaths), "\n") {
			if p = fuzzPath(p); p != "" {
				files[p] = ""
			}
		}
		if fileIsDir(files) {
			return
		}
		agreeWithGit(t, "", files)
	})
}

// fileIsDir reports whether one path of files is also a directory of
// another, which no tree can hold.
func fileIsDir(files map[string]string) bool {
	for p := range files {
		for q := range files {
			if strings.HasPrefix(q, p+"/") {
				return true
			}
		}
	}
	return false
}

// agreeWithGit writes files to a new tree and holds the matcher to what
// `git check-ignore` says of every file and directory in it; label
// prefixes each error, which shows both .gitignore files.
func agreeWithGit(t *testing.T, label string, files map[string]string) {
	t.Helper()
	dir := t.TempDir()
	paths := writeTree(t, dir, files)
	want := gitCheckIgnore(t, dir, paths)
	m := New(dir, Options{NoDefaults: true})
	for _, p := range paths {
		isDir := strings.HasSuffix(p, "/")
		rel := strings.TrimSuffix(p, "/")
		w, ok := want[rel]
		if !ok {
			t.Fatalf("%sgit check-ignore said nothing about %q", label, rel)
		}
		if got := m.Ignored(rel, isDir); got != w {
			t.Errorf("%sIgnored(%q, dir=%v) = %v, git check-ignore says %v\nroot .gitignore %q\na/.gitignore %q",
				label, rel, isDir, got, w, files[IgnoreFile], files["a/"+IgnoreFile])
		}
	}
}

// fuzzPath turns fuzz bytes into a relative path of at most 4 elements
// over a small alphabet; "" for none.
func fuzzPath(raw string) string {
	const alphabet = `ab.x-_[]!*?\ #^:7A`
	var elems []string
	var cur []byte
	flush := func() {
		if e := string(cur); e != "" && e != "." && e != ".." && e != ".git" && e != IgnoreFile {
			elems = append(elems, e)
		}
		cur = cur[:0]
	}
	for i := 0; i < len(raw) && len(elems) < 4; i++ {
		if raw[i] == '/' {
			flush()
			continue
		}
		if len(cur) < 8 {
			cur = append(cur, alphabet[int(raw[i])%len(alphabet)])
		}
	}
	flush()
	return strings.Join(elems, "/")
}

// gitCheckIgnore runs `git check-ignore` in a new repository at dir over
// paths (directories with a trailing slash) and returns which are ignored.
func gitCheckIgnore(t *testing.T, dir string, paths []string) map[string]bool {
	t.Helper()
	run := func(stdin []byte, args ...string) []byte {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = gitEnv(dir)
		cmd.Stdin = bytes.NewReader(stdin)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
				t.Fatalf("git %v: %v\n%s", args, err, stderr.Bytes())
			}
		}
		return out
	}
	run(nil, "init", "-q", ".")
	var in bytes.Buffer
	for _, p := range paths {
		// "./": a path starting with ":" is no pathspec magic.
		in.WriteString("./" + strings.TrimSuffix(p, "/") + "\x00")
	}
	out := run(in.Bytes(), "check-ignore", "--stdin", "-z", "-v", "-n")
	fields := strings.Split(string(out), "\x00")
	want := map[string]bool{}
	for i := 0; i+3 < len(fields); i += 4 {
		src, pattern, path := fields[i], fields[i+2], fields[i+3]
		want[strings.TrimPrefix(path, "./")] = src != "" && !strings.HasPrefix(pattern, "!")
	}
	return want
}

var randomRounds = flag.Int("ignore.rounds", 40, "rounds of TestRandomAgainstGit")

// TestRandomAgainstGit is FuzzAgainstGit's generated counterpart: patterns
// built from the constructs that are easy to get wrong ("**" in every
// position, sets, classes, ranges, escapes, negation, anchoring, trailing
// slashes and spaces), over trees whose names are made of the same pieces,
// each round held to `git check-ignore`. The seed is fixed; -ignore.rounds
// runs more of them.
func TestRandomAgainstGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is required for this test: %v", err)
	}
	r := rand.New(rand.NewPCG(11, uint64(*randomRounds)))
	pieces := []string{"a", "b", "ab", "x", "*", "**", "?", "[ab]", "[!a]", "[^b]", "[a-c]", "[]a]", "[[:alpha:]]",
		"[[:digit:]]", "[[:punct:]]", `\*`, `\?`, `\[`, `\ `, "#", "!", ".", "-", "[", "]", "7", "[:", ":]"}
	names := []string{"a", "b", "ab", "x", "a.b", "*", "?", "[", "]", "-", "7", "#a", "!a", "ba", "aab", "x7", " a", "a ", ":"}
	pattern := func() string {
		var b strings.Builder
		if r.IntN(6) == 0 {
			b.WriteString("!")
		}
		if r.IntN(4) == 0 {
			b.WriteString("/")
		}
		n := 1 + r.IntN(3)
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteString("/")
			}
			for j := 1 + r.IntN(2); j > 0; j-- {
				b.WriteString(pieces[r.IntN(len(pieces))])
			}
		}
		if r.IntN(4) == 0 {
			b.WriteString("/")
		}
		if r.IntN(8) == 0 {
			b.WriteString(" ")
		}
		return b.String()
	}
	list := func() string {
		var lines []string
		for i := r.IntN(6); i >= 0; i-- {
			lines = append(lines, pattern())
		}
		return strings.Join(lines, "\n") + "\n"
	}
	for round := 0; round < *randomRounds; round++ {
		files := map[string]string{IgnoreFile: list(), "a/" + IgnoreFile: list()}
		for i := 0; i < 12; i++ {
			var elems []string
			for j := 1 + r.IntN(3); j > 0; j-- {
				elems = append(elems, names[r.IntN(len(names))])
			}
			files[strings.Join(elems, "/")] = ""
		}
		if fileIsDir(files) {
			continue
		}
		agreeWithGit(t, fmt.Sprintf("round %d: ", round), files)
	}
}
