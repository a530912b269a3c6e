package ignore

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// gitCase is a real tree: files (with their contents; .gitignore files and
// .git/info/exclude included) whose every file and directory is checked
// against `git check-ignore`. A content "symlink:TARGET" makes the file a
// symbolic link to TARGET.
type gitCase struct {
	name  string
	files map[string]string
}

var gitCases = []gitCase{
	{"basic", map[string]string{
		".gitignore": "*.log\nbuild/\n/root-only.txt\n!important.log\n",
		"a.log":      "", "important.log": "", "sub/b.log": "", "sub/important.log": "",
		"build/out.bin": "", "sub/build/x.o": "", "root-only.txt": "", "sub/root-only.txt": "", "main.go": "",
	}},
	{"nested-override", map[string]string{
		".gitignore": "*.txt\n", "sub/.gitignore": "!keep.txt\n",
		"a.txt": "", "sub/keep.txt": "", "sub/other.txt": "", "keep.txt": "", "sub/deeper/keep.txt": "",
	}},
	{"no-reinclude-under-excluded-dir", map[string]string{
		".gitignore": "out/\n!out/keep.txt\n", "out/keep.txt": "", "out/x.txt": "",
	}},
	{"reinclude-with-star", map[string]string{
		".gitignore": "out/*\n!out/keep.txt\n", "out/keep.txt": "", "out/x.txt": "", "out/d/y.txt": "",
	}},
	{"doublestar", map[string]string{
		".gitignore": "**/gen\na/**/b\nlogs/**\n**/tmp/*.o\n",
		"gen/x":      "", "p/q/gen/y": "", "a/b": "", "a/x/b": "", "a/x/y/b": "",
		"logs/one": "", "logs/sub/two": "", "z/tmp/k.o": "", "tmp/k.o": "", "tmp/k.c": "",
	}},
	{"doublestar-backtrack", map[string]string{
		".gitignore": "a/**/b/c\n", "a/b/x/b/c": "", "a/b/c": "", "a/q/b/c": "", "a/b/x/c": "",
	}},
	{"classes", map[string]string{
		".gitignore": "[!a]*.c\n[a-c].md\n?.go\n[^x]y.txt\n",
		"a1.c":       "", "b1.c": "", "a.md": "", "d.md": "", "x.go": "", "xy.go": "", "zy.txt": "", "xy.txt": "",
	}},
	{"escapes-and-spaces", map[string]string{
		".gitignore": "\\#hash\n\\!bang\ntrail \n# comment\n\n",
		"#hash":      "", "!bang": "", "trail": "", "# comment": "", "hash": "",
	}},
	{"dir-only", map[string]string{
		".gitignore": "logs/\n", "logs/a": "", "sub/logs": "", "sub/logs2/logs/b": "",
	}},
	{"middle-slash-anchored", map[string]string{
		".gitignore": "doc/frotz\n", "doc/frotz": "", "a/doc/frotz": "", "doc/frotz2": "",
	}},
	{"info-exclude", map[string]string{
		".git/info/exclude": "*.secret\n", ".gitignore": "!ok.secret\n",
		"a.secret": "", "ok.secret": "", "d/b.secret": "",
	}},
	{"nested-anchored", map[string]string{
		"sub/.gitignore": "/x\ny/z\n", "sub/x": "", "sub/a/x": "", "x": "", "sub/y/z": "", "sub/q/y/z": "",
	}},
	{"whitelist-idiom", map[string]string{
		".gitignore": "*\n!*/\n!*.go\n!.gitignore\n",
		"a.go":       "", "a.txt": "", "d/b.go": "", "d/b.txt": "", "d/e/c.go": "",
	}},
	{"crlf", map[string]string{
		".gitignore": "*.tmp\r\nbin/\r\n", "a.tmp": "", "bin/x": "", "a.go": "",
	}},
	{"star-slash", map[string]string{
		".gitignore": "*/foo\nfoo/*\n", "a/foo": "", "a/b/foo": "", "foo/bar.txt": "", "foo/bar/baz": "",
	}},
	{"trailing-doublestar-slash", map[string]string{
		".gitignore": "a/**/\n", "a/b/c": "", "a/c": "",
	}},
	{"negate-dir-in-nested-file", map[string]string{
		".gitignore": "docs/\n", "sub/.gitignore": "!docs/\n", "docs/a": "", "sub/docs/b": "",
	}},
	{"doublestar-in-a-name", map[string]string{
		".gitignore": "a**/b\nz/**/\n**/deep/**\n",
		"a/b":        "", "ax/b": "", "a/x/b": "", "ab/c/b": "", "z/q/r": "", "z/r": "", "p/deep/q": "", "deep/r/s": "",
	}},
	{"sets-and-classes", map[string]string{
		".gitignore": "[]a]x\n[!]]y\n*[[:digit:]]\n[a-c-e]z\n[[:nope:]]\nq[\n[[:upper:][:punct:]]w\n",
		"]x":         "", "ax": "", "bx": "", "]y": "", "ay": "", "f7": "", "f": "", "az": "", "dz": "", "-z": "", "ez": "",
		"n": "", "q[": "", "Aw": "", "!w": "", "aw": "",
	}},
	// git does not follow a .gitignore that is a symbolic link, at any
	// depth, even to a file inside the tree ("too many levels of symbolic
	// links").
	{"symlinked-gitignore", map[string]string{
		".gitignore": "symlink:rules.txt", "rules.txt": "*.log\n", "a.log": "",
		"sub/.gitignore": "symlink:../rules2.txt", "rules2.txt": "*.tmp\n", "sub/b.tmp": "", "sub/c.log": "",
		"d/.gitignore": "*.o\n", "d/x.o": "",
	}},
	{"deep-negation-chain", map[string]string{
		".gitignore": "*.gen.go\n", "a/.gitignore": "!*.gen.go\n", "a/b/.gitignore": "x.gen.go\n",
		"y.gen.go": "", "a/y.gen.go": "", "a/b/x.gen.go": "", "a/b/y.gen.go": "",
	}},
}

