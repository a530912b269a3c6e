package verify

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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

// needInstalled fails the test when name is not on PATH in CI (CI=true:
// .ci/run installs it) and skips it elsewhere, saying how to install it.
func needInstalled(t *testing.T, name, install string) {
	t.Helper()
	if _, err := exec.LookPath(name); err == nil {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s not found on PATH: .ci/run installs it (%s)", name, install)
	}
	t.Skipf("%s not found on PATH: install it with %s to run this test", name, install)
}

func needTypeScript(t *testing.T) {
	needInstalled(t, "typescript-language-server", "npm install -g typescript-language-server@5.3.0 typescript@5.9.3")
}

// TestUntrustedTypeScriptRunsNoWorkspaceTypeScript: in an untrusted
// folder typescript-language-server runs the TypeScript installed beside
// it, never the repository's node_modules/typescript or
// .yarn/sdks/typescript (a tsserver.js that writes a marker, then runs
// the real one). In a trusted folder it runs the repository's
// TypeScript, as the editor's would (which shows the test's repository
// is one it runs).
func TestUntrustedTypeScriptRunsNoWorkspaceTypeScript(t *testing.T) {
	needTypeScript(t)
	tsls, _ := exec.LookPath("typescript-language-server")
	real := bundledTypeScript(tsls, nil)
	if real == "" {
		t.Fatalf("no typescript beside %s: install it with npm install -g typescript@5.9.3", tsls)
	}
	for _, sdk := range []string{"node_modules/typescript", ".yarn/sdks/typescript"} {
		for _, trusted := range []bool{false, true} {
			t.Run(sdk+map[bool]string{false: ", untrusted", true: ", trusted"}[trusted], func(t *testing.T) {
				dir, marks := t.TempDir(), t.TempDir()
				marker := filepath.Join(marks, "tsserver")
				write(t, dir, sdk+"/package.json", `{"name": "typescript", "version": "5.9.3"}`)
				write(t, dir, sdk+"/lib/tsserver.js", "require('fs').appendFileSync("+jsString(marker)+", 'ran\\n');\nrequire("+jsString(real)+");\n")
				// An error before and after: typescript-language-server
				// 5.3.0 was seen publishing nothing after an edit that
				// keeps a file without diagnostics (the check then waits
				// out DiagTimeout).
				text := "export const x: number = 'one';\n"
				write(t, dir, "a.ts", text)
				opts := Options{Env: []string{"PATH=" + toolBin(t, "node", "typescript-language-server")}}
				if trusted {
					opts.Trusted = trusting
				}
				v := newVerifier(t, dir, opts)
				a := uriOf(dir, "a.ts")
				r := v.Check(context.Background(), []File{{a, text}}, []File{{a, text + "export const y: number = x;\n"}})
				v.Close()
				if !r.Verified {
					t.Fatalf("got %+v, want verified", r)
				}
				if trusted {
					if !ran(marker) {
						t.Errorf("trusted: the repository's tsserver.js did not run: the test's repository is not one typescript-language-server runs")
					}
					if r.Restricted {
						t.Errorf("trusted: got %q, want no restriction said", r.Line())
					}
					return
				}
				if ran(marker) {
					t.Errorf("untrusted: the repository's %s/lib/tsserver.js ran", sdk)
				}
				if want := "verified by typescript-language-server (untrusted folder: with its own TypeScript, without the workspace's plugins): no new errors"; r.Line() != want {
					t.Errorf("got %q, want %q", r.Line(), want)
				}
			})
		}
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// TestUntrustedTypeScriptWithoutItsOwn: typescript-language-server with
// no TypeScript beside it is not started in an untrusted folder (it
// would take the repository's): the check ends unverified, saying why.
func TestUntrustedTypeScriptWithoutItsOwn(t *testing.T) {
	dir, bin := t.TempDir(), t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	// A stand-in under the real program's name, alone in its directory:
	// no node_modules/typescript anywhere above it.
	markerScript(t, bin, "typescript-language-server", marker)
	write(t, dir, "node_modules/typescript/package.json", `{"name": "typescript", "version": "5.9.3"}`)
	write(t, dir, "node_modules/typescript/lib/tsserver.js", "")
	if bundledTypeScript(filepath.Join(bin, "typescript-language-server"), []string{dir}) != "" {
		t.Skip("a typescript package is installed above the test's temporary directory")
	}
	v := newVerifier(t, dir, Options{Env: []string{"PATH=" + bin}})
	a := uriOf(dir, "a.ts")
	r := v.Check(context.Background(), nil, []File{{a, "const x = 1;\n"}})
	if r.Verified {
		t.Fatalf("got %+v, want not verified", r)
	}
	if want := "not verified (typescript-language-server has no TypeScript of its own beside it (an untrusted folder's own TypeScript is not run): install typescript next to typescript-language-server (npm install -g typescript), or trust the folder)"; r.Line() != want {
		t.Errorf("got %q, want %q", r.Line(), want)
	}
	if ran(marker) {
		t.Errorf("the helper was started")
	}
}

// proxyLog is a module proxy on loopback that answers 404 to everything
// and records the paths asked for.
type proxyLog struct {
	mu    sync.Mutex
	paths []string
}

func (p *proxyLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.paths = append(p.paths, r.URL.Path)
	p.mu.Unlock()
	http.NotFound(w, r)
}

func (p *proxyLog) asked(part string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, s := range p.paths {
		if strings.Contains(s, part) {
			out = append(out, s)
		}
	}
	return out
}

// TestGoplsFetchesNoToolchain: a go.mod saying "go 1.99.0" makes the go
// command gopls runs ask the module proxy for that toolchain when
// GOTOOLCHAIN=auto, as a trusted folder's gopls does with the user's
// GOTOOLCHAIN=auto; an untrusted folder's gopls runs with
// GOTOOLCHAIN=local and asks for none.
func TestGoplsFetchesNoToolchain(t *testing.T) {
	needGopls(t)
	for _, trusted := range []bool{false, true} {
		t.Run(map[bool]string{false: "untrusted", true: "trusted"}[trusted], func(t *testing.T) {
			proxy := &proxyLog{}
			srv := httptest.NewServer(proxy)
			defer srv.Close()
			dir := t.TempDir()
			write(t, dir, "go.mod", "module example.com/m\n\ngo 1.99.0\n")
			write(t, dir, "a.go", goValid)
			// The package's helper environment pins GOTOOLCHAIN=local:
			// here the user's own environment says auto.
			env := slices.DeleteFunc(slices.Clone(helperEnv), func(kv string) bool { return strings.HasPrefix(kv, "GOTOOLCHAIN=") })
			opts := Options{
				Folders: func() []workspace.URI { return []workspace.URI{workspace.FileURI(dir)} },
				Env:     append(env, "GOTOOLCHAIN=auto", "GOPROXY="+srv.URL, "GOSUMDB=off"),
				Logger:  slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelWarn})),
			}
			if trusted {
				opts.Trusted = trusting
			}
			v := New(opts)
			a := uriOf(dir, "a.go")
			r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "\n"}})
			v.Close()
			got := proxy.asked("toolchain")
			t.Logf("%s; the proxy saw %v", r.Line(), proxy.asked(""))
			if trusted && len(got) == 0 {
				t.Errorf("trusted, GOTOOLCHAIN=auto: no toolchain asked for (proxy saw %v): the test's go.mod does not make the go command fetch one", proxy.asked(""))
			}
			if !trusted && len(got) != 0 {
				t.Errorf("untrusted: the go command asked the proxy for a toolchain: %v", got)
			}
		})
	}
}

