package workspace

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func names(cs []ContextFile) string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Path+"("+string(c.Reason)+")")
	}
	return strings.Join(out, " ")
}

// goTree is a small Go module with a package importing another.
func goTree(t *testing.T) string {
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module example.com/m // the module\n\ngo 1.22\n")
	writeFile(t, root, "cmd/app/main.go", "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/m/internal/store\"\n\tu \"example.com/m/util\"\n\t\"example.org/other\"\n)\n")
	writeFile(t, root, "cmd/app/flags.go", "package main\n")
	writeFile(t, root, "cmd/app/main_test.go", "package main\n")
	writeFile(t, root, "cmd/app/README.md", "# app\n")
	writeFile(t, root, "internal/store/store.go", "package store\n")
	writeFile(t, root, "internal/store/store_test.go", "package store\n")
	writeFile(t, root, "util/util.go", "package util\n")
	writeFile(t, root, "util/.env", "TOKEN=abc")
	writeFile(t, root, "docs/guide.md", "# guide\n")
	writeFile(t, root, "node_modules/dep/index.js", "module.exports = 1\n")
	return root
}

func TestSelectGo(t *testing.T) {
	root := goTree(t)
	f := newFolders(t, DefaultOptions(), Hooks{}, root)
	active := FileURI(filepath.Join(root, "cmd/app/main.go"))
	in := SelectInput{
		Active:     active,
		ActiveText: "package main\n\nimport (\n\t\"fmt\"\n\t\"example.com/m/internal/store\"\n\tu \"example.com/m/util\"\n\t\"example.org/other\"\n)\n",
		Open: []OpenBuffer{
			{URI: FileURI(filepath.Join(root, "docs/guide.md")), Text: "# guide (edited)\n", LastEdit: 5},
			{URI: FileURI(filepath.Join(root, "util/.env")), Text: "TOKEN=abc", LastEdit: 9},
			{URI: active, Text: "package main", LastEdit: 10},
			{URI: "untitled:Untitled-1", Text: "scratch", LastEdit: 7},
		},
		Recent: []URI{FileURI(filepath.Join(root, "go.mod")), FileURI(filepath.Join(root, "util/.env")),
			FileURI(filepath.Join(root, "node_modules/dep/index.js"))},
	}
	got := f.Select(in)
	want := "cmd/app/flags.go(same-dir) cmd/app/main_test.go(same-dir) " +
		"go.mod(recent) internal/store/store.go(import) util/util.go(import) docs/guide.md(open)"
	if names(got) != want {
		t.Errorf("Select =\n  %s\nwant\n  %s", names(got), want)
	}
	for _, c := range got {
		if strings.Contains(c.Text, "TOKEN") {
			t.Errorf("a secret's bytes were selected: %+v", c)
		}
		if c.URI == active {
			t.Errorf("the active document was selected")
		}
	}
	if got[len(got)-1].Text != "# guide (edited)\n" || got[len(got)-1].Language != "markdown" {
		t.Errorf("open buffer text/language = %q/%q", got[len(got)-1].Text, got[len(got)-1].Language)
	}
	// Deterministic: same state, same selection, same order.
	for i := 0; i < 5; i++ {
		if again := f.Select(in); !reflect.DeepEqual(again, got) {
			t.Fatalf("second selection differs:\n%s\n%s", names(again), names(got))
		}
	}
	// Switches.
	opts := DefaultOptions()
	opts.IncludeRelated, opts.IncludeRecent = false, false
	f.SetOptions(opts)
	if got := names(f.Select(in)); got != "docs/guide.md(open)" {
		t.Errorf("open only: %s", got)
	}
}

func TestSelectBudget(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a.py", "import big\nimport small\n")
	writeFile(t, root, "big.py", strings.Repeat("x = 1\n", 1000)) // ~1900 tokens
	writeFile(t, root, "small.py", "y = 2\n")
	writeFile(t, root, "huge.py", strings.Repeat("z", 2<<20)) // over the size cap
	opts := DefaultOptions()
	opts.MaxTokens = 500
	f := newFolders(t, opts, Hooks{}, root)
	got := f.Select(SelectInput{Active: FileURI(filepath.Join(root, "a.py")), ActiveText: "import big\nimport small\n"})
	if names(got) != "small.py(import)" {
		t.Errorf("within 500 tokens: %s", names(got))
	}
	total := 0
	for _, c := range got {
		total += EstimateTokens(c.Text)
	}
	if total > 500 {
		t.Errorf("selected %d tokens, budget 500", total)
	}
}