// knownDifferences lists the paths on which the matcher and git disagree,
// by case. None now (go-git's matcher, used before, did not backtrack on
// "**": a/**/b/c did not match a/b/x/b/c). A difference found later is
// listed here until it is fixed; the test fails once it is.
var knownDifferences = map[string][]string{}

// gitEnv keeps the user's and the system's git configuration (and so a
// global excludes file) out of the comparison.
func gitEnv(home string) []string {
	return append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+home,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
}

func TestMatcherAgreesWithGitCheckIgnore(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is required for this test: %v", err)
	}
	total, agree := 0, 0
	for _, c := range gitCases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			run := func(stdin []byte, args ...string) []byte {
				cmd := exec.Command("git", args...)
				cmd.Dir = root
				cmd.Env = gitEnv(root)
				cmd.Stdin = bytes.NewReader(stdin)
				out, err := cmd.Output()
				if err != nil {
					if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
						t.Fatalf("git %v: %v\n%s", args, err, out)
					}
				}
				return out
			}
			run(nil, "init", "-q", ".")
			paths := writeTree(t, root, c.files)

			// One check-ignore run for all paths: -z keeps odd names intact.
			var in bytes.Buffer
			for _, p := range paths {
				in.WriteString(strings.TrimSuffix(p, "/") + "\x00")
			}
			out := run(in.Bytes(), "check-ignore", "--stdin", "-z", "-v", "-n")
			fields := strings.Split(string(out), "\x00")
			want := map[string]bool{}
			for i := 0; i+3 < len(fields); i += 4 {
				src, pattern, path := fields[i], fields[i+2], fields[i+3]
				want[path] = src != "" && !strings.HasPrefix(pattern, "!")
			}

			m := New(root, Options{NoDefaults: true})
			known := map[string]bool{}
			for _, p := range knownDifferences[c.name] {
				known[p] = true
			}
			for _, p := range paths {
				isDir := strings.HasSuffix(p, "/")
				rel := strings.TrimSuffix(p, "/")
				w, ok := want[rel]
				if !ok {
					t.Fatalf("git check-ignore said nothing about %q", rel)
				}
				got := m.Ignored(rel, isDir)
				total++
				switch {
				case known[rel] && got == w:
					t.Errorf("%s: matcher now agrees with git (%v); remove it from knownDifferences", p, got)
				case known[rel]:
				case got != w:
					t.Errorf("Ignored(%q, dir=%v) = %v, git check-ignore says %v", rel, isDir, got, w)
				default:
					agree++
				}
			}
		})
	}
	t.Logf("%d/%d paths agree with git check-ignore", agree, total)
}

// writeTree writes files under root and returns every path below root
// (directories with a trailing slash), sorted, leaving out .git.
func writeTree(t *testing.T, root string, files map[string]string) []string {
	t.Helper()
	dirs := map[string]bool{}
	var paths []string
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(content, "symlink:"); ok {
			if err := os.Symlink(target, full); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(p, ".git/") {
			continue
		}
		paths = append(paths, p)
		parts := strings.Split(p, "/")
		for i := 1; i < len(parts); i++ {
			dirs[strings.Join(parts[:i], "/")] = true
		}
	}
	for d := range dirs {
		paths = append(paths, d+"/")
	}
	sort.Strings(paths)
	return paths
}