// launched is what a stand-in helper was started with.
type launched struct {
	args []string
	env  []string
	init map[string]any // the initialize request's initializationOptions
}

// standIn writes a stand-in helper program named name (a real program's
// base name, so that its profile applies) that records its arguments,
// its environment and what it is sent, and never answers; it returns its
// path and a function that reads what it recorded.
func standIn(t *testing.T, name string) (string, func() launched) {
	t.Helper()
	bin, rec := t.TempDir(), t.TempDir()
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" > '" + rec + "/args'\nenv > '" + rec + "/env'\ncat > '" + rec + "/stdin'\n"
	write(t, bin, name, script)
	if err := os.Chmod(filepath.Join(bin, name), 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(bin, name), func() launched {
		t.Helper()
		var l launched
		args, err := os.ReadFile(filepath.Join(rec, "args"))
		if err != nil {
			t.Fatalf("the stand-in %s did not run: %v", name, err)
		}
		l.args = strings.Split(strings.TrimSuffix(string(args), "\n"), "\n")
		env, _ := os.ReadFile(filepath.Join(rec, "env"))
		l.env = strings.Split(string(env), "\n")
		in, _ := os.ReadFile(filepath.Join(rec, "stdin"))
		if _, body, ok := strings.Cut(string(in), "\r\n\r\n"); ok {
			var msg struct {
				Params struct {
					InitializationOptions map[string]any `json:"initializationOptions"`
				} `json:"params"`
			}
			if err := json.NewDecoder(strings.NewReader(body)).Decode(&msg); err != nil {
				t.Fatalf("the stand-in got no initialize request: %v (%q)", err, in)
			}
			l.init = msg.Params.InitializationOptions
		}
		return l
	}
}

// startStandIn starts the helper of file (its language's command is
// argv) in dir, trusted or not, and returns once its start timed out.
func startStandIn(t *testing.T, dir, lang, file string, argv Command, trusted bool) {
	t.Helper()
	opts := Options{Servers: map[string]Command{lang: argv}, Bounds: Bounds{Start: 2 * time.Second}}
	if trusted {
		opts.Trusted = trusting
	}
	v := newVerifier(t, dir, opts)
	a := uriOf(dir, file)
	t.Log(v.Check(context.Background(), nil, []File{{a, "\n"}}).Line())
	v.Close()
}

// jsonAt returns the value at a dotted path of m, or nil.
func jsonAt(m map[string]any, path string) any {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		o, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = o[k]
	}
	return cur
}

