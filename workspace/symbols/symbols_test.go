package symbols

import (
	"fmt"
	"strings"
	"testing"
)

// show renders the declarations of f as "kind recv.name: first line of
// the text" lines, for comparison.
func show(src string, f *File) string {
	var b strings.Builder
	for _, d := range f.Defs {
		name := d.Name
		if d.Recv != "" {
			name = d.Recv + "." + name
		}
		text := src[d.Start:d.End]
		first, _, _ := strings.Cut(text, "\n")
		fmt.Fprintf(&b, "%s %s: %s\n", d.Kind, name, first)
	}
	return b.String()
}

const goSrc = `// Package p is a test.
package p

import (
	"fmt"
	u "example.com/m/util"
	"example.com/m/v2"
)

// Server serves.
// It has two comment lines.
type Server struct {
	Addr string
	*Logger
	handler Handler
}

/* Handler handles. */
type Handler interface {
	Serve(w int) error
}

// Mode is an enum.
type Mode int

// Modes.
const (
	ModeA Mode = iota
	ModeB
)

var debug = false

// NewServer makes a server.
func NewServer(addr string) *Server {
	return &Server{Addr: addr}
}

// Start starts s.
func (s *Server) Start() error { return nil }

func (l List[T]) Len() int { return len(l) }

func _() {}
`

func TestParseGo(t *testing.T) {
	f := ParseGo([]byte(goSrc))
	if f.Package != "p" {
		t.Errorf("package %q", f.Package)
	}
	if got := fmt.Sprint(f.Imports); got != "[{ fmt} {u example.com/m/util} { example.com/m/v2}]" {
		t.Errorf("imports %s", got)
	}
	want := `type Server: // Server serves.
member Server.Addr: // Server serves.
member Server.Logger: // Server serves.
member Server.handler: // Server serves.
type Handler: /* Handler handles. */
member Handler.Serve: /* Handler handles. */
type Mode: // Mode is an enum.
const ModeA: // Modes.
const ModeB: // Modes.
var debug: var debug = false
func NewServer: // NewServer makes a server.
method Server.Start: // Start starts s.
method List.Len: func (l List[T]) Len() int { return len(l) }
`
	if got := show(goSrc, f); got != want {
		t.Errorf("ParseGo:\n%s\nwant:\n%s", got, want)
	}
	// The const group is one snippet for both names, with its doc.
	for _, d := range f.Lookup("ModeB") {
		if text := goSrc[d.Start:d.End]; !strings.HasPrefix(text, "// Modes.\nconst (") || !strings.HasSuffix(text, ")") {
			t.Errorf("ModeB's text %q", text)
		}
	}
	// The header of a function stops at its body.
	d := f.Lookup("NewServer")[0]
	if h := goSrc[d.Start:d.Header()]; h != "// NewServer makes a server.\nfunc NewServer(addr string) *Server " {
		t.Errorf("header %q", h)
	}
	if f.Imports[2].ImportName() != "m" || f.Imports[1].ImportName() != "u" {
		t.Errorf("import names %q %q", f.Imports[2].ImportName(), f.Imports[1].ImportName())
	}
}

func TestParseGoLongGroup(t *testing.T) {
	var b strings.Builder
	b.WriteString("package p\n\nvar (\n")
	for i := range maxGroupLines + 5 {
		fmt.Fprintf(&b, "\t// V%d is a var.\n\tV%d = %d\n", i, i, i)
	}
	b.WriteString(")\n")
	src := b.String()
	f := ParseGo([]byte(src))
	if len(f.Defs) != maxGroupLines+5 {
		t.Fatalf("%d defs", len(f.Defs))
	}
	d := f.Lookup("V7")[0]
	if got := src[d.Start:d.End]; got != "\t// V7 is a var.\n\tV7 = 7" {
		t.Errorf("a spec of a long group: %q", got)
	}
}

func TestParseGoBroken(t *testing.T) {
	src := "package p\n\nfunc A() {\n\tif x {\n}\n\nfunc B() int { return 1 }\n\ntype T struct{ X int }\n"
	f := ParseGo([]byte(src))
	var names []string
	for _, d := range f.Defs {
		names = append(names, d.Name)
	}
	// go/parser recovers: A and what follows it are still declarations.
	if got := strings.Join(names, " "); !strings.Contains(got, "A") || !strings.Contains(got, "T") {
		t.Errorf("recovered declarations: %s", got)
	}
	for _, d := range f.Defs {
		if d.Start < 0 || d.End > int32(len(src)) || d.Start > d.End || d.Header() > d.End {
			t.Errorf("bad range %+v", d)
		}
	}
	if f := ParseGo([]byte("not go at all {{{")); len(f.Defs) != 0 {
		t.Errorf("garbage: %+v", f)
	}
}