func TestSelectTypeScriptAndPython(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "web/src/app.ts", "")
	writeFile(t, root, "web/src/api.ts", "export const api = 1")
	writeFile(t, root, "web/src/ui/index.tsx", "export {}")
	writeFile(t, root, "web/src/esm.ts", "export {}")
	writeFile(t, root, "web/lib/util.js", "module.exports = {}")
	writeFile(t, root, "web/src/style.css", "body{}")
	writeFile(t, root, "py/pkg/__init__.py", "")
	writeFile(t, root, "py/pkg/mod.py", "from . import helpers\nfrom .sub import thing\nimport os, json\nfrom ..top import x\n")
	writeFile(t, root, "py/pkg/helpers.py", "")
	writeFile(t, root, "py/pkg/sub/__init__.py", "")
	writeFile(t, root, "py/pkg/sub/thing.py", "")
	writeFile(t, root, "py/top.py", "")
	writeFile(t, root, "py/other.txt", "")
	opts := DefaultOptions()
	opts.IncludeRecent = false
	f := newFolders(t, opts, Hooks{}, root)

	ts := "import { api } from './api'\nimport UI from \"./ui\"\nimport './esm.js'\nconst u = require('../lib/util')\nimport React from 'react'\n"
	got := f.Select(SelectInput{Active: FileURI(filepath.Join(root, "web/src/app.ts")), ActiveText: ts})
	want := "web/lib/util.js(import) web/src/api.ts(import) web/src/esm.ts(import) web/src/style.css(same-dir) web/src/ui/index.tsx(import)"
	if names(got) != want {
		t.Errorf("TypeScript:\n  %s\nwant\n  %s", names(got), want)
	}

	py := "from . import helpers\nfrom .sub import thing\nimport os, json\nfrom ..top import x\n"
	got = f.Select(SelectInput{Active: FileURI(filepath.Join(root, "py/pkg/mod.py")), ActiveText: py})
	want = "py/pkg/__init__.py(same-dir) py/pkg/helpers.py(import) py/pkg/sub/__init__.py(import) py/pkg/sub/thing.py(import) py/top.py(import)"
	if names(got) != want {
		t.Errorf("Python:\n  %s\nwant\n  %s", names(got), want)
	}
}

func TestImportParsers(t *testing.T) {
	if got := goImports("package x\nimport (\n\"a/b\"\n_ \"c\"\n)\nfunc f() {"); fmt.Sprint(got) != "[a/b c]" {
		t.Errorf("goImports = %v", got)
	}
	for src, want := range map[string]string{
		"module example.com/m\n":              "example.com/m",
		"// c\nmodule \"example.com/q\" // x": "example.com/q",
		"modules x\n":                         "",
		"go 1.22\n":                           "",
	} {
		if got := goModulePath(src); got != want {
			t.Errorf("goModulePath(%q) = %q, want %q", src, got, want)
		}
	}
	js := "export * from './a'\nimport x, { y } from \"../b\"\nimport('./c')\nexport { z } from './a'\nimport \"./d.css\"\n"
	if got := fmt.Sprint(jsImports(js)); got != "[./a ../b ./c ./d.css]" {
		t.Errorf("jsImports = %s", got)
	}
	if got := fmt.Sprint(pyImports("import a.b as c, d\nfrom x import (y, z)\nfrom . import w  # c\n")); got != "[{0 a.b []} {0 d []} {0 x [y z]} {1  [w]}]" {
		t.Errorf("pyImports = %s", got)
	}
	if got := jsCandidates("", "../escape"); got != nil {
		t.Errorf("jsCandidates climbing out = %v", got)
	}
	if got := LanguageOf("dir/Dockerfile") + LanguageOf("x.TSX") + LanguageOf("x.unknown"); got != "dockerfiletypescriptreact" {
		t.Errorf("LanguageOf = %q", got)
	}
}

func FuzzImportParsers(f *testing.F) {
	f.Add("package x\nimport \"a\"\n", "module m\n")
	f.Add("import {a} from './b'\nrequire('../c')", "module \"q\"")
	f.Add("from ...a.b import (c,\n d)\nimport e as f", "")
	f.Fuzz(func(t *testing.T, src, gomod string) {
		goImports(src)
		goModulePath(gomod)
		for _, s := range jsImports(src) {
			for _, c := range jsCandidates("a/b", s) {
				if strings.HasPrefix(c, "../") {
					t.Fatalf("candidate %q outside the folder", c)
				}
			}
		}
		for _, imp := range pyImports(src) {
			pyCandidates("a/b", imp)
		}
	})
}