// TestUntrustedRustAnalyzerLaunch: an untrusted folder's rust-analyzer
// (a stand-in under its name) is started with build scripts, proc macros
// and the check on save off, with the rustc wrappers a
// .cargo/config.toml could name set empty, RUSTC the rustc on PATH (over
// its build.rustc) and rustup's automatic install of a
// rust-toolchain.toml's toolchain off; a trusted folder's gets none of
// that.
func TestUntrustedRustAnalyzerLaunch(t *testing.T) {
	// Not ours to begin with (a machine may set it), so that the trusted
	// helper shows what the profile adds.
	t.Setenv("RUSTUP_AUTO_INSTALL", "")
	os.Unsetenv("RUSTUP_AUTO_INSTALL")
	for _, trusted := range []bool{false, true} {
		t.Run(map[bool]string{false: "untrusted", true: "trusted"}[trusted], func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, ".cargo/config.toml", "[build]\nrustc-wrapper = \"./evil\"\nrustc = \"./evil\"\n")
			write(t, dir, "rust-toolchain.toml", "[toolchain]\nchannel = \"nightly-2020-01-01\"\n")
			prog, got := standIn(t, "rust-analyzer")
			startStandIn(t, dir, "rust", "src/main.rs", Command{prog}, trusted)
			l := got()
			want := map[string]any{"cargo.buildScripts.enable": false, "procMacro.enable": false, "checkOnSave": false}
			for path, val := range want {
				if g := jsonAt(l.init, path); trusted && g != nil || !trusted && g != val {
					t.Errorf("initializationOptions.%s = %v, want %v", path, g, map[bool]any{false: val, true: nil}[trusted])
				}
			}
			for _, name := range []string{"RUSTC_WRAPPER", "RUSTC_WORKSPACE_WRAPPER", "CARGO_BUILD_RUSTC_WRAPPER"} {
				if set := slices.Contains(l.env, name+"="); set == trusted {
					t.Errorf("%s set empty: %v, want %v", name, set, !trusted)
				}
			}
			if set := slices.Contains(l.env, "RUSTUP_AUTO_INSTALL=0"); set == trusted {
				t.Errorf("RUSTUP_AUTO_INSTALL=0: %v, want %v", set, !trusted)
			}
			// A .cargo/config.toml's build.rustc gives way to RUSTC: the
			// rustc on PATH, when there is one.
			if rustc, err := exec.LookPath("rustc"); err == nil && !trusted && !slices.Contains(l.env, "RUSTC="+rustc) {
				t.Errorf("RUSTC is not %s", rustc)
			}
		})
	}
}

