package ignore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"github.com/kimi-lsp/kimi-lsp/workspace/rulefile"
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
	// Logger hears of an ignore file that is skipped (one line each time
	// it is read); nil means slog.Default().
	Logger *slog.Logger
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
	log  *slog.Logger

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
		log:  opts.Logger,
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.info = m.readList(InfoExclude, rulefile.Inside)
	return m
}

// Root returns the folder root the Matcher was made for.
func (m *Matcher) Root() string { return m.root }

// Reset forgets every .gitignore read so far and re-reads .git/info/exclude;
// call it when any ignore file changed.
func (m *Matcher) Reset() {
	info := m.readList(InfoExclude, rulefile.Inside)
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
	if r := m.hard.match(rel, isDir); r != noMatch {
		return r == exclude
	}
	// The .gitignore of the deepest directory first: a deeper file
	// overrides. Each list sees the path relative to its directory.
	for j := strings.LastIndexByte(rel, '/'); ; j = strings.LastIndexByte(rel[:j], '/') {
		dir, sub := "", rel
		if j >= 0 {
			dir, sub = rel[:j], rel[j+1:]
		}
		if r := m.dirList(dir).match(sub, isDir); r != noMatch {
			return r == exclude
		}
		if j < 0 {
			break
		}
	}
	m.mu.Lock()
	info := m.info
	m.mu.Unlock()
	return info.match(rel, isDir) == exclude
}

func (m *Matcher) dirList(dir string) *List {
	m.mu.Lock()
	l, ok := m.dirs[dir]
	m.mu.Unlock()
	if ok {
		return l
	}
	l = m.readList(path.Join(dir, IgnoreFile), rulefile.NoLinks)
	m.mu.Lock()
	m.dirs[dir] = l
	m.mu.Unlock()
	return l
}

// readList reads the ignore file at the folder-relative path rel (see
// package rulefile: opened without blocking, a regular file of at most
// maxIgnoreFileSize bytes, links as links say). A missing file is an empty
// list; so is a file that is skipped, with one log line (git, too, goes on
// without it). git does not follow a .gitignore that is a symbolic link
// ("too many levels of symbolic links"); it does follow .git/info/exclude,
// which is read here only while the link stays inside the folder.
func (m *Matcher) readList(rel string, links rulefile.Links) *List {
	data, err := rulefile.Read(m.root, rel, maxIgnoreFileSize, links)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		m.log.Warn("ignore file skipped", "file", filepath.Join(m.root, filepath.FromSlash(rel)), "err", err)
		return nil
	}
	l, err := Parse(bytes.NewReader(data), maxIgnoreFileSize)
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
	patterns []pattern
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

// Compile compiles gitignore pattern lines as git reads a .gitignore file:
// blank lines and lines starting with "#" are skipped, one "\r" before the
// line end is dropped, trailing spaces are dropped unless escaped with "\",
// and a line ends at a NUL byte. It never fails: a line that cannot match
// (an unclosed "[", an unknown "[:class:]") simply never matches.
func Compile(lines []string) *List {
	l := &List{}
	for i, line := range lines {
		if i == 0 {
			line = strings.TrimPrefix(line, "\ufeff") // a byte-order mark
		}
		if line == "" || line[0] == '#' {
			continue
		}
		line = strings.TrimSuffix(line, "\r")
		if n := strings.IndexByte(line, 0); n >= 0 {
			line = line[:n]
		}
		if p, ok := parsePattern(trimTrailingSpaces(line)); ok {
			l.patterns = append(l.patterns, p)
		}
	}
	return l
}

// trimTrailingSpaces drops the spaces at the end of a line, except one
// escaped by a backslash ("a\ " keeps its space; tabs are kept).
func trimTrailingSpaces(line string) string {
	end := len(line)
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case ' ':
			if end == len(line) {
				end = i
			}
			continue
		case '\\':
			i++
			if i == len(line) {
				return line // a final backslash: nothing to trim
			}
		}
		end = len(line)
	}
	return line[:end]
}

// Len returns the number of patterns in the list.
func (l *List) Len() int {
	if l == nil {
		return 0
	}
	return len(l.patterns)
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
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' && l.match(rel[:i], true) == exclude {
			return true
		}
	}
	return l.match(rel, isDir) == exclude
}

// match returns what the last pattern matching rel says.
func (l *List) match(rel string, isDir bool) result {
	if l == nil {
		return noMatch
	}
	for i := len(l.patterns) - 1; i >= 0; i-- {
		p := &l.patterns[i]
		if p.match(rel, isDir) {
			if p.negate {
				return include
			}
			return exclude
		}
	}
	return noMatch
}
