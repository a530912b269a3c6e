package ignore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing/format/gitignore"
)

// DefaultExcludes are left out of every folder unless Options.NoDefaults is
// set: version-control internals, dependency trees and tool caches, and the
// two build-output directories whose names are nearly always output
// (Rust/Maven target/, JS dist/). Other build outputs (build/, out/, bin/) are
// too often source to exclude by name: a project's .gitignore covers them.
// vendor/ is excluded because vendored code is third-party and large; imports
// into it are not followed by context selection either.
var DefaultExcludes = []string{
	".git/", ".hg/", ".svn/", ".jj/",
	"node_modules/", "bower_components/", "vendor/",
	"__pycache__/", ".venv/", ".tox/", ".mypy_cache/", ".pytest_cache/", ".ruff_cache/",
	".gradle/", ".next/", ".nuxt/", ".terraform/", ".direnv/", ".cache/",
	"target/", "dist/",
}

// IgnoreFile is the name of the per-directory ignore file.
const IgnoreFile = ".gitignore"

// InfoExclude is the folder-relative path of the repository's exclude file.
const InfoExclude = ".git/info/exclude"

// maxIgnoreFileSize bounds how much of one ignore file is read; a larger
// file is almost certainly not an ignore file, and reading it whole could
// exhaust memory.
const maxIgnoreFileSize = 4 << 20

// Options configures a Matcher.
type Options struct {
	// Excludes are the user's extra patterns (gitignore syntax, relative to
	// the folder root). They cannot be negated by a .gitignore.
	Excludes []string
	// NoDefaults drops DefaultExcludes.
	NoDefaults bool
}

// IsRuleFile reports whether the folder-relative, slash-separated path rel is
// a file whose change changes the rules: a .gitignore at any level or
// .git/info/exclude.
func IsRuleFile(rel string) bool {
	return rel == InfoExclude || rel == IgnoreFile || strings.HasSuffix(rel, "/"+IgnoreFile)
}

// Matcher answers whether a path of one folder is ignored. It reads each
// directory's .gitignore lazily, the first time a path below it is asked
// about, and keeps it until Reset. It is safe for concurrent use.
type Matcher struct {
	root string
	hard *List
	info *List

	mu   sync.Mutex
	dirs map[string]*List // directory (slash, "" for the root) → its .gitignore; nil: none
}

// New returns a Matcher for the folder at root (an absolute path). It reads
// .git/info/exclude at once; a missing file is no error. Malformed lines in
// user patterns never fail: a pattern that cannot match simply never matches.
func New(root string, opts Options) *Matcher {
	var hard []string
	if !opts.NoDefaults {
		hard = append(hard, DefaultExcludes...)
	}
	hard = append(hard, opts.Excludes...)
	m := &Matcher{
		root: root,
		hard: Compile(hard),
		dirs: make(map[string]*List),
	}
	m.info = m.readList(filepath.Join(root, filepath.FromSlash(InfoExclude)))
	return m
}

// Root returns the folder root the Matcher was made for.
func (m *Matcher) Root() string { return m.root }

// Reset forgets every .gitignore read so far and re-reads .git/info/exclude;
// call it when any ignore file changed.
func (m *Matcher) Reset() {
	info := m.readList(filepath.Join(m.root, filepath.FromSlash(InfoExclude)))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.info = info
	m.dirs = make(map[string]*List)
}

// Ignored reports whether the folder-relative, slash-separated path rel is
// ignored, itself or through one of its parent directories.
func (m *Matcher) Ignored(rel string, isDir bool) bool {
	rel = cleanRel(rel)
	if rel == "" {
		return false
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' && m.IgnoredEntry(rel[:i], true) {
			return true
		}
	}
	return m.IgnoredEntry(rel, isDir)
}

// IgnoredEntry is Ignored without the checks of the parent directories, for
// a directory walk that never descends into an ignored directory.
// Precondition: no parent directory of rel is ignored.
func (m *Matcher) IgnoredEntry(rel string, isDir bool) bool {
	rel = cleanRel(rel)
	if rel == "" {
		return false
	}
	parts := strings.Split(rel, "/")
	if r := m.hard.match(parts, isDir); r != gitignore.NoMatch {
		return r == gitignore.Exclude
	}
	// The .gitignore of the deepest directory first: a deeper file overrides.
	for j := len(parts) - 1; j >= 0; j-- {
		l := m.dirList(strings.Join(parts[:j], "/"))
		if r := l.match(parts[j:], isDir); r != gitignore.NoMatch {
			return r == gitignore.Exclude
		}
	}
	m.mu.Lock()
	info := m.info
	m.mu.Unlock()
	return info.match(parts, isDir) == gitignore.Exclude
}

