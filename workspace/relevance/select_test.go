package relevance

import (
	"context"
	"fmt"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
)

func names(cs []ContextFile) string {
	var out []string
	for _, c := range cs {
		s := c.Path
		if c.Part != "" {
			s += "#" + c.Part
		}
		s += "(" + string(c.Reason)
		if c.Volatile {
			s += ",volatile"
		}
		out = append(out, s+")")
	}
	return strings.Join(out, " ")
}

// filler makes a Go comment block of about n bytes, so that a file is
// larger than SmallFileBytes and enters by snippets only.
func filler(n int) string {
	return strings.Repeat("// Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n", n/60+1)
}

// shopTree is a Go module: package shop (the active file cart.go, and
// pricing.go, types.go, big.go, none of them open) importing package
// example.com/m/store.
func shopTree(t *testing.T) string {
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module example.com/m\n\ngo 1.22\n")
	writeFile(t, root, "shop/cart.go", cartGo)
	writeFile(t, root, "shop/pricing.go", "package shop\n\n"+filler(8000)+`
// Price returns what item costs, discounts applied.
func Price(item Item, qty int) Money {
	return Money(item.Cents * qty)
}

// unrelated is never called by the cart.
func unrelated() {}
`)
	writeFile(t, root, "shop/types.go", `package shop

// Item is a thing for sale.
type Item struct {
	Name  string
	Cents int
}

// Money is an amount in cents.
type Money int
`)
	writeFile(t, root, "shop/big.go", "package shop\n\n"+filler(9000)+"\n// Audit logs a cart.\nfunc Audit(c *Cart) {}\n")
	writeFile(t, root, "store/store.go", "package store\n\n"+filler(7000)+`
// Save writes the cart total to the database.
func Save(total int) error { return nil }

// Load is not used by the cart.
func Load() int { return 0 }
`)
	return root
}

const cartGo = `package shop

import "example.com/m/store"

// Cart holds items.
type Cart struct {
	Items []Item
}

// Total sums the cart and saves it.
func (c *Cart) Total() Money {
	var sum Money
	for _, it := range c.Items {
		sum += Price(it, 1)
	}
	store.Save(int(sum))
	return sum
}

// Check is audited.
func (c *Cart) Check() {
	Audit(c)
}
`

func selectIn(root, active, text, sel string, budget int, open ...*workspace.Snapshot) SelectInput {
	start := strings.Index(text, sel)
	return SelectInput{Active: workspace.FileURI(filepath.Join(root, active)), ActiveText: text,
		SelStart: start, SelEnd: start + len(sel), Open: open, Budget: budget}
}

func find(cs []ContextFile, path, part string) (ContextFile, bool) {
	for _, c := range cs {
		if c.Path == path && c.Part == part {
			return c, true
		}
	}
	return ContextFile{}, false
}

