package workspace

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// URI identifies a document. It is canonicalised once, when decoded from the
// wire, by ParseURI: for the file scheme, "file://" followed by the cleaned,
// absolute path with only the characters that must be escaped escaped
// (so "file:///a%20b/c.go" and "file:///a b/c.go" are the same URI). Other
// schemes (untitled:, vscode-notebook-cell:, …) are kept as they came, with
// the scheme lower-cased; such documents can be edited in memory but have no
// path on disk.
type URI string

// ErrNotFile is returned by URI.Path for URIs whose scheme is not "file".
var ErrNotFile = errors.New("not a file URI")

// ParseURI decodes and canonicalises a URI received from a client. It never
// panics; a malformed URI is an error.
func ParseURI(s string) (URI, error) {
	if s == "" {
		return "", errors.New("empty URI")
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return "", fmt.Errorf("URI %q has no scheme", s)
	}
	scheme := strings.ToLower(s[:i])
	for _, r := range scheme {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return "", fmt.Errorf("URI %q has an invalid scheme", s)
		}
	}
	if scheme != "file" {
		return URI(scheme + s[i:]), nil
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("malformed file URI %q: %w", s, err)
	}
	if u.Host != "" && u.Host != "localhost" {
		return "", fmt.Errorf("file URI %q names a remote host", s)
	}
	p := u.Path
	if p == "" {
		return "", fmt.Errorf("file URI %q has no path", s)
	}
	// Windows drive letters arrive as /C:/x or /c%3A/x; keep them as /c:/x.
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' && isLetter(p[1]) {
		p = "/" + strings.ToLower(p[1:2]) + p[2:]
	}
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("file URI %q has a relative path", s)
	}
	return FileURI(p), nil
}

// FileURI returns the canonical file URI of an absolute, slash-separated path.
// The path is cleaned first.
func FileURI(path string) URI {
	path = filepath.ToSlash(filepath.Clean(path))
	if !strings.HasPrefix(path, "/") {
		path = "/" + path // Windows: c:/x → /c:/x
	}
	u := url.URL{Scheme: "file", Path: path}
	// url.URL escapes the path minimally and writes "file:///path".
	s := u.String()
	if !strings.HasPrefix(s, "file:///") {
		s = "file://" + strings.TrimPrefix(s, "file:")
	}
	return URI(s)
}

// Scheme returns the URI's scheme, lower-cased.
func (u URI) Scheme() string {
	if i := strings.IndexByte(string(u), ':'); i > 0 {
		return string(u)[:i]
	}
	return ""
}

// IsFile reports whether the URI names a file on disk.
func (u URI) IsFile() bool { return u.Scheme() == "file" }

// Path returns the absolute file system path of a file URI, or ErrNotFile.
func (u URI) Path() (string, error) {
	if !u.IsFile() {
		return "", fmt.Errorf("%w: %s", ErrNotFile, u)
	}
	parsed, err := url.Parse(string(u))
	if err != nil {
		return "", fmt.Errorf("malformed file URI %q: %w", u, err)
	}
	p := parsed.Path
	if len(p) >= 3 && p[0] == '/' && p[2] == ':' && isLetter(p[1]) {
		p = p[1:] // Windows drive path
	}
	return filepath.FromSlash(p), nil
}

// AnyPath returns the path a URI of any scheme names, slash-separated: a
// file URI's path; for another scheme, the URI's path, decoded, without
// query or fragment (untitled:/ws/.env.production → /ws/.env.production,
// git:/ws/.env?{"path":…} → /ws/.env, vscode-remote://ssh-remote+h/ws/.env
// → /ws/.env, untitled:Untitled-1 → Untitled-1). It is for checks by name
// (secrets): such a path need not exist on this machine.
func (u URI) AnyPath() string {
	if p, err := u.Path(); err == nil {
		return filepath.ToSlash(p)
	}
	s := string(u)
	rest := s[len(u.Scheme())+1:]
	if parsed, err := url.Parse(s); err == nil {
		if parsed.Opaque != "" {
			rest = parsed.Opaque
			if r, err := url.PathUnescape(rest); err == nil {
				rest = r
			}
		} else {
			return parsed.Path
		}
	} else {
		// Malformed (a bad escape, say): cut query and fragment, keep the
		// rest as it came.
		if i := strings.IndexAny(rest, "?#"); i >= 0 {
			rest = rest[:i]
		}
		if strings.HasPrefix(rest, "//") { // an authority
			if i := strings.IndexByte(rest[2:], '/'); i >= 0 {
				rest = rest[2+i:]
			} else {
				rest = ""
			}
		}
	}
	return rest
}

// String returns the URI as it is sent on the wire.
func (u URI) String() string { return string(u) }

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