// TestUntrustedClangdLaunch: an untrusted folder's clangd (a stand-in
// under its name, configured with a --query-driver and a background
// index) is started without them, without the project's .clangd
// (--enable-config=false) and without a background index; a trusted
// folder's runs as configured.
func TestUntrustedClangdLaunch(t *testing.T) {
	for _, trusted := range []bool{false, true} {
		t.Run(map[bool]string{false: "untrusted", true: "trusted"}[trusted], func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, ".clangd", "CompileFlags:\n  Compiler: ./evil\n")
			prog, got := standIn(t, "clangd")
			configured := Command{prog, "--query-driver=/usr/bin/**", "--background-index", "--log=error"}
			startStandIn(t, dir, "c", "a.c", configured, trusted)
			l := got()
			want := []string{"--log=error", "--background-index=false", "--enable-config=false"}
			if trusted {
				want = configured[1:]
			}
			if !slices.Equal(l.args, want) {
				t.Errorf("arguments %q, want %q", l.args, want)
			}
		})
	}
}

// TestConfigurationAnswers: workspace/configuration is answered from the
// profile by section (an untrusted folder's rust-analyzer gets its
// settings there too, pyright its interpreter), null for other sections.
func TestConfigurationAnswers(t *testing.T) {
	l, err := launchFor([]string{"rust-analyzer"}, "/usr/bin/rust-analyzer", nil, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &helper{launch: l}
	got, rerr := h.onRequest("workspace/configuration", json.RawMessage(`{"items":[{"section":"rust-analyzer"},{"section":"other"}]}`))
	if rerr != nil {
		t.Fatal(rerr)
	}
	items := got.([]any)
	if len(items) != 2 || items[1] != nil {
		t.Fatalf("got %v, want the profile's settings and null", items)
	}
	if m, _ := items[0].(map[string]any); jsonAt(m, "procMacro.enable") != false {
		t.Errorf("rust-analyzer's section: got %v, want procMacro.enable false", items[0])
	}
}

// TestTrustChangedRestartsHelpers: a helper started restricted is
// stopped when its folders become trusted (TrustChanged), and the next
// check starts another, unrestricted, in a slot of its own; the way back
// likewise.
func TestTrustChangedRestartsHelpers(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid})
	var trust atomic.Bool
	v := newVerifier(t, dir, Options{Trusted: func([]workspace.URI) bool { return trust.Load() }})
	a := uriOf(dir, "a.go")
	check := func() {
		t.Helper()
		if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "\n"}}); !r.Verified {
			t.Fatalf("got %+v, want verified", r)
		}
	}
	running := func(restricted bool) *helper {
		t.Helper()
		v.mu.Lock()
		s := v.helpers[slotKey(Command{"gopls"}, restricted)]
		v.mu.Unlock()
		if s == nil {
			return nil
		}
		s.start.Lock()
		defer s.start.Unlock()
		return s.h
	}
	check()
	old := running(true)
	if old == nil || !old.restricted {
		t.Fatalf("untrusted: no restricted gopls running")
	}
	for _, to := range []bool{true, false} {
		trust.Store(to)
		v.TrustChanged()
		select {
		case <-old.exited:
		case <-time.After(ColdTimeout + 5*time.Second):
			t.Fatalf("trusted now %v: the helper started for the other trust did not exit", to)
		}
		if running(!to) != nil {
			t.Errorf("trusted now %v: the slot of the other trust still holds a helper", to)
		}
		check()
		h := running(!to)
		if h == nil || h == old || h.restricted == to {
			t.Fatalf("trusted now %v: got helper %+v, want a new one, restricted %v", to, h, !to)
		}
		old = h
	}
	// Nothing changed: the helper stays.
	v.TrustChanged()
	if running(true) != old {
		t.Errorf("TrustChanged without a change stopped the helper")
	}
}