// TestSelectDefinitionsFromClosedFiles: a selection calling functions and
// using types declared in files that are not open gets their declarations,
// with their doc comments: large files by snippets, small ones whole.
func TestSelectDefinitionsFromClosedFiles(t *testing.T) {
	root := shopTree(t)
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	sel := "\tfor _, it := range c.Items {\n\t\tsum += Price(it, 1)\n\t}\n\tstore.Save(int(sum))\n"
	got := Select(Workspace(f), selectIn(root, "shop/cart.go", cartGo, sel, 200_000))
	t.Logf("selected: %s", names(got))
	price, ok := find(got, "shop/pricing.go", "func Price")
	if !ok || !strings.HasPrefix(price.Text, "// Price returns what item costs") || !strings.Contains(price.Text, "return Money(") {
		t.Fatalf("Price's declaration is missing or wrong: %+v", price)
	}
	if price.Line != strings.Count(filler(8000), "\n")+4 {
		t.Errorf("Price's line = %d", price.Line)
	}
	save, ok := find(got, "store/store.go", "func Save")
	if !ok || !strings.Contains(save.Text, "// Save writes the cart total") {
		t.Errorf("store.Save's declaration is missing: %s", names(got))
	}
	if _, ok := find(got, "shop/types.go", ""); !ok {
		t.Errorf("types.go (small, declares Item and Money) is not there whole: %s", names(got))
	}
	if _, ok := find(got, "shop/big.go", "func Audit"); !ok {
		t.Errorf("Audit, used elsewhere in the active file, is not there: %s", names(got))
	}
	for _, c := range got {
		if strings.Contains(c.Text, "func unrelated") || strings.Contains(c.Text, "func Load") {
			t.Errorf("an unused declaration of a large file entered: %s#%s", c.Path, c.Part)
		}
		if c.Part == "" && c.Path != "shop/types.go" {
			t.Errorf("a large file entered whole: %s", c.Path)
		}
	}
	// Determinism.
	for range 3 {
		if again := Select(Workspace(f), selectIn(root, "shop/cart.go", cartGo, sel, 200_000)); names(again) != names(got) {
			t.Fatalf("another selection differs:\n%s\n%s", names(again), names(got))
		}
	}
}

// TestSelectVolatile: the stable part does not depend on the selection;
// what a tight budget leaves out of it and the selection needs goes to the
// volatile part.
func TestSelectVolatile(t *testing.T) {
	root := shopTree(t)
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	stable := func(cs []ContextFile) string {
		return names(slices.DeleteFunc(slices.Clone(cs), func(c ContextFile) bool { return c.Volatile }))
	}
	// With room for everything, the stable part holds (most used first)
	// types.go, Price, Save and Audit. Make its budget one byte short of
	// that, so that the last one, Audit, is left out of it.
	all := Select(Workspace(f), selectIn(root, "shop/cart.go", cartGo, "Audit(c)", 1_000_000))
	need, audit := 0, 0
	for _, c := range all {
		need += c.Cost()
		if c.Part == "func Audit" {
			audit = c.Cost()
		}
	}
	if audit == 0 || len(all) != 4 {
		t.Fatalf("with room for everything: %s", names(all))
	}
	budget := need - 1
	for budget-int(float64(budget)*VolatileShare) < need-1 {
		budget++
	}
	a := Select(Workspace(f), selectIn(root, "shop/cart.go", cartGo, "Audit(c)", budget))
	b := Select(Workspace(f), selectIn(root, "shop/cart.go", cartGo, "store.Save(int(sum))", budget))
	if stable(a) != stable(b) {
		t.Errorf("the stable part depends on the selection:\n%s\n%s", stable(a), stable(b))
	}
	if strings.Contains(stable(a), "Audit") {
		t.Fatalf("Audit is in the stable part: %s", names(a))
	}
	if c, ok := find(a, "shop/big.go", "func Audit"); !ok || !c.Volatile || c.Reason != ReasonRef {
		t.Errorf("the selection's Audit is not in the volatile part: %s", names(a))
	}
	if _, ok := find(b, "shop/big.go", "func Audit"); ok {
		t.Errorf("Audit is there for a selection that does not use it: %s", names(b))
	}
	total := 0
	for _, c := range a {
		total += c.Cost()
	}
	if total > budget {
		t.Errorf("selected %d bytes, budget %d: %s", total, budget, names(a))
	}
}