func (m *Matcher) dirList(dir string) *List {
	m.mu.Lock()
	l, ok := m.dirs[dir]
	m.mu.Unlock()
	if ok {
		return l
	}
	l = m.readList(filepath.Join(m.root, filepath.FromSlash(dir), IgnoreFile))
	m.mu.Lock()
	m.dirs[dir] = l
	m.mu.Unlock()
	return l
}

// readList reads an ignore file; a missing or unreadable file is an empty
// list (git, too, goes on without it).
func (m *Matcher) readList(path string) *List {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	l, err := Parse(f, maxIgnoreFileSize)
	if err != nil {
		return nil
	}
	return l
}

func cleanRel(rel string) string {
	rel = strings.Trim(filepath.ToSlash(rel), "/")
	if rel == "." {
		return ""
	}
	return rel
}

// List is a compiled list of gitignore patterns, all relative to one
// directory. The zero value and nil match nothing.
type List struct {
	rules []rule
}

type rule struct {
	pat    gitignore.Pattern
	simple bool // no slash inside: matched against the last element only
}

// ErrTooLarge is returned by Parse for input longer than its limit.
var ErrTooLarge = errors.New("ignore file too large")

// Parse reads gitignore lines from r: blank lines and lines starting with
// "#" are skipped, CRLF line ends are accepted. At most limit bytes are
// read; longer input is ErrTooLarge.
func Parse(r io.Reader, limit int64) (*List, error) {
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read ignore patterns: %w", err)
	}
	if n > limit {
		return nil, ErrTooLarge
	}
	var lines []string
	sc := bufio.NewScanner(&buf)
	sc.Buffer(make([]byte, 0, 4096), int(limit)+1)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read ignore patterns: %w", err)
	}
	return Compile(lines), nil
}

// Compile compiles gitignore pattern lines. Blank lines and comments are
// skipped; it never fails.
func Compile(lines []string) *List {
	l := &List{}
	for _, line := range lines {
		line = strings.TrimSuffix(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// Go's path.Match negates a class with "^", git also with "!".
		line = strings.ReplaceAll(line, "[!", "[^")
		body := line
		if !strings.HasSuffix(body, `\ `) {
			body = strings.TrimRight(body, " ")
		}
		neg := strings.HasPrefix(body, "!")
		body = strings.TrimPrefix(body, "!")
		dirOnly := strings.HasSuffix(body, "/")
		body = strings.TrimSuffix(body, "/")
		if body == "" {
			continue
		}
		// "x/**" matches everything inside x, not x itself; go-git would
		// match x too, "x/**/*" means what git means.
		if strings.HasSuffix(body, "/**") {
			body += "/*"
		}
		simple := !strings.Contains(body, "/")
		p := body
		if dirOnly {
			p += "/"
		}
		if neg {
			p = "!" + p
		}
		l.rules = append(l.rules, rule{pat: gitignore.ParsePattern(p, nil), simple: simple})
	}
	return l
}

// Len returns the number of patterns in the list.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.rules)
}

// Match reports whether the slash-separated path rel, relative to the
// list's directory, is excluded by the list, itself or through a parent
// directory (the last matching pattern decides at each level, as in one
// .gitignore file).
func (l *List) Match(rel string, isDir bool) bool {
	rel = cleanRel(rel)
	if rel == "" || l.Len() == 0 {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if l.match(parts[:i], true) == gitignore.Exclude {
			return true
		}
	}
	return l.match(parts, isDir) == gitignore.Exclude
}

func (l *List) match(parts []string, isDir bool) gitignore.MatchResult {
	if l == nil {
		return gitignore.NoMatch
	}
	for i := len(l.rules) - 1; i >= 0; i-- {
		r := l.rules[i]
		q := parts
		if r.simple {
			q = parts[len(parts)-1:]
		}
		if res := r.pat.Match(q, isDir); res != gitignore.NoMatch {
			return res
		}
	}
	return gitignore.NoMatch
}
