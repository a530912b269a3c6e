package verify

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// launch is how a helper is started: its command line, what is added to
// its environment, its initializationOptions and its answers to
// workspace/configuration, all from the program's profile (profileFor).
type launch struct {
	argv []string // the command line run (the configured one, or the profile's)
	env  []string // added after everything else: the profile's own
	init any      // initializationOptions
	// config answers workspace/configuration by section; a section not
	// in it is answered null.
	config map[string]any
	// note says what a restricted helper does without ("without the
	// workspace's environment"); "" when the restriction hides nothing a
	// check uses, or the helper is not restricted.
	note string
}

// programName is the base name a profile is keyed on: the program's,
// without ".exe", so that a verify.servers entry naming gopls by its path
// gets gopls's profile.
func programName(argv []string) string {
	return strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
}

// launchFor returns how to start argv (path is its resolved program)
// with the environment env, restricted (an untrusted folder) or not, in
// the folders. A restricted helper runs none of the workspace's code
// that its profile knows of: see the package doc, "Trust". An error says
// why a restricted helper cannot be started at all (then the check ends
// unverified with it).
func launchFor(argv []string, path string, env []string, restricted bool, folders []string) (launch, error) {
	l := launch{argv: argv}
	switch programName(argv) {
	case "gopls":
		l.init = goplsOptions()
		// A repository never makes the go command fetch and run a
		// toolchain (a go.mod's "go 1.99" or "toolchain" line): only a
		// trusted folder's helper keeps a GOTOOLCHAIN the user set.
		if restricted || envValue(env, "GOTOOLCHAIN") == "" {
			l.env = append(l.env, "GOTOOLCHAIN=local")
		}
	case "pyright-langserver", "basedpyright-langserver":
		if !restricted {
			break
		}
		l.note = "without the workspace's environment"
		python := pythonFor(env, folders)
		// pythonPath names the interpreter pyright asks for its search
		// paths; without one on PATH it is a file that does not exist, so
		// that pyright looks for none (not even a .venv of the
		// workspace) and analyses with its bundled stubs only.
		if python == "" {
			python = filepath.Join(os.TempDir(), "kimi-lsp-no-python", "python3")
		}
		l.config = map[string]any{
			"python": map[string]any{"pythonPath": python, "venvPath": "", "venv": ""},
		}
	case "typescript-language-server":
		if !restricted {
			break
		}
		tsserver := bundledTypeScript(path, folders)
		if tsserver == "" {
			return l, errors.New("has no TypeScript of its own beside it (an untrusted folder's own TypeScript is not run): install typescript next to typescript-language-server (npm install -g typescript), or trust the folder")
		}
		l.note = "with its own TypeScript, without the workspace's plugins"
		l.init = map[string]any{
			"tsserver":                          map[string]any{"path": tsserver},
			"disableAutomaticTypingAcquisition": true,
			"plugins":                           []any{},
		}
	case "rust-analyzer":
		if !restricted {
			break
		}
		l.note = "without build scripts and proc macros"
		opts := map[string]any{
			"cargo":       map[string]any{"buildScripts": map[string]any{"enable": false}},
			"procMacro":   map[string]any{"enable": false},
			"checkOnSave": false,
		}
		l.init = opts
		l.config = map[string]any{"rust-analyzer": opts}
		// A .cargo/config.toml's build.rustc-wrapper would run on cargo
		// metadata: these variables, set empty, override it.
		l.env = append(l.env, "RUSTC_WRAPPER=", "RUSTC_WORKSPACE_WRAPPER=",
			"CARGO_BUILD_RUSTC_WRAPPER=", "CARGO_BUILD_RUSTC_WORKSPACE_WRAPPER=",
			// rustup installs no toolchain a rust-toolchain.toml names
			// (rustup 1.28 and later; older ones ignore it).
			"RUSTUP_AUTO_INSTALL=0")
		// Its build.rustc likewise: RUSTC wins over it.
		if rustc, err := lookPath("rustc", envValue(env, "PATH")); err == nil {
			l.env = append(l.env, "RUSTC="+rustc)
		}
	case "clangd":
		if !restricted {
			break
		}
		l.note = "without the project's .clangd"
		out := []string{argv[0]}
		for i := 1; i < len(argv); i++ {
			a := argv[i]
			switch {
			case a == "--query-driver" || a == "-query-driver":
				i++ // and its value
				continue
			case strings.HasPrefix(a, "--query-driver="), strings.HasPrefix(a, "-query-driver="),
				strings.HasPrefix(a, "--background-index"), strings.HasPrefix(a, "--enable-config"),
				strings.HasPrefix(a, "--index-file"):
				continue
			}
			out = append(out, a)
		}
		l.argv = append(out, "--background-index=false", "--enable-config=false")
	}
	return l, nil
}

// pythonFor returns the interpreter an untrusted folder's pyright is
// given: python3 (else python) found on env's PATH, which cleanPath has
// left without the folders' entries, resolved to the executable it runs
// (a pyenv shim picks its Python by the directory's .python-version, so
// it is asked from a directory of its own, and the executable it names
// is what pyright runs). "" when there is none outside the folders.
func pythonFor(env []string, folders []string) string {
	path := envValue(env, "PATH")
	for _, name := range []string{"python3", "python"} {
		p, err := lookPath(name, path)
		if err != nil {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cmd := exec.CommandContext(ctx, p, "-I", "-c", "import sys; print(sys.executable)")
		cmd.Dir, cmd.Env = os.TempDir(), env
		out, err := cmd.Output()
		cancel()
		exe := strings.TrimSpace(string(out))
		if err != nil || exe == "" || !filepath.IsAbs(exe) || insideAny(exe, folders) {
			continue
		}
		return exe
	}
	return ""
}

// bundledTypeScript returns the tsserver.js of the TypeScript that ships
// beside typescript-language-server (program is its resolved
// executable): the typescript package node would resolve from the real
// file the executable links to (its own node_modules, or the one it is
// installed in: npm install -g puts the two side by side), never one
// inside the folders. "" when there is none.
func bundledTypeScript(program string, folders []string) string {
	real, err := filepath.EvalSymlinks(program)
	if err != nil {
		return ""
	}
	for dir := filepath.Dir(real); ; {
		if filepath.Base(dir) != "node_modules" {
			ts := filepath.Join(dir, "node_modules", "typescript")
			js := filepath.Join(ts, "lib", "tsserver.js")
			if isFile(js) && isFile(filepath.Join(ts, "package.json")) {
				if r, err := filepath.EvalSymlinks(js); err == nil && !insideAny(r, folders) {
					return r
				}
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}
