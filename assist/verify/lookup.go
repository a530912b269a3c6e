package verify

import (
	"bufio"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Found is the helper that would check one or more languages, found as a
// check finds it (doctor lists them).
type Found struct {
	// Languages are the LSP languages it checks, sorted.
	Languages []string
	// Command is its command line; Path the program found, "" when none
	// is (Missing then names what was looked for). Off: the configuration
	// maps the languages to no helper.
	Command Command
	Path    string
	Missing string
	Off     bool
}

// Lookup lists the helper of every language of DefaultServers and of
// servers (which override them, as Options.Servers does), languages with
// one command together: the program each would start, found on the PATH of
// environ less its relative entries and those inside folders — where a
// check looks — or what is missing.
func Lookup(servers map[string]Command, folders []string, environ []string) []Found {
	list := cleanPath(envValue(environ, "PATH"), folders)
	langs := slices.Sorted(maps.Keys(DefaultServers))
	for l := range servers {
		if !slices.Contains(langs, l) {
			langs = append(langs, l)
		}
	}
	slices.Sort(langs)
	var out []Found
	index := map[string]int{}
	for _, lang := range langs {
		var f Found
		var cands []Command
		if cands, f.Off = candidates(servers, lang); !f.Off {
			f.Command, f.Path, f.Missing = findCommand(cands, list)
		}
		key := strings.Join(f.Command, "\x00") + "\x01" + f.Missing
		if f.Off {
			key = "\x02off"
		}
		if i, ok := index[key]; ok {
			out[i].Languages = append(out[i].Languages, lang)
			continue
		}
		f.Languages = []string{lang}
		index[key] = len(out)
		out = append(out, f)
	}
	return out
}

// versionArgs are the arguments that make a known helper print its version
// and exit; a program not listed is not run.
var versionArgs = map[string][]string{
	"gopls":                      {"version"},
	"typescript-language-server": {"--version"},
	"rust-analyzer":              {"--version"},
	"clangd":                     {"--version"},
}

// versionSibling is the program beside a helper that prints the helper's
// version (the language server itself has no such flag).
var versionSibling = map[string]string{
	"pyright-langserver":      "pyright",
	"basedpyright-langserver": "basedpyright",
}

// Version returns the first line a known helper at path prints for its
// version ("" when it is not known, or says nothing within the bound). It
// runs outside every workspace folder, with the environment a trusted
// helper gets (allowedEnv: no credentials), stdin closed.
func Version(ctx context.Context, path string, environ []string) string {
	name := filepath.Base(path)
	args, ok := versionArgs[name]
	if sib, isSib := versionSibling[name]; isSib {
		path, args, ok = filepath.Join(filepath.Dir(path), sib), []string{"--version"}, true
		if _, err := os.Stat(path); err != nil {
			return ""
		}
	}
	if !ok {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = os.TempDir()
	cmd.Env = allowedEnv(environ, true)
	b, err := cmd.Output()
	if err != nil && len(b) == 0 {
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			return line
		}
	}
	return ""
}