// TestSelectBigUnrelatedBuffersStayOut: six large unrelated buffers open in
// another folder never enter, whatever the budget; a tight budget keeps the
// selection's declarations.
func TestSelectBigUnrelatedBuffersStayOut(t *testing.T) {
	root := shopTree(t)
	other := t.TempDir()
	var open []buf
	for i := range 6 {
		p := writeFile(t, other, fmt.Sprintf("lib/unrelated%d.go", i), fmt.Sprintf("package lib\n\n%s\nfunc Unrelated%d() {}\n", filler(36_000), i))
		text, _ := os.ReadFile(p)
		open = append(open, buf{workspace.FileURI(p), string(text)})
	}
	small := writeFile(t, other, "lib/note.go", "package lib\n\n// Note is small and open.\nvar Note = 1\n")
	open = append(open, buf{workspace.FileURI(small), "package lib\n\n// Note is small and open.\nvar Note = 1\n"})
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root, other)
	for _, budget := range []int{3000, 1_000_000} {
		got := Select(Workspace(f), selectIn(root, "shop/cart.go", cartGo, "sum += Price(it, 1)", budget, buffers(t, open...)...))
		for _, c := range got {
			if strings.Contains(c.Path, "unrelated") {
				t.Errorf("budget %d: a big unrelated buffer entered: %s", budget, names(got))
			}
		}
		if _, ok := find(got, filepath.Base(root)+"/shop/pricing.go", "func Price"); !ok {
			t.Errorf("budget %d: Price is missing: %s", budget, names(got))
		}
		if _, note := find(got, filepath.Base(other)+"/lib/note.go", ""); budget > 10_000 && !note {
			t.Errorf("budget %d: the small open buffer is missing: %s", budget, names(got))
		}
	}
}

// TestSelectNeverPullsSecrets: a reference never pulls in a secret file,
// whether secret by name, by the user's globs, or behind a symbolic link
// with an innocent name, open or not.
func TestSelectNeverPullsSecrets(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module example.com/m\n")
	writeFile(t, root, "app/.env.go", "package app\n\n// Token is secret.\nvar Token = \"tok-SECRET-1\"\n")
	writeFile(t, root, "app/creds.go", "package app\n\n// APIKey is secret by the user's glob.\nvar APIKey = \"key-SECRET-2\"\n")
	writeFile(t, root, "vault/.env.prod", "package app\n\n// Password is secret.\nvar Password = \"pw-SECRET-3\"\n")
	if err := os.Symlink(filepath.Join(root, "vault/.env.prod"), filepath.Join(root, "app/password.go")); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	writeFile(t, root, "app/ok.go", "package app\n\n// Public is fine.\nvar Public = 1\n")
	active := "package app\n\nfunc use() {\n\tprintln(Token, APIKey, Password, Public)\n}\n"
	writeFile(t, root, "app/main.go", active)
	opts := workspace.DefaultOptions()
	opts.SecretGlobs = []string{"creds.go"}
	f := newFolders(t, opts, workspace.Hooks{}, root)
	linkText, _ := os.ReadFile(filepath.Join(root, "app/password.go"))
	for _, withOpen := range []bool{false, true} {
		var open []*workspace.Snapshot
		if withOpen {
			open = buffers(t, buf{workspace.FileURI(filepath.Join(root, "app/password.go")), string(linkText)})
		}
		got := Select(Workspace(f), selectIn(root, "app/main.go", active, "println(Token, APIKey, Password, Public)", 100_000, open...))
		for _, c := range got {
			if strings.Contains(c.Text, "SECRET") {
				t.Errorf("open=%v: a secret entered through %s: %q", withOpen, c.Path, c.Text)
			}
		}
		if !strings.Contains(names(got), "app/ok.go") {
			t.Errorf("open=%v: the public declaration is missing: %s", withOpen, names(got))
		}
	}
	// The index never parsed them either.
	v := f.Views()[0]
	if err := v.BuildSymbols(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Token", "APIKey", "Password"} {
		if l := declaredIn(v, "app", name); len(l) != 0 {
			t.Errorf("the index holds secret %s: %v", name, l)
		}
	}
	if l := declaredIn(v, "app", "Public"); len(l) != 1 {
		t.Errorf("the index lacks the public declaration: %v", l)
	}
}

// declaredIn returns the indexed files of dir that declare name.
func declaredIn(v *workspace.View, dir, name string) []string {
	var out []string
	for _, p := range v.Symbols().Dir(dir) {
		if f, _, ok := v.Symbols().Get(p); ok && len(f.Lookup(name)) > 0 {
			out = append(out, p)
		}
	}
	return out
}