func TestScan(t *testing.T) {
	tests := []struct {
		lang, src, want string
	}{
		{"python", `import os

# Answer is the answer.
ANSWER = 42
timeout: int = 5

@dataclass
class Point:
    x: int

    def norm(self):
        return 0
# a stray comment

async def fetch(url):
    """Fetch it."""
    return url

if __name__ == "__main__":
    fetch("x")
`, `const ANSWER: # Answer is the answer.
var timeout: timeout: int = 5
type Point: @dataclass
func fetch: async def fetch(url):
`},
		{"typescript", `import { x } from "./x";

/** Greet greets. */
export function greet(name: string): string {
  return "hi " + name;
}

export default class Widget extends Base {
  render() {}
}

export interface Props {
  size: number;
}

type Alias = string | number;
export const LIMIT = 10;
let counter = 0;
`, `func greet: /** Greet greets. */
type Widget: export default class Widget extends Base {
type Props: export interface Props {
type Alias: type Alias = string | number;
const LIMIT: export const LIMIT = 10;
var counter: let counter = 0;
`},
		{"rust", `use std::io;

/// Parses things.
pub fn parse(s: &str) -> Result<(), ()> {
    Ok(())
}

#[derive(Debug)]
pub(crate) struct Config {
    name: String,
}

impl Config {
    fn new() -> Self { todo!() }
}

const MAX: usize = 3;
`, `func parse: /// Parses things.
type Config: #[derive(Debug)]
const MAX: const MAX: usize = 3;
`},
		{"c", `#include <stdio.h>

#define BUF_SIZE 64

/* A point. */
typedef struct point {
    int x, y;
} point_t;

static int
add(int a, int b)
{
    return a + b;
}

int sub(int a, int b);
`, `const BUF_SIZE: #define BUF_SIZE 64
type point: /* A point. */
func add: add(int a, int b)
`},
		{"ruby", `require "json"

# A greeter.
class Greeter
  def hi
    puts "hi"
  end
end

def helper(x)
  x
end
`, `type Greeter: # A greeter.
func helper: def helper(x)
`},
		{"plaintext", "hello\nworld\n", ""},
	}
	for _, tt := range tests {
		f := Scan(tt.lang, []byte(tt.src))
		if got := show(tt.src, f); got != tt.want {
			t.Errorf("%s:\n%s\nwant:\n%s", tt.lang, got, tt.want)
		}
	}
}

// TestScanExtent checks where declarations end: at a closer that belongs
// to them, before the next declaration's doc comment.
func TestScanExtent(t *testing.T) {
	src := "def a():\n    return 1\n\n\n# b's doc\ndef b():\n    pass\n"
	f := Scan("python", []byte(src))
	if got := src[f.Defs[0].Start:f.Defs[0].End]; got != "def a():\n    return 1\n" {
		t.Errorf("a = %q", got)
	}
	if got := src[f.Defs[1].Start:f.Defs[1].End]; got != "# b's doc\ndef b():\n    pass\n" {
		t.Errorf("b = %q", got)
	}
	js := "function f() {\n  return 1;\n}\n// g\nfunction g() {}\n"
	f = Scan("javascript", []byte(js))
	if got := js[f.Defs[0].Start:f.Defs[0].End]; got != "function f() {\n  return 1;\n}\n" {
		t.Errorf("f = %q", got)
	}
	if got := js[f.Defs[0].Start:f.Defs[0].Header()]; got != "function f() {\n" {
		t.Errorf("f's header = %q", got)
	}
}

// refNames renders references as "Name" and "Qual.Name".
func refNames(refs []Ref) string {
	var out []string
	for _, r := range refs {
		if r.Qual != "" {
			out = append(out, r.Qual+"."+r.Name)
		} else {
			out = append(out, r.Name)
		}
	}
	return strings.Join(out, " ")
}

