package verify

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// trusting is an Options.Trusted that trusts every folder.
func trusting([]workspace.URI) bool { return true }

// toolBin returns a directory holding links to the real programs named
// (found on our PATH), to be a helper's whole PATH: a PATH without a
// python, say. A program not installed fails the test.
func toolBin(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			t.Fatalf("%s not found on PATH", n)
		}
		if err := os.Symlink(p, filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// markerScript writes an executable shell script at dir/name that
// creates marker when it runs (the hostile repository's code), then
// fails.
func markerScript(t *testing.T, dir, name, marker string) {
	t.Helper()
	write(t, dir, name, "#!/bin/sh\necho ran \"$0\" >> '"+marker+"'\nexit 1\n")
	if err := os.Chmod(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
}

func ran(marker string) bool {
	_, err := os.Stat(marker)
	return err == nil
}

// checkPython runs one check of a.py in dir with opts and returns it.
func checkPython(t *testing.T, dir string, opts Options) Result {
	t.Helper()
	text := "x: int = 1\n"
	write(t, dir, "a.py", text)
	v := newVerifier(t, dir, opts)
	a := uriOf(dir, "a.py")
	r := v.Check(context.Background(), []File{{a, text}}, []File{{a, text + "y: int = x\n"}})
	v.Close()
	return r
}

// TestUntrustedPyrightRunsNoWorkspacePython: in an untrusted folder
// pyright runs no interpreter of the repository's: not one a python3 shim
// outside the workspace picks by the directory it runs in (as pyenv's
// picks by .python-version; pyright runs python3 in the workspace
// folder), not one on a PATH entry inside the workspace, not a bare .venv
// with no python on PATH, not a pyrightconfig.json's venvPath/venv. In a
// trusted folder pyright runs the shim's choice as the editor's would
// (which shows the test's repository is one pyright runs).
func TestUntrustedPyrightRunsNoWorkspacePython(t *testing.T) {
	needPyright(t)
	python, err := exec.Command("python3", "-I", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("no python3 to run: %v", err)
	}
	realPython := strings.TrimSpace(string(python))
	cases := []struct {
		name string
		// setup writes the repository into dir and returns the helper's
		// PATH entries.
		setup func(t *testing.T, dir, marker string) []string
		// trustedRuns: pyright runs the repository's code when trusted.
		trustedRuns bool
	}{
		{"a python3 shim that picks the directory's .venv", func(t *testing.T, dir, marker string) []string {
			markerScript(t, dir, ".venv/bin/python", marker)
			shims := t.TempDir()
			write(t, shims, "python3", "#!/bin/sh\nif [ -x \"$PWD/.venv/bin/python\" ]; then exec \"$PWD/.venv/bin/python\" \"$@\"; fi\nexec '"+realPython+"' \"$@\"\n")
			if err := os.Chmod(filepath.Join(shims, "python3"), 0o755); err != nil {
				t.Fatal(err)
			}
			return []string{toolBin(t, "node", "pyright-langserver"), shims}
		}, true},
		{"a PATH entry inside the workspace", func(t *testing.T, dir, marker string) []string {
			markerScript(t, dir, "bin/python3", marker)
			markerScript(t, dir, "bin/python", marker)
			return []string{filepath.Join(dir, "bin"), toolBin(t, "node", "pyright-langserver")}
		}, false},
		{"a bare .venv, no python on PATH", func(t *testing.T, dir, marker string) []string {
			markerScript(t, dir, ".venv/bin/python", marker)
			markerScript(t, dir, ".venv/bin/python3", marker)
			write(t, dir, ".venv/pyvenv.cfg", "home = /usr/bin\n")
			return []string{toolBin(t, "node", "pyright-langserver")}
		}, false},
		{"pyrightconfig.json's venv", func(t *testing.T, dir, marker string) []string {
			markerScript(t, dir, "env/evil/bin/python", marker)
			markerScript(t, dir, "env/evil/bin/python3", marker)
			write(t, dir, "env/evil/pyvenv.cfg", "home = /usr/bin\n")
			write(t, dir, "pyrightconfig.json", `{"venvPath": "env", "venv": "evil"}`)
			return []string{toolBin(t, "node", "pyright-langserver"), filepath.Dir(realPython)}
		}, false},
	}
	for _, c := range cases {
		for _, trusted := range []bool{false, true} {
			name := c.name + ", untrusted"
			if trusted {
				name = c.name + ", trusted"
			}
			t.Run(name, func(t *testing.T) {
				dir, marker := t.TempDir(), filepath.Join(t.TempDir(), "ran")
				path := c.setup(t, dir, marker)
				opts := Options{Env: []string{"PATH=" + strings.Join(path, string(filepath.ListSeparator))}}
				if trusted {
					opts.Trusted = trusting
				}
				r := checkPython(t, dir, opts)
				if !r.Verified {
					t.Fatalf("got %+v, want verified", r)
				}
				if trusted {
					if r.Restricted || strings.Contains(r.Line(), "untrusted") {
						t.Errorf("trusted: got %q, want no restriction said", r.Line())
					}
					if c.trustedRuns && !ran(marker) {
						t.Errorf("trusted: pyright did not run the repository's interpreter: the test's repository is not one it runs")
					}
					if !c.trustedRuns && ran(marker) {
						b, _ := os.ReadFile(marker)
						t.Errorf("trusted: the repository's interpreter ran: %s", b)
					}
					return
				}
				if ran(marker) {
					b, _ := os.ReadFile(marker)
					t.Errorf("untrusted: the repository's interpreter ran: %s", b)
				}
				if want := "verified by pyright (untrusted folder: without the workspace's environment): no new errors"; r.Line() != want {
					t.Errorf("got %q, want %q", r.Line(), want)
				}
			})
		}
	}
}
