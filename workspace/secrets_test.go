package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

func TestIsSecret(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{".env", true},
		{".env.local", true},
		{"config/.env.production", true},
		{".ENV", true},
		{"server.pem", true},
		{"certs/tls.KEY", true},
		{"id_rsa", true},
		{"home/.ssh/id_ed25519.pub", true},
		{".npmrc", true},
		{"/home/u/.netrc", true},
		{"credentials.json", true},
		{"aws/credentials", true},
		{".aws/config", true},
		{"deploy/prod.tfvars", true},
		// Issue 12 item 5: the thin defaults, and what a careful reviewer adds.
		{"prod.env", true},
		{"deploy/staging.env", true},
		{".env.local", true},
		{".env.development.local", true},
		{"certs/client.p12", true},
		{"certs/client.pfx", true},
		{"android/release.jks", true},
		{".git-credentials", true},
		{"home/u/.pgpass", true},
		{".aws/credentials", true},
		{"home/u/.aws/credentials", true},
		{".docker/config.json", true},
		{"home/u/.docker/config.json", true},
		{".kube/config", true},
		{"home/u/.kube/config", true},
		{"infra/terraform.tfstate", true},
		{"infra/terraform.tfstate.backup", true},
		{"infra/prod.tfvars.json", true},
		{"keys/AuthKey_ABC123.p8", true},
		{"putty.ppk", true},
		{"home/u/.config/gcloud/application_default_credentials.json", true},
		{"gcp/service-account-prod.json", true},
		{"home/u/.config/gh/hosts.yml", true},
		{".my.cnf", true},
		{".vault-token", true},
		{"helm/secrets.yaml", true},
		{"vpn/office.ovpn", true},
		{"workspace/secrets.go", false},
		{"docker/config.json", false},
		{"config/app.json", false},
		{"kube/deployment.yaml", false},
		{"src/environment.ts", false},
		{"envs/README.md", false},
		{"main.go", false},
		{"environment.go", false},
		{"keyboard.go", false},
		{"docs/keys.md", false},
		{"src/env.ts", false},
		{"README.md", false},
	}
	for _, tt := range tests {
		if got := IsSecret(tt.path); got != tt.want {
			t.Errorf("IsSecret(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestSecretsUserGlobs(t *testing.T) {
	var told atomic.Int32
	s := NewSecrets([]string{"config/prod/*.yaml", "*.sqlite", "!*.pem", "  "}, func(string) { told.Add(1) })
	for path, want := range map[string]bool{
		"config/prod/db.yaml":   true,
		"x/config/prod/db.yaml": false, // anchored at the folder
		"data/app.SQLITE":       true,
		"cert.pem":              true, // a "!" line cannot un-secret a default
		"config/dev/db.yaml":    false,
	} {
		if got := s.IsSecret(path); got != want {
			t.Errorf("IsSecret(%q) = %v, want %v", path, got, want)
		}
	}
	s.Refused("a")
	s.Refused("b")
	if told.Load() != 1 {
		t.Errorf("notice called %d times, want once", told.Load())
	}
	var nilS *Secrets
	if !nilS.IsSecret(".env") {
		t.Errorf("nil Secrets does not apply the defaults")
	}
	nilS.Refused("x")
}

// TestSecretThroughLinks is issue 12 item 4: a secret check looks at the
// file a path resolves to as well as its name — a link to .env inside the
// folder, a link to a credentials file outside it, a directory link into
// a credentials directory.
func TestSecretThroughLinks(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "ws")
	home := filepath.Join(base, "home")
	writeFile(t, root, ".env", "API_TOKEN=x\n")
	writeFile(t, root, "main.go", "package main\n")
	writeFile(t, home, ".kube/config", "token: x\n")
	writeFile(t, home, ".aws/credentials", "[default]\n")
	for link, target := range map[string]string{
		"envlink.txt":    ".env",
		"kubeconfig.txt": filepath.Join(home, ".kube/config"),
		"cfg":            filepath.Join(home, ".aws"),
		"mainlink.go":    "main.go",
	} {
		if err := os.Symlink(target, filepath.Join(root, link)); err != nil {
			t.Fatal(err)
		}
	}
	f := newFolders(t, DefaultOptions(), Hooks{}, root)
	for path, want := range map[string]bool{
		"envlink.txt":                                       true,
		filepath.Join(root, "envlink.txt"):                  true,
		string(FileURI(filepath.Join(root, "envlink.txt"))): true,
		"kubeconfig.txt":                                    true,
		"cfg/credentials":                                   true,
		"mainlink.go":                                       false,
		"main.go":                                           false,
	} {
		if got := f.IsSecret(path); got != want {
			t.Errorf("IsSecret(%q) = %v, want %v", path, got, want)
		}
	}
	if _, err := f.Views()[0].Read("envlink.txt"); !errors.Is(err, ErrSecret) {
		t.Errorf("View.Read(envlink.txt) = %v, want ErrSecret", err)
	}
	if _, err := f.ReadFile("envlink.txt"); !errors.Is(err, ErrSecret) {
		t.Errorf("ReadFile(envlink.txt) = %v, want ErrSecret", err)
	}
}

// TestIsSecretURI: the secret rules apply to documents of every scheme, by
// the URI's path (issue 21 item 4), with the user's anchored globs in the
// folder the path maps to.
func TestIsSecretURI(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, ".env", "API_TOKEN=x\n")
	writeFile(t, root, "main.go", "package main\n")
	if err := os.Symlink(".env", filepath.Join(root, "envlink.txt")); err != nil {
		t.Fatal(err)
	}
	opts := DefaultOptions()
	opts.SecretGlobs = []string{"/deploy/*.yaml"}
	f := newFolders(t, opts, Hooks{}, root)
	rs := filepath.ToSlash(root)
	for uri, want := range map[string]bool{
		"untitled:" + rs + "/.env.production":                          true,
		"untitled:/elsewhere/.ENV.local":                               true,
		"git:" + rs + "/.env?%7B%22path%22%3A%22%2Fws%2F.env%22%7D":    true,
		"git:" + rs + "/main.go?%7B%22path%22%3A%22%2Fws%2F.env%22%7D": false,
		"vscode-remote://ssh-remote+h" + rs + "/.env":                  true,
		"vscode-remote://ssh-remote+h/home/u/.ssh/config":              true,
		"vscode-vfs://github/o/r/id_rsa":                               true,
		"any+scheme.x:/a/b/server.key#frag":                            true,
		"untitled:" + rs + "/envlink.txt":                              true, // the workspace file it maps to is a link to .env
		"untitled:" + rs + "/deploy/prod.yaml":                         true, // the user's anchored glob
		"untitled:/elsewhere/deploy/prod.yaml":                         false,
		"untitled:%2Eenv":                                              true,
		"untitled:Untitled-1":                                          false,
		"vscode-notebook-cell:" + rs + "/nb.ipynb#W0sZmlsZQ%3D%3D":     false,
		"vscode-remote://ssh-remote+h" + rs + "/main.go":               false,
		"git:" + rs + "/.env%ZZ":                                       true, // a bad escape: still matched by name
		string(FileURI(filepath.Join(root, "envlink.txt"))):            true,
		string(FileURI(filepath.Join(root, "main.go"))):                false,
	} {
		u, err := ParseURI(uri)
		if err != nil {
			t.Fatalf("ParseURI(%q): %v", uri, err)
		}
		if got := f.IsSecretURI(u); got != want {
			t.Errorf("IsSecretURI(%q) = %v, want %v (path %q)", uri, got, want, u.AnyPath())
		}
	}
	var none *Folders
	if !none.IsSecretURI("untitled:/x/.env") || none.IsSecretURI("untitled:/x/a.go") {
		t.Errorf("IsSecretURI without folders does not apply the default globs")
	}
}

// FuzzIsSecretURI: whatever the scheme and the text around it, a URI whose
// path ends in /.env is secret, and no URI makes the check panic.
func FuzzIsSecretURI(f *testing.F) {
	for _, s := range []string{"untitled", "git", "vscode-remote", "x"} {
		f.Add(s, "//host/ws", "?q#f")
	}
	f.Fuzz(func(t *testing.T, scheme, prefix, suffix string) {
		for _, uri := range []string{scheme + ":" + prefix + suffix, scheme + ":" + prefix + "/.env" + suffix} {
			if u, err := ParseURI(uri); err == nil {
				(*Folders)(nil).IsSecretURI(u)
			}
		}
		u, err := ParseURI(scheme + ":" + prefix + "/.env")
		if err != nil || u.IsFile() || strings.ContainsAny(prefix, "?#%") {
			return
		}
		if !(*Folders)(nil).IsSecretURI(u) {
			t.Errorf("IsSecretURI(%q) = false (path %q)", u, u.AnyPath())
		}
	})
}
