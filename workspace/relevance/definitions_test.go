package relevance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// kitTree is a Go package whose active file, run.go, calls Close on a
// value of a type declared in another file, with three types declaring a
// Close: the symbol index cannot tell which (nothing in the code names the
// type), a language server can. Every other file is larger than
// SmallFileBytes, so that it enters by snippets.
func kitTree(t *testing.T) string {
	root := t.TempDir()
	writeFile(t, root, "go.mod", "module example.com/kit\n\ngo 1.22\n")
	writeFile(t, root, "kit/run.go", kitRun)
	for _, name := range []string{"A", "B", "C"} {
		writeFile(t, root, "kit/"+strings.ToLower(name)+".go", "package kit\n\n"+filler(7000)+`
// `+name+` is one kind of connection.
type `+name+` struct {
	Addr string
}

// Close closes the `+name+`.
func (x *`+name+`) Close() error { return nil }
`)
	}
	writeFile(t, root, "kit/pool.go", "package kit\n\n"+filler(7000)+`
// Pool hands out connections.
type Pool struct {
	idle []*B
}

// Get returns an idle connection.
func (p *Pool) Get() *B { return p.idle[0] }

// helper is shadowed in run.go.
func helper() {}
`)
	return root
}

const kitRun = `package kit

import "fmt"

// Run uses a connection of the pool.
func Run(p *Pool) {
	helper := func() {}
	helper()
	conn := p.Get()
	fmt.Println(conn.Addr)
	conn.Close()
}
`

// lineOf returns the 0-based line of the first line of text holding s.
func lineOf(t *testing.T, root, rel, s string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	f := string(b)
	i := strings.Index(f, s)
	if i < 0 {
		t.Fatalf("%s has no %q", rel, s)
	}
	return strings.Count(f[:i], "\n")
}

func kitURI(root, rel string) workspace.URI { return workspace.FileURI(filepath.Join(root, rel)) }

// TestLookups: the names of the selection, at their first use, package
// names left out; a cursor stands for the declaration around it.
func TestLookups(t *testing.T) {
	root := kitTree(t)
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	snap := buffers(t, buf{kitURI(root, "kit/run.go"), kitRun})[0]
	start := strings.Index(kitRun, "\tconn := p.Get()")
	end := strings.Index(kitRun, "\tconn.Close()")
	got := Lookups(Workspace(f), Request{Active: snap, SelStart: start, SelEnd: end})
	var words []string
	for _, l := range got {
		if kitRun[l.Offset:l.Offset+len(l.Name)] != l.Name {
			t.Errorf("%+v: the offset does not hold the name", l)
		}
		words = append(words, strings.TrimPrefix(l.Qual+"."+l.Name, "."))
	}
	if want := "conn p p.Get fmt.Println conn.Addr"; strings.Join(words, " ") != want {
		t.Errorf("lookups = %q, want %q", strings.Join(words, " "), want)
	}
	// A cursor: the names of the whole of Run.
	at := strings.Index(kitRun, "helper()")
	got = Lookups(Workspace(f), Request{Active: snap, SelStart: at, SelEnd: at})
	if len(got) == 0 || got[0].Name != "Run" || got[len(got)-1].Qual != "conn" || got[len(got)-1].Name != "Close" {
		t.Errorf("cursor lookups = %+v", got)
	}
	// At most MaxLookups.
	var many strings.Builder
	many.WriteString("package kit\n\nfunc Many() {\n")
	for i := range MaxLookups + 10 {
		many.WriteString("\tname" + strings.Repeat("x", i) + "()\n")
	}
	many.WriteString("}\n")
	manySnap := buffers(t, buf{kitURI(root, "kit/many.go"), many.String()})[0]
	if got := Lookups(Workspace(f), Request{Active: manySnap, SelStart: 0, SelEnd: many.Len()}); len(got) != MaxLookups {
		t.Errorf("%d lookups, want %d", len(got), MaxLookups)
	}
	// None outside every folder or without related context.
	out := buffers(t, buf{workspace.FileURI(filepath.Join(t.TempDir(), "x.go")), kitRun})[0]
	if got := Lookups(Workspace(f), Request{Active: out, SelStart: 0, SelEnd: len(kitRun)}); got != nil {
		t.Errorf("outside the workspace: %+v", got)
	}
	opts := workspace.DefaultOptions()
	opts.IncludeRelated = false
	g := newFolders(t, opts, workspace.Hooks{}, root)
	if got := Lookups(Workspace(g), Request{Active: snap, SelStart: start, SelEnd: end}); got != nil {
		t.Errorf("context.include without related: %+v", got)
	}
}