// checkOffsets checks that each reference's Offset is where its name is
// first used (the name, not its qualifier).
func checkOffsets(t *testing.T, src []byte, refs []Ref) {
	t.Helper()
	for _, r := range refs {
		i := r.Offset
		if i < 0 || i+len(r.Name) > len(src) || string(src[i:i+len(r.Name)]) != r.Name {
			t.Errorf("%s.%s: Offset %d does not hold the name", r.Qual, r.Name, i)
			continue
		}
		if r.Qual != "" && r.Qual != "." && (i < len(r.Qual)+1 || string(src[i-len(r.Qual)-1:i]) != r.Qual+".") {
			t.Errorf("%s.%s: Offset %d does not follow its qualifier", r.Qual, r.Name, i)
		}
	}
}

func TestGoRefs(t *testing.T) {
	src := []byte(`x := NewServer(addr); s.Start(); fmt.Println(u.Helper(len(x)), Mode(1), cfg().Name, "NotARef") // Comment`)
	want := "x NewServer addr s s.Start fmt fmt.Println u u.Helper Mode cfg ..Name"
	if got := refNames(GoRefs(src, 0, len(src))); got != want {
		t.Errorf("GoRefs = %s\nwant      %s", got, want)
	}
	checkOffsets(t, src, GoRefs(src, 0, len(src)))
	checkOffsets(t, src, GoRefs(src, 30, len(src)))
	if r := GoRefs(src, 10, 5); r != nil {
		t.Errorf("empty range: %v", r)
	}
	// A range that cuts a token in two.
	if r := GoRefs(src, 2, 12); len(r) == 0 || r[0].Name != "NewServ" {
		t.Errorf("cut range: %v", r)
	}
}

func TestRefs(t *testing.T) {
	src := []byte(`const total = helpers.sum(items) + count; // tally(x)
/* block(y) */ print("greet(z)"); obj.method().prop`)
	want := "total helpers helpers.sum items count print obj obj.method ..prop"
	if got := refNames(Refs("javascript", src, 0, len(src))); got != want {
		t.Errorf("Refs = %s\nwant   %s", got, want)
	}
	checkOffsets(t, src, Refs("javascript", src, 0, len(src)))
	checkOffsets(t, src, Refs("javascript", src, 20, len(src)))
	py := []byte("x = load(path)  # parse(p)\n")
	if got := Refs("python", py, 0, len(py)); len(got) != 3 || got[1].Name != "load" {
		t.Errorf("python refs %v", got)
	}
}

func TestIndex(t *testing.T) {
	x := NewIndex()
	py := func(src string) *File { return Scan("python", []byte(src)) }
	x.Set("a/a.py", Stamp{Size: 1}, py("def F():\n    pass\nclass T:\n    pass\n"))
	x.Set("a/b.py", Stamp{Size: 2}, py("def G():\n    pass\n"))
	x.Set("b/c.py", Stamp{Size: 3}, py("def F():\n    pass\n"))
	x.Set("b/d.go", Stamp{Size: 4}, ParseGo([]byte("package b\nfunc F() {}\n")))
	if files, defs := x.Len(); files != 4 || defs != 5 {
		t.Errorf("Len = %d, %d", files, defs)
	}
	var got []string
	for _, l := range x.Lookup("F") {
		got = append(got, l.Path+":"+l.Kind.String())
	}
	// Go's F is found through its package's directory, not by name.
	if strings.Join(got, " ") != "a/a.py:func b/c.py:func" {
		t.Errorf("Lookup(F) = %v", got)
	}
	if d := x.Dir("b"); strings.Join(d, " ") != "b/c.py b/d.go" {
		t.Errorf("Dir(b) = %v", d)
	}
	v := x.DirVersion("a")
	// Rename a/b.py to b/b.py.
	f, st, _ := x.Get("a/b.py")
	x.Remove("a/b.py")
	x.Set("b/b.py", st, f)
	if l := x.Lookup("G"); len(l) != 1 || l[0].Path != "b/b.py" {
		t.Errorf("after the rename: %v", l)
	}
	if d := x.Dir("a"); len(d) != 1 || x.DirVersion("a") == v {
		t.Errorf("Dir(a) after the rename = %v, version %d (was %d)", d, x.DirVersion("a"), v)
	}
	// Update in place: the old names go.
	x.Set("a/a.py", Stamp{Size: 9}, py("def H():\n    pass\n"))
	if l := x.Lookup("T"); len(l) != 0 {
		t.Errorf("T survived its file's update: %v", l)
	}
	if _, st, ok := x.Get("a/a.py"); !ok || st.Size != 9 {
		t.Errorf("stamp %v", st)
	}
	x.RemoveUnder("b")
	if files, _ := x.Len(); files != 1 {
		t.Errorf("after RemoveUnder(b): %d files", files)
	}
}