// TestUntrustedClangdWritesNoIndex: the real clangd, given a
// compile_commands.json, writes its background index into the work tree
// (.cache/clangd) in a trusted folder; in an untrusted one it checks the
// edit and writes none.
func TestUntrustedClangdWritesNoIndex(t *testing.T) {
	needInstalled(t, "clangd", "apt-get install clangd")
	var took time.Duration
	for _, trusted := range []bool{true, false} {
		t.Run(map[bool]string{false: "untrusted", true: "trusted"}[trusted], func(t *testing.T) {
			dir := t.TempDir()
			text := "int f(void) { return 1; }\n"
			write(t, dir, "a.c", text)
			write(t, dir, "b.c", "int g(void) { return 2; }\n")
			write(t, dir, "compile_commands.json", `[{"directory": `+jsonString(dir)+`, "command": "cc -c a.c", "file": "a.c"},
 {"directory": `+jsonString(dir)+`, "command": "cc -c b.c", "file": "b.c"}]`)
			opts := Options{}
			if trusted {
				opts.Trusted = trusting
			}
			v := newVerifier(t, dir, opts)
			a := uriOf(dir, "a.c")
			start := time.Now()
			r := v.Check(context.Background(), []File{{a, text}}, []File{{a, text + "int h(void) { return f(); }\n"}})
			if !r.Verified || len(r.NewErrors) != 0 {
				t.Fatalf("got %+v, want verified, no new errors", r)
			}
			index := filepath.Join(dir, ".cache", "clangd")
			if trusted {
				// The index is written in the background: wait for it.
				for deadline := time.Now().Add(30 * time.Second); !ran(index) && time.Now().Before(deadline); {
					time.Sleep(100 * time.Millisecond)
				}
				took = time.Since(start)
				if !ran(index) {
					t.Fatalf("trusted: clangd wrote no .cache/clangd in 30s: the test's project is not one it indexes")
				}
				return
			}
			if want := "verified by clangd (untrusted folder: without the project's .clangd): no new errors"; r.Line() != want {
				t.Errorf("got %q, want %q", r.Line(), want)
			}
			// As long again as the trusted clangd took to write its index,
			// and more.
			time.Sleep(max(2*took, 2*time.Second) - time.Since(start))
			if ran(index) {
				t.Errorf("untrusted: clangd wrote %s", index)
			}
		})
	}
}

// jsonString quotes s as a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestUntrustedFolderAddedStopsTrustedHelper: a trusted folder's helper
// is stopped when a folder the user does not trust is added
// (FoldersChanged): it never hears of that folder, and the next check
// runs restricted.
func TestUntrustedFolderAddedStopsTrustedHelper(t *testing.T) {
	needGopls(t)
	first := goModule(t, map[string]string{"a.go": goValid})
	second := goModule(t, map[string]string{"b.go": goValid})
	var mu sync.Mutex
	folders := []workspace.URI{workspace.FileURI(first)}
	v := New(Options{
		Folders: func() []workspace.URI {
			mu.Lock()
			defer mu.Unlock()
			return slices.Clone(folders)
		},
		Trusted: func(fs []workspace.URI) bool { return !slices.Contains(fs, workspace.FileURI(second)) },
		Env:     helperEnv,
	})
	defer v.Close()
	a := uriOf(first, "a.go")
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid + "\n"}}); !r.Verified {
		t.Fatalf("got %+v, want verified", r)
	}
	v.mu.Lock()
	s := v.helpers[slotKey(Command{"gopls"}, false)]
	v.mu.Unlock()
	if s == nil || s.h == nil || s.h.restricted {
		t.Fatal("no unrestricted gopls running for the trusted folder")
	}
	h := s.h
	mu.Lock()
	folders = append(folders, workspace.FileURI(second))
	mu.Unlock()
	v.FoldersChanged()
	select {
	case <-h.exited:
	case <-time.After(ColdTimeout + 5*time.Second):
		t.Fatal("the trusted folder's gopls did not stop after an untrusted folder was added")
	}
	b := uriOf(second, "b.go")
	if r := v.Check(context.Background(), []File{{b, goValid}}, []File{{b, goValid + "\n"}}); !r.Verified {
		t.Fatalf("got %+v, want verified", r)
	}
	v.mu.Lock()
	rs := v.helpers[slotKey(Command{"gopls"}, true)]
	v.mu.Unlock()
	if rs == nil || rs.h == nil || !rs.h.restricted {
		t.Error("the check after the untrusted folder was added did not run a restricted gopls")
	}
}
