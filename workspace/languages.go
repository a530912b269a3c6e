package workspace

import (
	"cmp"
	"path"
	"slices"
	"strings"
	"sync"
)

// Project languages: the prompt's project block names the workspace's main
// languages (cache.Project.Languages), most files first. Languages are
// counted by file, in three tiers: programming languages; languages that
// support a project (build files, scripts, styles, schemas); data and
// markup. The first tier that has files is reported, so a Go module with a
// Makefile, a Dockerfile and a README says "go", and a repository of
// Markdown alone says "markdown".

// maxProjectLanguages bounds how many languages are reported.
const maxProjectLanguages = 4

// minLanguageShare is the share of its tier's files, in percent, a language
// needs to be reported (the most used one always is).
const minLanguageShare = 10

// languageTier ranks what a language says about a project: 0 for a
// programming language, 1 for a supporting one, 2 for data and markup.
func languageTier(lang string) int {
	switch lang {
	case "makefile", "dockerfile", "shellscript", "sql", "proto", "html", "css", "scss", "less", "terraform", "nix":
		return 1
	case "json", "jsonc", "yaml", "toml", "xml", "markdown", "plaintext", "go.mod", "go.sum":
		return 2
	}
	return 0
}

// ProjectLanguages returns the main languages of a project whose files are
// paths (any separator): LSP language identifiers, most files first, ties
// by name. The result depends only on the set of paths, so it stays the
// same from request to request while the files do.
func ProjectLanguages(paths []string) []string {
	var counts [3]map[string]int
	for _, p := range paths {
		lang := LanguageOf(p)
		if lang == "" {
			continue
		}
		tier := languageTier(lang)
		if counts[tier] == nil {
			counts[tier] = map[string]int{}
		}
		counts[tier][lang]++
	}
	for _, c := range counts {
		if len(c) == 0 {
			continue
		}
		total := 0
		langs := make([]string, 0, len(c))
		for lang, n := range c {
			total += n
			langs = append(langs, lang)
		}
		slices.SortFunc(langs, func(a, b string) int {
			return cmp.Or(cmp.Compare(c[b], c[a]), cmp.Compare(a, b))
		})
		out := langs[:1]
		for _, lang := range langs[1:] {
			if len(out) == maxProjectLanguages || c[lang]*100 < total*minLanguageShare {
				break
			}
			out = append(out, lang)
		}
		return slices.Clip(out)
	}
	return nil
}

// Languages returns the main languages of the folders' files (see
// ProjectLanguages), nil on a nil Folders or before any first scan is done.
// They are counted once, when every folder's first scan is done, and kept
// until a folder is added or removed: the prompt's project block stays the
// same from request to request (a change there rewrites the whole cached
// prefix), and a request does not count a large workspace's files again.
func (f *Folders) Languages() []string {
	if f == nil {
		return nil
	}
	views := f.Views()
	f.langs.mu.Lock()
	defer f.langs.mu.Unlock()
	if f.langs.counted && slices.Equal(f.langs.views, views) {
		return f.langs.list
	}
	var paths []string
	ready := true
	for _, v := range views {
		t := v.treeIfReady()
		if t == nil {
			ready = false
			continue
		}
		for _, e := range t.Entries() {
			paths = append(paths, e.Path)
		}
	}
	list := ProjectLanguages(paths)
	if ready {
		f.langs.views, f.langs.list, f.langs.counted = views, list, true
	}
	return list
}

// languageMemo keeps the languages Folders.Languages counted and the
// folders they were counted for.
type languageMemo struct {
	mu      sync.Mutex
	counted bool
	views   []*View
	list    []string
}

// languages maps file extensions to LSP language identifiers.
var languages = map[string]string{
	".go": "go", ".mod": "go.mod", ".sum": "go.sum",
	".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
	".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
	".py": "python", ".pyi": "python",
	".rs": "rust", ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
	".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala", ".swift": "swift",
	".rb": "ruby", ".php": "php", ".cs": "csharp", ".fs": "fsharp", ".lua": "lua", ".zig": "zig",
	".sh": "shellscript", ".bash": "shellscript", ".zsh": "shellscript",
	".json": "json", ".jsonc": "jsonc", ".yaml": "yaml", ".yml": "yaml", ".toml": "toml", ".xml": "xml",
	".html": "html", ".htm": "html", ".css": "css", ".scss": "scss", ".less": "less",
	".md": "markdown", ".markdown": "markdown", ".sql": "sql", ".proto": "proto",
	".vue": "vue", ".svelte": "svelte", ".dart": "dart", ".ex": "elixir", ".exs": "elixir",
	".erl": "erlang", ".hs": "haskell", ".ml": "ocaml", ".clj": "clojure", ".r": "r", ".jl": "julia",
	".tf": "terraform", ".nix": "nix", ".txt": "plaintext",
}

// LanguageOf returns the LSP language identifier for a file name, from its
// extension ("go", "typescript", "python"…), or "" when unknown. Dockerfile
// and Makefile are recognised by name.
func LanguageOf(name string) string {
	base := path.Base(strings.ReplaceAll(name, `\`, "/"))
	switch base {
	case "Dockerfile", "Containerfile":
		return "dockerfile"
	case "Makefile", "GNUmakefile", "makefile":
		return "makefile"
	}
	return languages[strings.ToLower(path.Ext(base))]
}