// TestSelectDefinitionsRankFirst: a language server's definition of a name
// brings the one declaration it names, which the symbol index could not
// choose; without it, none of the three Close methods enters.
func TestSelectDefinitionsRankFirst(t *testing.T) {
	root := kitTree(t)
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	sel := "\tconn.Close()\n"
	in := selectIn(root, "kit/run.go", kitRun, sel, 200_000)
	without := Select(Workspace(f), in)
	for _, name := range []string{"a", "b", "c"} {
		if c, ok := find(without, "kit/"+name+".go", "method "+strings.ToUpper(name)+".Close"); ok {
			t.Errorf("the symbol index chose %s#%s among three", c.Path, c.Part)
		}
	}
	at := strings.Index(kitRun, "Close()")
	in.Definitions = []Definition{{Lookup: Lookup{Qual: "conn", Name: "Close", Offset: at},
		Locations: []Location{{URI: kitURI(root, "kit/b.go"), Line: lineOf(t, root, "kit/b.go", "func (x *B) Close")}}}}
	with := Select(Workspace(f), in)
	t.Logf("with the definition: %s", names(with))

	c, ok := find(with, "kit/b.go", "method B.Close")
	if !ok || !c.Volatile || c.Reason != ReasonDefinition || !strings.Contains(c.Text, "// Close closes the B.") {
		t.Fatalf("B.Close is not the definition's piece: %s", names(with))
	}
	for _, other := range []string{"a", "c"} {
		if _, ok := find(with, "kit/"+other+".go", "method "+strings.ToUpper(other)+".Close"); ok {
			t.Errorf("%s.go's Close entered", other)
		}
	}
	// The stable part is the same with or without definitions.
	stable := func(cs []ContextFile) string {
		var out []ContextFile
		for _, c := range cs {
			if !c.Volatile {
				out = append(out, c)
			}
		}
		return names(out)
	}
	if stable(with) != stable(without) {
		t.Errorf("the stable part moved:\n%s\n%s", stable(with), stable(without))
	}
	// A field's definition shows its type.
	in = selectIn(root, "kit/run.go", kitRun, "\tfmt.Println(conn.Addr)\n", 200_000)
	in.Definitions = []Definition{{Lookup: Lookup{Qual: "conn", Name: "Addr"},
		Locations: []Location{{URI: kitURI(root, "kit/c.go"), Line: lineOf(t, root, "kit/c.go", "\tAddr string")}}}}
	got := Select(Workspace(f), in)
	if c, ok := find(got, "kit/c.go", "type C"); !ok || c.Reason != ReasonDefinition || !strings.Contains(c.Text, "Addr string") {
		t.Errorf("a field's definition: %s", names(got))
	}
}

// TestDefinitionsAnswerTheirNames: a name the language server answered is
// not resolved through the symbol index, even when its answer adds nothing
// (a local in the active file, a place outside the workspace, a secret
// file); a name it did not answer is.
func TestDefinitionsAnswerTheirNames(t *testing.T) {
	root := kitTree(t)
	writeFile(t, root, "kit/.env.go", "package kit\n\nfunc Secret() {}\n")
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	in := selectIn(root, "kit/run.go", kitRun, "\thelper()\n\tconn := p.Get()\n", 200_000)
	reasons := func(in SelectInput) map[string]Reason {
		out := map[string]Reason{}
		for _, c := range newSelector(Workspace(f), in).volatileCandidates() {
			out[c.src.rel+"#"+partNameOf(c)] = c.reason
		}
		return out
	}
	before := reasons(in)
	if before["kit/pool.go#func helper"] != ReasonRef || before["kit/pool.go#method Pool.Get"] != ReasonRef {
		t.Fatalf("the symbol index's candidates: %v", before)
	}
	elsewhere := workspace.FileURI(filepath.Join(t.TempDir(), "other.go"))
	for name, loc := range map[string]Location{
		"local": {URI: kitURI(root, "kit/run.go"), Line: lineOf(t, root, "kit/run.go", "helper := func")},
		// A server's own spelling of the active file (an escaped letter)
		// is the active file.
		"local, spelled": {URI: workspace.URI(strings.Replace(string(kitURI(root, "kit/run.go")), "/kit/", "/%6Bit/", 1)),
			Line: lineOf(t, root, "kit/run.go", "helper := func")},
		"outside": {URI: elsewhere, Line: 0},
		"secret":  {URI: kitURI(root, "kit/.env.go"), Line: 2},
	} {
		in.Definitions = []Definition{{Lookup: Lookup{Name: "helper"}, Locations: []Location{loc}},
			{Lookup: Lookup{Qual: "p", Name: "Get"}}} // no locations: not answered
		after := reasons(in)
		if r, ok := after["kit/pool.go#func helper"]; ok {
			t.Errorf("%s: the answered helper still came from the index (%s): %v", name, r, after)
		}
		if after["kit/pool.go#method Pool.Get"] != ReasonRef {
			t.Errorf("%s: the unanswered p.Get is not the index's: %v", name, after)
		}
		for k := range after {
			if strings.Contains(k, ".env") || strings.Contains(k, "run.go") {
				t.Errorf("%s: %s entered", name, k)
			}
		}
	}
}

func partNameOf(c candidate) string {
	if c.def == nil {
		return ""
	}
	return partName(*c.def)
}

// TestSelectDefinitionsPython: a method's definition inside a class (the
// line scan records top-level names only) shows the class around it.
func TestSelectDefinitionsPython(t *testing.T) {
	root := t.TempDir()
	lib := "# lib\n" + strings.Repeat("# filler line to make the file large enough\n", 160) +
		"class Store:\n    \"\"\"Keeps totals.\"\"\"\n\n    def save(self, total):\n        pass\n\n\ndef unrelated():\n    pass\n"
	writeFile(t, root, "lib.py", lib)
	app := "from lib import open_store\n\n\ndef run():\n    s = open_store()\n    s.save(1)\n"
	writeFile(t, root, "app.py", app)
	f := newFolders(t, workspace.DefaultOptions(), workspace.Hooks{}, root)
	in := selectIn(root, "app.py", app, "    s.save(1)\n", 200_000)
	in.Definitions = []Definition{{Lookup: Lookup{Qual: "s", Name: "save"},
		Locations: []Location{{URI: kitURI(root, "lib.py"), Line: lineOf(t, root, "lib.py", "    def save")}}}}
	got := Select(Workspace(f), in)
	t.Logf("selected: %s", names(got))
	c, ok := find(got, "lib.py", "type Store")
	if !ok || c.Reason != ReasonDefinition || !c.Volatile || !strings.Contains(c.Text, "def save") {
		t.Fatalf("the class holding save is not the definition's piece: %s", names(got))
	}
	for _, c := range got {
		if strings.Contains(c.Text, "def unrelated") {
			t.Errorf("%s#%s: more than the class entered", c.Path, c.Part)
		}
	}
}
