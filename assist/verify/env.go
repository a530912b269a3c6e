package verify

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/childenv"
)

// envNames are the variables a helper gets by their exact name (any
// case on Windows), trusted folder or not.
var envNames = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
	// The network: the go command fetches modules through them (a
	// proxy's credentials are in its URL, as GOPROXY's are).
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
	// cgo's compilers (gopls's go list preprocesses cgo files).
	"CC", "CXX",
	// Rust's toolchain.
	"RUSTC", "RUSTFLAGS",
	// Windows.
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP",
	"USERPROFILE", "APPDATA", "LOCALAPPDATA", "PROGRAMFILES", "PROGRAMDATA",
}

// envPrefixes are the prefixes of the variables a helper gets, trusted
// folder or not: the locale, the XDG directories, and each language's
// own (Go's, cgo's, Node's, Cargo's and rustup's).
var envPrefixes = []string{"LC_", "XDG_", "GO", "CGO_", "NODE_", "CARGO_", "RUSTUP_", "RUST_"}

// trustedPrefixes are those a helper gets only in a trusted folder: they
// choose a Python interpreter and its packages (an untrusted folder's
// pyright runs none of the workspace's, see pythonFor).
var trustedPrefixes = []string{"PYTHON", "VIRTUAL_ENV", "CONDA_"}

// allowedEnv returns the entries of environ (KEY=VALUE) a helper may
// inherit: those envNames and envPrefixes name, in a trusted folder also
// trustedPrefixes, never a credential (childenv.Credential: *_TOKEN,
// *_KEY, *SECRET*, AWS_*, KIMI_*…, whatever prefix it has:
// GOOGLE_APPLICATION_CREDENTIALS, NODE_AUTH_TOKEN, CARGO_REGISTRY_TOKEN). Everything else (the API keys of
// other services, the user's tokens, whatever a shell exports) stays
// with kimi-lsp. The go command's GO* variables include the user's
// GOFLAGS and GOPROXY; NODE_OPTIONS is kept too: it is the user's own
// environment, as the editor's language servers get it, not something a
// repository chooses.
func allowedEnv(environ []string, trusted bool) []string {
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" || childenv.Credential(name) {
			continue
		}
		n := name
		if runtime.GOOS == "windows" {
			n = strings.ToUpper(n)
		}
		keep := slices.Contains(envNames, n)
		for _, p := range envPrefixes {
			keep = keep || strings.HasPrefix(n, p) && (p != "GO" || goVariable(n))
		}
		if trusted {
			for _, p := range trustedPrefixes {
				keep = keep || strings.HasPrefix(n, p)
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// goVariable reports whether a name that starts with GO is the go
// command's or gopls's (GOPATH, GO111MODULE, GOPLSCACHE), not another
// vendor's that happens to start so (GOOGLE_CLOUD_PROJECT).
func goVariable(name string) bool {
	return !strings.HasPrefix(name, "GOOGLE") && !strings.Contains(name, "_") || name == "GO111MODULE"
}

// cleanPath returns the PATH list path without its relative entries (".",
// "", "node_modules/.bin": they name a directory of whatever folder the
// helper runs in) and without every entry inside one of the folders (a
// repository's own bin directory): a program a helper runs by name (gopls
// its go command, pyright its python) is never the repository's.
func cleanPath(path string, folders []string) string {
	var keep []string
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) || insideAny(dir, folders) {
			continue
		}
		keep = append(keep, dir)
	}
	return strings.Join(keep, string(filepath.ListSeparator))
}

// insideAny reports whether path is one of the folders or inside one, as
// written or with the symbolic links of both resolved.
func insideAny(path string, folders []string) bool {
	paths := []string{filepath.Clean(path)}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		paths = append(paths, r)
	}
	for _, f := range folders {
		fs := []string{filepath.Clean(f)}
		if r, err := filepath.EvalSymlinks(f); err == nil {
			fs = append(fs, r)
		}
		for _, p := range paths {
			for _, f := range fs {
				if within(p, f) {
					return true
				}
			}
		}
	}
	return false
}

// within reports whether path is dir or inside it (both clean and
// absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// lookPath finds a program as exec.LookPath does, on the PATH list path
// rather than ours: a bare name in each absolute entry in turn; a name
// with a separator (a configured path) as it is.
func lookPath(name, path string) (string, error) {
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		return exec.LookPath(name)
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// environ is our environment with Options.Env after it (a test's
// additions), the last entry of a name winning as exec uses them.
func (v *Verifier) environ() []string {
	return append(os.Environ(), v.opts.Env...)
}

// helperPath is the PATH a helper is found on and runs with: ours (or
// Options.Env's) less the entries cleanPath drops for the folders.
func (v *Verifier) helperPath() string {
	return cleanPath(envValue(v.environ(), "PATH"), v.folderPaths())
}