// TestSymbolIndexFollowsDisk: the index follows a file renamed and then
// deleted on disk (real fsnotify events), and so does the selection.
func TestSymbolIndexFollowsDisk(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module example.com/m\n")
	writeFile(t, root, "p/a.go", "package p\n\n"+filler(7000)+"\n// Helper helps.\nfunc Helper() {}\n")
	active := "package p\n\nfunc main() { Helper() }\n"
	writeFile(t, root, "p/main.go", active)
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	v := f.Views()[0]
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := v.BuildSymbols(ctx); err != nil {
		t.Fatal(err)
	}
	where := func() string { return strings.Join(declaredIn(v, "p", "Helper"), " ") }
	if got := where(); got != "p/a.go" {
		t.Fatalf("Helper in %q, want p/a.go", got)
	}
	if err := os.Rename(filepath.Join(root, "p/a.go"), filepath.Join(root, "p/b.go")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the index to follow the rename", func() bool { return where() == "p/b.go" })
	got := Select(Workspace(f), selectIn(root, "p/main.go", active, "Helper()", 100_000))
	if _, ok := find(got, "p/b.go", "func Helper"); !ok {
		t.Errorf("after the rename: %s", names(got))
	}
	if err := os.Remove(filepath.Join(root, "p/b.go")); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the index to follow the deletion", func() bool { return where() == "" })
	if got := Select(Workspace(f), selectIn(root, "p/main.go", active, "Helper()", 100_000)); len(got) != 0 {
		t.Errorf("after the deletion: %s", names(got))
	}
	// An edit on disk is re-parsed.
	writeFile(t, root, "p/c.go", "package p\n\nfunc Helper() {}\n")
	waitUntil(t, "the index to see the new file", func() bool { return where() == "p/c.go" })
	if files, _ := v.Symbols().Len(); files != 2 {
		t.Errorf("%d files indexed, want 2 (main.go, c.go)", files)
	}
}

func TestSelectTypeScriptAndPython(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "web/src/app.ts", "")
	writeFile(t, root, "web/src/api.ts", "// fetchUser loads a user.\nexport async function fetchUser(id: string): Promise<User> {\n  return get(id);\n}\n\nexport interface User {\n  id: string;\n}\n"+strings.Repeat("// pad\n", 1200))
	writeFile(t, root, "web/src/ui/index.tsx", "export {}")
	writeFile(t, root, "web/lib/util.js", "module.exports = {}")
	writeFile(t, root, "web/src/style.css", "body{}")
	writeFile(t, root, "py/pkg/__init__.py", "")
	writeFile(t, root, "py/pkg/mod.py", "")
	writeFile(t, root, "py/pkg/helpers.py", "# Scale scales.\ndef scale(x):\n    return 2 * x\n")
	writeFile(t, root, "py/top.py", "")
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)

	ts := "import { fetchUser } from './api'\nimport UI from \"./ui\"\nconst u = require('../lib/util')\n\nexport function show(id: string) {\n  return fetchUser(id);\n}\n"
	got := Select(Workspace(f), selectIn(root, "web/src/app.ts", ts, "return fetchUser(id);", 100_000))
	// fetchUser is used by the file, so stable; the type its signature
	// mentions is one hop from the selection.
	want := "web/lib/util.js(import) web/src/api.ts#func fetchUser(use) web/src/api.ts#type User(type) web/src/ui/index.tsx(import)"
	if names(got) != want {
		t.Errorf("TypeScript:\n  %s\nwant\n  %s", names(got), want)
	}
	py := "from . import helpers\nfrom ..top import x\n\ndef run(v):\n    return helpers.scale(v)\n"
	got = Select(Workspace(f), selectIn(root, "py/pkg/mod.py", py, "return helpers.scale(v)", 100_000))
	want = "py/pkg/__init__.py(same-dir) py/pkg/helpers.py(use) py/top.py(import)"
	if names(got) != want {
		t.Errorf("Python:\n  %s\nwant\n  %s", names(got), want)
	}
}

