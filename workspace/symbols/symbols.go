// Package symbols finds the declarations of source files and the names a
// piece of code refers to, and keeps an Index of them for a workspace
// folder, so that a prompt can show the definitions a selection uses
// instead of whole files picked by kind.
//
// Go files are parsed with go/parser: every package-level function,
// method, type, variable and constant, with the byte range of its text
// (its doc comment included) and, for functions, where the body starts;
// struct fields and interface methods are recorded as members of their
// type, so that a selector x.f can be traced to the type declaring f.
// Other languages get a light line scan: names declared at the top level by
// the usual keywords (def/class, function/class/interface/const, fn/struct/
// trait, #define/struct…), each up to the next top-level line. Nothing here
// type-checks: a reference is a name, and resolving it is a matter of
// looking the name up where the language would (see the workspace package).
//
// Parsing is pure and safe on any input (fuzzed); the Index is safe for
// concurrent use and is updated file by file.
package symbols

import (
	"path"
	"slices"
	"strings"
)

// Kind is the kind of a declaration.
type Kind uint8

// Kinds of declarations.
const (
	Func   Kind = iota + 1 // a function (Go func, def, function, fn…)
	Method                 // a Go method; Recv names its receiver type
	Type                   // a type, class, interface, struct, enum, trait…
	Var                    // a package-level or module-level variable
	Const                  // a constant (Go const, #define, UPPER_CASE = …)
	Member                 // a struct field or interface method; Recv names its type
)

// String returns the kind's name as a prompt shows it ("func").
func (k Kind) String() string {
	switch k {
	case Func:
		return "func"
	case Method:
		return "method"
	case Type:
		return "type"
	case Var:
		return "var"
	case Const:
		return "const"
	case Member:
		return "member"
	}
	return "decl"
}

// Def is one declaration of a file. Offsets are byte offsets into the text
// the File was parsed from.
type Def struct {
	Name string
	Kind Kind
	// Recv is, for a Method, its receiver's base type name ("Server" for
	// (s *Server)); for a Member, the type that declares it.
	Recv string
	// Start and End delimit the declaration's text, its doc comment
	// included. For a Member they are those of the declaring type.
	Start, End int32
	// Body is the offset of a function's body ("{"), or 0: Start..Body is
	// the header (doc comment and signature).
	Body int32
}

// Header returns the end of the declaration's header: its body's start
// for a function with a body, else End.
func (d Def) Header() int32 {
	if d.Body > d.Start {
		return d.Body
	}
	return d.End
}

// Import is one import of a file: a Go import path, a JavaScript module
// specifier or a Python module (leading dots kept).
type Import struct {
	// Name is the local name given in the source ("u" in import u "x/util"),
	// or "" when the language's default applies.
	Name string
	Path string
}

// File is what a file declares and imports.
type File struct {
	// Lang is the language the file was read as ("go", "python", …).
	Lang string
	// Package is a Go file's package name ("" elsewhere).
	Package string
	// Imports in source order.
	Imports []Import
	// Defs in source order.
	Defs []Def
}

// Parse reads the declarations of src, a file in language lang (an LSP
// language identifier such as "go", "python", "typescript"). Go is parsed
// with go/parser; languages without a scanner yield an empty File. It never
// fails: a file that does not parse yields what could be read.
func Parse(lang string, src []byte) *File {
	var f *File
	if lang == "go" {
		f = ParseGo(src)
	} else {
		f = Scan(lang, src)
	}
	// Kept in an index: no spare capacity.
	f.Defs, f.Imports = slices.Clone(f.Defs), slices.Clone(f.Imports)
	return f
}

// Supported reports whether Parse finds declarations in language lang.
func Supported(lang string) bool {
	if lang == "go" {
		return true
	}
	_, ok := scanners()[family(lang)]
	return ok
}

// family groups languages that share a scanner.
func family(lang string) string {
	switch lang {
	case "typescript", "typescriptreact", "javascript", "javascriptreact":
		return "js"
	case "c", "cpp":
		return "c"
	case "java", "kotlin", "scala", "csharp", "swift", "dart":
		return "jvm"
	}
	return lang
}

// Family returns the group of languages whose files refer to each other's
// declarations: "js" for TypeScript and JavaScript, "c" for C and C++,
// "jvm" for Java, Kotlin, Scala, C#, Swift and Dart, else lang itself.
func Family(lang string) string { return family(lang) }

// Lookup returns the declarations of f named name, in source order.
func (f *File) Lookup(name string) []Def {
	var out []Def
	for _, d := range f.Defs {
		if d.Name == name {
			out = append(out, d)
		}
	}
	return out
}

// ImportName returns the name a Go import is known by in the importing
// file: its explicit name, else the last element of its path (a trailing
// major version "/v2" skipped, a "go-" prefix or ".go" suffix dropped, as
// tools guess before loading the package).
func (i Import) ImportName() string {
	if i.Name != "" {
		return i.Name
	}
	p := i.Path
	base := path.Base(p)
	if len(base) >= 2 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" && path.Dir(p) != "." {
		base = path.Base(path.Dir(p))
	}
	base = strings.TrimSuffix(strings.TrimPrefix(base, "go-"), ".go")
	return strings.ReplaceAll(base, "-", "_")
}
