package verify

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestAllowedEnv: a helper inherits the allow-list's variables, the
// Python ones only in a trusted folder, and never a credential, whatever
// prefix it has.
func TestAllowedEnv(t *testing.T) {
	cases := []struct {
		kv               string
		untrusted, trust bool // kept untrusted, kept trusted
	}{
		{"PATH=/usr/bin", true, true},
		{"HOME=/home/u", true, true},
		{"USER=u", true, true},
		{"LOGNAME=u", true, true},
		{"SHELL=/bin/sh", true, true},
		{"LANG=C.UTF-8", true, true},
		{"LC_ALL=C", true, true},
		{"TZ=UTC", true, true},
		{"TMPDIR=/tmp", true, true},
		{"TERM=xterm", true, true},
		{"XDG_CACHE_HOME=/c", true, true},
		{"GOPATH=/go", true, true},
		{"GOFLAGS=-mod=mod", true, true},
		{"GOPROXY=https://user:pw@proxy.example/", true, true},
		{"GONOSUMDB=corp.example", true, true},
		{"GO111MODULE=on", true, true},
		{"GOPLSCACHE=/g", true, true},
		{"CGO_ENABLED=0", true, true},
		{"NODE_OPTIONS=--max-old-space-size=4096", true, true},
		{"NODE_PATH=/n", true, true},
		{"CARGO_HOME=/c", true, true},
		{"RUSTUP_HOME=/r", true, true},
		{"HTTPS_PROXY=http://proxy:3128", true, true},
		{"PYTHONPATH=/p", false, true},
		{"PYTHONHOME=/p", false, true},
		{"VIRTUAL_ENV=/v", false, true},
		{"CONDA_PREFIX=/c", false, true},
		// Credentials, by any prefix.
		{"AWS_SECRET_ACCESS_KEY=x", false, false},
		{"AWS_PROFILE=x", false, false},
		{"GITHUB_TOKEN=x", false, false},
		{"OPENAI_API_KEY=x", false, false},
		{"ANTHROPIC_API_KEY=x", false, false},
		{"KIMI_API_KEY=x", false, false},
		{"KIMI_BASE_URL=http://x", false, false},
		{"GOOGLE_APPLICATION_CREDENTIALS=/k.json", false, false},
		{"GO_SECRET=x", false, false},
		{"GOTOKEN_KEY=x", false, false},
		{"NODE_AUTH_TOKEN=x", false, false},
		{"CARGO_REGISTRY_TOKEN=x", false, false},
		{"CARGO_REGISTRIES_CORP_TOKEN=x", false, false},
		{"PYTHON_PASSWORD=x", false, false},
		{"DB_PASSWD=x", false, false},
		// Not on the list at all.
		{"EDITOR=vi", false, false},
		{"SSH_AUTH_SOCK=/s", false, false},
		{"DOCKER_HOST=tcp://x", false, false},
		{"GOOGLE_CLOUD_PROJECT=p", false, false},
	}
	for _, c := range cases {
		for _, trusted := range []bool{false, true} {
			want := c.untrusted
			if trusted {
				want = c.trust
			}
			if got := slices.Contains(allowedEnv([]string{c.kv}, trusted), c.kv); got != want {
				t.Errorf("%s (trusted %v): kept %v, want %v", c.kv, trusted, got, want)
			}
		}
	}
}

// TestCleanPath: a helper's PATH has no relative entry and none inside a
// workspace folder (also through a symbolic link), so that no program of
// the repository's is run by name.
func TestCleanPath(t *testing.T) {
	ws := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(filepath.Join(ws, "tools"), link); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(ws, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	sep := string(filepath.ListSeparator)
	in := strings.Join([]string{"/usr/bin", "", ".", "node_modules/.bin", ws, filepath.Join(ws, "bin"), link, "/bin"}, sep)
	if got, want := cleanPath(in, []string{ws}), "/usr/bin"+sep+"/bin"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestHelperEnvironment: a helper started as a script that writes its
// environment to a file gets none of our credentials (those of the
// brief's issue: cloud, forge and model keys, kimi-lsp's own), keeps what
// it needs (the go command's variables, Options.Env), and its PATH has no entry of the
// workspace; a program of the workspace's on such an entry is not the
// one run.
func TestHelperEnvironment(t *testing.T) {
	dir := t.TempDir()
	dump := filepath.Join(t.TempDir(), "env")
	bin := t.TempDir()
	script := "#!/bin/sh\nenv > '" + dump + "'\nwhile IFS= read -r line; do :; done\n"
	write(t, bin, "envdump", script)
	// The workspace's own program of that name, first on PATH.
	write(t, dir, "bin/envdump", "#!/bin/sh\necho workspace > '"+dump+".ws'\n")
	for _, p := range []string{filepath.Join(bin, "envdump"), filepath.Join(dir, "bin/envdump")} {
		if err := os.Chmod(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secrets := map[string]string{
		"AWS_SECRET_ACCESS_KEY": "aws", "GITHUB_TOKEN": "gh", "OPENAI_API_KEY": "oa",
		"ANTHROPIC_API_KEY": "an", "KIMI_BASE_URL": "http://kimi.invalid", "KIMI_API_KEY": "kimi",
		"NODE_AUTH_TOKEN": "npm", "CARGO_REGISTRY_TOKEN": "crates",
	}
	for k, val := range secrets {
		t.Setenv(k, val)
	}
	t.Setenv("GONOSUMDB", "corp.example")
	path := filepath.Join(dir, "bin") + string(filepath.ListSeparator) + "." + string(filepath.ListSeparator) + bin + string(filepath.ListSeparator) + "/usr/bin:/bin"
	v := newVerifier(t, dir, Options{
		Servers: map[string]Command{"go": {"envdump"}},
		Env:     []string{"PATH=" + path, "VERIFY_TEST_ADDED=1"},
		Bounds:  Bounds{Start: 2 * time.Second},
	})
	a := uriOf(dir, "a.go")
	// The script never answers initialize: the start times out, after
	// the script wrote its environment.
	v.Check(context.Background(), nil, []File{{a, "package m\n"}})
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("the helper wrote no environment: %v", err)
	}
	if _, err := os.Stat(dump + ".ws"); err == nil {
		t.Errorf("the workspace's envdump ran, not the one outside it")
	}
	env := strings.Split(string(b), "\n")
	for k := range secrets {
		for _, kv := range env {
			if strings.HasPrefix(kv, k+"=") {
				t.Errorf("the helper got %s", kv)
			}
		}
	}
	for _, want := range []string{"GONOSUMDB=corp.example", "VERIFY_TEST_ADDED=1"} {
		if !slices.Contains(env, want) {
			t.Errorf("the helper did not get %s", want)
		}
	}
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			if p != bin+":/usr/bin:/bin" {
				t.Errorf("the helper's PATH is %q, want %q", p, bin+":/usr/bin:/bin")
			}
		}
	}
}