func TestSelectSwitches(t *testing.T) {
	root := shopTree(t)
	openPath := writeFile(t, root, "docs/guide.md", "# guide\n")
	opts := workspace.DefaultOptions()
	opts.IncludeRelated = false
	f := newFolders(t, opts, workspace.Hooks{}, root)
	in := selectIn(root, "shop/cart.go", cartGo, "Audit(c)", 100_000,
		buffers(t, buf{workspace.FileURI(openPath), "# guide (edited)\n"}, buf{"untitled:Untitled-1", "scratch"})...)
	in.Recent = []workspace.URI{workspace.FileURI(filepath.Join(root, "go.mod"))}
	if got := names(Select(Workspace(f), in)); got != "go.mod(recent) docs/guide.md(open)" {
		t.Errorf("related off: %s", got)
	}
	opts.IncludeOpen, opts.IncludeRecent = false, false
	f.SetOptions(opts)
	if got := Select(Workspace(f), in); len(got) != 0 {
		t.Errorf("everything off: %s", names(got))
	}
	in.Budget = 0
	opts = workspace.DefaultOptions()
	f.SetOptions(opts)
	if got := Select(Workspace(f), in); len(got) != 0 {
		t.Errorf("no budget: %s", names(got))
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
	if got := workspace.LanguageOf("dir/Dockerfile") + workspace.LanguageOf("x.TSX") + workspace.LanguageOf("x.unknown"); got != "dockerfiletypescriptreact" {
		t.Errorf("workspace.LanguageOf = %q", got)
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

// TestSnippets: the declarations the function around a cursor uses, as
// snippets, the active file's own when the caller does not show them.
func TestSnippets(t *testing.T) {
	root := shopTree(t)
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	cursor := strings.Index(cartGo, "store.Save(")
	total := strings.Index(cartGo, "// Total sums")
	check := strings.Index(cartGo, "// Check is audited")
	in := SnippetInput{Active: workspace.FileURI(filepath.Join(root, "shop/cart.go")), Text: cartGo, Cursor: cursor,
		ShownStart: total, ShownEnd: check, Budget: 100_000}
	got := Snippets(Workspace(f), in)
	// In order of first use in Total, then the type Price's signature
	// mentions.
	want := "shop/cart.go#type Cart(ref) shop/types.go#type Money(ref) shop/pricing.go#func Price(ref) " +
		"store/store.go#func Save(ref) shop/types.go#type Item(type)"
	if names(got) != want {
		t.Errorf("Snippets =\n  %s\nwant\n  %s", names(got), want)
	}
	// The same while typing elsewhere in the function.
	in.Cursor = strings.Index(cartGo, "var sum Money")
	if again := Snippets(Workspace(f), in); names(again) != names(got) {
		t.Errorf("another cursor in the function:\n  %s\n  %s", names(again), names(got))
	}
	// All of the file shown: none of its own declarations.
	in.ShownStart, in.ShownEnd = 0, len(cartGo)
	for _, c := range Snippets(Workspace(f), in) {
		if c.Path == "shop/cart.go" {
			t.Errorf("a declaration the caller shows: %s", c.Part)
		}
	}
	// A tight budget keeps the most relevant that fit.
	in.Budget = 300
	if got := Snippets(Workspace(f), in); len(got) != 1 || got[0].Part != "type Money" {
		t.Errorf("budget 300: %s", names(got))
	}
}

// TestSnippetKeepsTheDeclaration: a declaration under a huge comment keeps
// its signature; the comment is cut from the top.
func TestSnippetKeepsTheDeclaration(t *testing.T) {
	src := "package p\n\n" + filler(20000) + "// F does it.\nfunc F(a int) int {\n\treturn a\n}\n"
	f := symbols.ParseGo([]byte(src))
	text, line := snippet(src, f.Defs[0])
	if len(text) > maxSnippetBytes || !strings.HasSuffix(text, "// F does it.\nfunc F(a int) int {\n\treturn a\n}") {
		t.Errorf("snippet of %d bytes ends %q", len(text), text[max(0, len(text)-80):])
	}
	if want := 1 + strings.Count(src[:strings.Index(src, text)], "\n"); line != want {
		t.Errorf("line %d, want %d", line, want)
	}
}

// TestSelectorThroughAField: x.f.Start() is traced through the type of
// field f, among several types with a Start method.
func TestSelectorThroughAField(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module example.com/m\n")
	writeFile(t, root, "p/types.go", "package p\n\n// conn is a connection.\ntype conn struct {\n\tsrv *Server // the server\n\tt   Timer\n}\n")
	// Large files, so that they enter by the declarations used.
	writeFile(t, root, "p/server.go", "package p\n\n"+filler(7000)+"\ntype Server struct{}\n\n// Start starts a server.\nfunc (s *Server) Start() {}\n")
	writeFile(t, root, "p/timer.go", "package p\n\n"+filler(7000)+"\ntype Timer struct{}\n\n// Start starts a timer.\nfunc (t Timer) Start() {}\n")
	writeFile(t, root, "p/clock.go", "package p\n\n"+filler(7000)+"\ntype Clock struct{}\n\n// Start starts a clock.\nfunc (c Clock) Start() {}\n")
	active := "package p\n\nfunc run(x *conn) {\n\tx.srv.Start()\n}\n"
	writeFile(t, root, "p/run.go", active)
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	got := names(Select(Workspace(f), selectIn(root, "p/run.go", active, "x.srv.Start()", 100_000)))
	if !strings.Contains(got, "method Server.Start") {
		t.Errorf("Server.Start is missing: %s", got)
	}
	if strings.Contains(got, "Timer.Start") || strings.Contains(got, "Clock.Start") {
		t.Errorf("another type's Start entered: %s", got)
	}
}

func TestLinesAround(t *testing.T) {
	text := "a\nb\nc\nd\ne" // no final line break
	for _, tt := range []struct {
		start, end, n int
		want          string
	}{
		{4, 4, 0, "c\n"},
		{4, 5, 1, "b\nc\nd\n"},
		{0, 0, 2, "a\nb\nc\n"},
		{8, 9, 1, "d\ne"},
		{2, 6, 9, text},
	} {
		lo, hi := linesAround(text, tt.start, tt.end, tt.n)
		if got := text[lo:hi]; got != tt.want {
			t.Errorf("linesAround(%d, %d, %d) = %q, want %q", tt.start, tt.end, tt.n, got, tt.want)
		}
	}
}

// TestSelectConcurrent: selections from several jobs at once, while the
// folder's index builds and a file changes on disk (run with -race).
func TestSelectConcurrent(t *testing.T) {
	root := shopTree(t)
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	want := names(Select(Workspace(f), selectIn(root, "shop/cart.go", cartGo, "store.Save(int(sum))", 100_000)))
	done := make(chan string, 16)
	for i := range 16 {
		go func() {
			if i%2 == 0 {
				done <- names(Select(Workspace(f), selectIn(root, "shop/cart.go", cartGo, "store.Save(int(sum))", 100_000)))
				return
			}
			Snippets(Workspace(f), SnippetInput{Active: workspace.FileURI(filepath.Join(root, "shop/cart.go")), Text: cartGo, Cursor: 200, Budget: 10_000})
			done <- want
		}()
	}
	writeFile(t, root, "misc/extra.go", "package misc\n\nfunc Extra() {}\n") // unrelated: the results stay the same
	for range 16 {
		if got := <-done; got != want {
			t.Errorf("a concurrent selection differs:\n%s\n%s", got, want)
		}
	}
}

// TestLinesAroundLongLine: the lines around a selection inside a line of
// 900 KB (a minified file) are cut to n*aroundLineBytes on each side, at
// rune boundaries; short lines stay whole.
func TestLinesAroundLongLine(t *testing.T) {
	line := strings.Repeat("é=f(1);", 900<<10/8)
	text := "a\nb\n" + line + "\nc\n"
	start := 2 + 2 + len(line)/2
	lo, hi := linesAround(text, start, start, 10)
	if start-lo > 10*aroundLineBytes || hi-start > 10*aroundLineBytes {
		t.Errorf("lines around take [%d, %d) around %d: more than %d bytes a side", lo, hi, start, 10*aroundLineBytes)
	}
	if !utf8.ValidString(text[lo:hi]) {
		t.Errorf("the cut splits a character")
	}
	if lo, hi := linesAround("a\nb\nc\nd\n", 4, 5, 1); lo != 2 || hi != 8 {
		t.Errorf("short lines: [%d, %d), want [2, 8)", lo, hi)
	}
}

// TestSnippetOfOneHugeLine: a declaration that is one line longer than a
// snippet (a minified function) is cut inside it, at a rune boundary, to
// about maxSnippetBytes.
func TestSnippetOfOneHugeLine(t *testing.T) {
	text := "function ff(){return \"" + strings.Repeat("é", 20000) + "\"}\n"
	s, line := snippet(text, symbols.Def{Name: "ff", Kind: symbols.Func, Start: 0, End: int32(len(text) - 1)})
	if len(s) > maxSnippetBytes+32 || !utf8.ValidString(s) || line != 1 || !strings.HasSuffix(s, "⋮ (cut)\n") {
		t.Errorf("snippet of %d bytes (valid UTF-8: %v), line %d, ends %q", len(s), utf8.ValidString(s), line, s[max(0, len(s)-12):])
	}
}

// TestSelectCachedFirst: what the prompt session's stable part holds
// (SelectInput.Cached) goes first among the candidates of its group, so a
// budget that cuts the group keeps it and cuts one not yet sent; without
// Cached the order is relevance alone.
func TestSelectCachedFirst(t *testing.T) {
	root := shopTree(t)
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	stable := func(cs []ContextFile) string {
		return names(slices.DeleteFunc(slices.Clone(cs), func(c ContextFile) bool { return c.Volatile }))
	}
	// The stable part, most used first, is types.go, Price, Save, Audit:
	// a budget one byte short of them all leaves Audit out.
	all := Select(Workspace(f), selectIn(root, "shop/cart.go", cartGo, "store.Save(int(sum))", 1_000_000))
	need := 0
	for _, c := range all {
		need += c.Cost()
	}
	budget := need - 1
	for budget-int(float64(budget)*VolatileShare) < need-1 {
		budget++
	}
	in := selectIn(root, "shop/cart.go", cartGo, "store.Save(int(sum))", budget)
	if got := stable(Select(Workspace(f), in)); strings.Contains(got, "Audit") || !strings.Contains(got, "Price") {
		t.Fatalf("without Cached: %s", got)
	}
	var asked []string
	in.Cached = func(path, part string) bool {
		asked = append(asked, path+"#"+part)
		return path == "shop/big.go" && part == "func Audit"
	}
	got := Select(Workspace(f), in)
	if c, ok := find(got, "shop/big.go", "func Audit"); !ok || c.Volatile {
		t.Errorf("the cached Audit is not in the stable part: %s", names(got))
	}
	if len(stable(got)) == 0 || len(got) != len(all)-1 {
		t.Errorf("with Cached: %s, want all but one of %s", names(got), names(all))
	}
	if !slices.Contains(asked, "shop/pricing.go#func Price") {
		t.Errorf("Cached was asked %v, not for the part the prompt names (func Price)", asked)
	}
}
