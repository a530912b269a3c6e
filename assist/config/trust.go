package config

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Workspace trust (D69). A folder is untrusted until the user trusts it,
// and only the user can: the user file's trust.folders (which
// `kimi-lsp trust DIR` edits), or the editor's own trust, sent by the
// editor as workspaceTrusted (VS Code's workspace.isTrusted). A workspace
// file, the environment and, for trust.folders, the editor settings can
// never trust a folder. In an untrusted folder nothing kimi-lsp starts runs
// code the repository chose (assist/verify's restricted helpers); trust
// lets a helper run as the user's own editor would run it.

// Trust is what the user trusts.
type Trust struct {
	// Folders are the folders (absolute, cleaned) the user file trusts,
	// each with everything below it.
	Folders []string
	// Editor reports that the editor said the user trusts its workspace
	// (workspaceTrusted); it applies to the editor's workspace folders.
	Editor bool
}

// Reasons a source may not set a trust key, in its warning.
const (
	whyTrust       = "a cloned repository must not be able to trust itself; run kimi-lsp trust DIR, or set trust.folders in your user config file"
	whyTrustEditor = "only the editor says whether you trust its workspace (VS Code's workspace trust); elsewhere run kimi-lsp trust DIR"
)

// readTrustFolders reads trust.folders, from the user file only: a list of
// absolute paths (or "~/…"), cleaned.
func readTrustFolders(p *parser, key string, v any) ([]string, bool) {
	if p.src.Kind != FromUserFile {
		p.warn(key, "ignored: only your user config file may set %s (%s)", key, whyTrust)
		return nil, false
	}
	list, ok := p.list(key, v)
	if !ok {
		return nil, false
	}
	var out []string
	for i, e := range list {
		ek := fmt.Sprintf("%s[%d]", key, i)
		s, ok := p.str(ek, e)
		if !ok {
			continue
		}
		home, _ := os.UserHomeDir()
		dir, err := TrustPath(s, home)
		if err != nil {
			p.fail(ek, "%s", err)
			continue
		}
		if !slices.Contains(out, dir) {
			out = append(out, dir)
		}
	}
	return out, true
}

// readEditorTrust reads workspaceTrusted, from the editor only.
func readEditorTrust(p *parser, key string, v any) (bool, bool) {
	if p.src.Kind != FromEditor {
		p.warn(key, "ignored: %s", whyTrustEditor)
		return false, false
	}
	return readBool(p, key, v)
}

// TrustPath returns dir as trust.folders holds it: absolute and cleaned,
// "~/" expanded with home. A relative path is an error (the user file
// has no working directory to be relative to).
func TrustPath(dir, home string) (string, error) {
	dir = strings.TrimSpace(dir)
	if rest, ok := strings.CutPrefix(dir, "~/"); ok && home != "" {
		dir = filepath.Join(home, rest)
	}
	if dir == "" || !filepath.IsAbs(dir) {
		return "", fmt.Errorf("%s is not an absolute path", quote(dir))
	}
	return filepath.Clean(dir), nil
}

// TrustOf reports whether the folder dir (an absolute path) is trusted,
// and why: "trusted by the editor", "trusted (trust.folders: /src)" or
// "untrusted". The editor's trust (Trust.Editor, set only by an editor)
// covers the folders kimi-lsp was given by that editor. Symbolic links are
// resolved on both sides, so a link to a trusted folder is trusted and a
// link inside a trusted folder to elsewhere is not.
func (c Config) TrustOf(dir string) (bool, string) {
	if c.Trust.Editor {
		return true, "trusted by the editor"
	}
	real := resolved(dir)
	for _, t := range c.Trust.Folders {
		if within(real, resolved(t)) {
			return true, "trusted (trust.folders: " + t + ")"
		}
	}
	return false, "untrusted"
}

// Trusts reports whether every folder of dirs is trusted, and false for
// none: a helper started with them may then run as the user's editor
// would run it.
func (c Config) Trusts(dirs []string) bool {
	for _, d := range dirs {
		if ok, _ := c.TrustOf(d); !ok {
			return false
		}
	}
	return len(dirs) > 0
}

// TrustIdentity is a value that changes when what the user trusts does:
// a running helper is restarted then.
func (c Config) TrustIdentity() string {
	return fmt.Sprint(c.Trust.Editor, c.Trust.Folders)
}

// UntrustedMeans says in a sentence what an untrusted folder changes, for
// doctor and kimi.stats.
const UntrustedMeans = "the helpers that verify edits run restricted: typescript-language-server with its own TypeScript, pyright without an interpreter inside the folder, gopls with GOTOOLCHAIN=local, rust-analyzer without build scripts or proc macros, clangd without an index or project config; kimi-lsp trust DIR lifts this"

// resolved is dir with symbolic links resolved where it exists, cleaned.
func resolved(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		return r
	}
	return filepath.Clean(dir)
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	if p == dir {
		return true
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// showList shows a list of strings as TOML writes it.
func showList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
