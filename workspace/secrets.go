package workspace

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/workspace/ignore"
)

// DefaultSecretGlobs name files whose bytes never leave the machine: they
// are kept out of every prompt and every read_file result, even while open
// in the editor, and no action is offered on them. Globs are gitignore
// syntax, matched case-insensitively against the path relative to its
// workspace folder (or the whole path, for a file outside every folder); a
// glob without a slash matches a file or directory name at any depth, and
// "**/" makes a glob with a slash match at any depth too. README.md lists
// them for users; keep the two in step.
var DefaultSecretGlobs = []string{
	// Environment files: .env, .env.local, .env.production.local…, prod.env.
	".env*", "*.env", ".envrc",
	// Keys, certificates with keys, key stores.
	"*.pem", "*.key", "*.p12", "*.pfx", "*.pkcs12", "*.p8", "*.jks", "*.keystore", "*.ppk",
	"*.kdbx", "*.gpg", "*.keytab", "*.ovpn",
	"id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*",
	// Credentials of package managers, VCS, databases and tools.
	".npmrc", ".yarnrc.yml", ".pypirc", ".netrc", "_netrc", ".git-credentials", ".gitcookies",
	".htpasswd", ".pgpass", ".my.cnf", ".s3cfg", ".boto", ".vault-token", ".terraformrc", "terraform.rc",
	"credentials*", "application_default_credentials.json", "service-account*.json",
	"secrets.yaml", "secrets.yml", "secrets.json", "secrets.toml",
	// Infrastructure state and variables (they hold passwords and keys).
	"*.tfvars", "*.tfvars.json", "*.tfstate", "*.tfstate.backup",
	// Credential directories and files of cloud and container tools.
	".ssh/", ".aws/", ".azure/", ".gnupg/", "**/.config/gcloud/",
	"**/.aws/credentials", "**/.docker/config.json", "**/.kube/config", "**/.config/gh/hosts.yml",
}

// Secrets decides which paths are secret: DefaultSecretGlobs plus the
// user's globs. It is safe for concurrent use.
type Secrets struct {
	// list is compiled on first use from DefaultSecretGlobs and extra.
	list  func() *ignore.List
	extra []string

	once   sync.Once
	notice func(path string)
}

// NewSecrets returns the secret matcher for DefaultSecretGlobs and extra,
// the user's globs (gitignore syntax; "!" lines cannot un-secret a default).
// notice, if not nil, is called once, with the first path refused (see
// Refused).
func NewSecrets(extra []string, notice func(path string)) *Secrets {
	var lines []string
	for _, g := range extra {
		g = strings.TrimSpace(g)
		if g == "" || strings.HasPrefix(g, "!") {
			continue
		}
		lines = append(lines, g)
	}
	s := &Secrets{extra: lines, notice: notice, list: defaultSecrets}
	if len(lines) > 0 {
		s.list = sync.OnceValue(func() *ignore.List { return compileSecrets(s.extra) })
	}
	return s
}

func compileSecrets(extra []string) *ignore.List {
	lines := make([]string, 0, len(DefaultSecretGlobs)+len(extra))
	for _, g := range append(append([]string(nil), DefaultSecretGlobs...), extra...) {
		lines = append(lines, strings.ToLower(g))
	}
	return ignore.Compile(lines)
}

// defaultSecrets is compiled on first use (not at start-up).
var defaultSecrets = sync.OnceValue(func() *ignore.List { return compileSecrets(nil) })

// IsSecret reports whether path names a secret file by DefaultSecretGlobs
// (see Secrets.IsSecret for the user's globs too). path may be absolute,
// or relative and slash- or OS-separated; a path below a secret directory
// (.ssh/, .aws/) is secret.
func IsSecret(path string) bool {
	return defaultSecrets().Match(secretKey(path), false)
}

// IsSecret reports whether path is secret by the default or the user's
// globs. A relative path is taken relative to its workspace folder, where
// globs with a slash are anchored; an absolute path is matched whole.
func (s *Secrets) IsSecret(path string) bool {
	if s == nil {
		return IsSecret(path)
	}
	return s.list().Match(secretKey(path), false)
}

// Refused records that a secret was kept from a prompt or a read: the first
// time only, it calls the notice callback so that the user is told once
// why a file is missing from the model's view.
func (s *Secrets) Refused(path string) {
	if s == nil || s.notice == nil {
		return
	}
	s.once.Do(func() { s.notice(path) })
}

func secretKey(path string) string {
	return strings.ToLower(strings.TrimPrefix(filepath.ToSlash(path), "/"))
}
