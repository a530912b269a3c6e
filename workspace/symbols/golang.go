package symbols

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"strconv"
	"sync"
)

// maxGroupLines: a grouped declaration (const ( … ), var ( … ), type ( … ))
// up to this many lines is one snippet for each of its names (a const
// group's iota needs the group); a longer one gives each spec on its own.
const maxGroupLines = 40

// ParseGo reads the package clause, the imports and the package-level
// declarations of a Go file. A file with syntax errors yields what go/parser
// recovered.
func ParseGo(src []byte) *File {
	out := &File{Lang: "go"}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.SkipObjectResolution)
	if f == nil {
		return out
	}
	defer func() {
		if err != nil {
			out.Defs = recoverGo(src, out.Defs, err)
		}
	}()
	base := fset.File(f.Package)
	if base == nil {
		return out
	}
	n := int32(len(src))
	off := func(p token.Pos) int32 {
		if !p.IsValid() {
			return 0
		}
		return min(max(int32(p)-int32(base.Base()), 0), n)
	}
	line := func(p token.Pos) int { return base.Line(p) }
	if f.Name != nil {
		out.Package = f.Name.Name
	}
	for _, imp := range f.Imports {
		if imp.Path == nil {
			continue
		}
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil {
			continue
		}
		i := Import{Path: p}
		if imp.Name != nil {
			i.Name = imp.Name.Name
		}
		out.Imports = append(out.Imports, i)
	}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Name == nil || d.Name.Name == "_" {
				continue
			}
			def := Def{Name: d.Name.Name, Kind: Func, Start: docStart(src, off(d.Pos())), End: off(d.End())}
			if d.Recv != nil && len(d.Recv.List) > 0 {
				def.Kind, def.Recv = Method, baseTypeName(d.Recv.List[0].Type)
			}
			if d.Body != nil {
				def.Body = off(d.Body.Lbrace)
			}
			out.Defs = append(out.Defs, def)
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			whole := !d.Lparen.IsValid() || line(d.Rparen)-line(d.Lparen) <= maxGroupLines
			gs, ge := docStart(src, off(d.Pos())), off(d.End())
			for _, spec := range d.Specs {
				s, e := gs, ge
				if !whole {
					s, e = docStart(src, off(spec.Pos())), off(spec.End())
				}
				switch sp := spec.(type) {
				case *ast.TypeSpec:
					if sp.Name == nil || sp.Name.Name == "_" {
						continue
					}
					out.Defs = append(out.Defs, Def{Name: sp.Name.Name, Kind: Type, Start: s, End: e})
					for _, m := range members(sp.Type) {
						out.Defs = append(out.Defs, Def{Name: m, Kind: Member, Recv: sp.Name.Name, Start: s, End: e})
					}
				case *ast.ValueSpec:
					k := Var
					if d.Tok == token.CONST {
						k = Const
					}
					for _, id := range sp.Names {
						if id.Name != "_" {
							out.Defs = append(out.Defs, Def{Name: id.Name, Kind: k, Start: s, End: e})
						}
					}
				}
			}
		}
	}
	return out
}

// goLines is the line scanner for Go files go/parser gave up on, compiled
// on first use.
var goLines = sync.OnceValue(func() *lineScanner {
	return &lineScanner{
		decls: []declPattern{
			pat(Method, `^func\s*\(\s*(?:[A-Za-z_]\w*\s+)?\*?\s*(?P<recv>[A-Za-z_]\w*)[^)]*\)\s*(?P<name>[A-Za-z_]\w*)`),
			pat(Func, `^func\s+(?P<name>[A-Za-z_]\w*)`),
			pat(Type, `^type\s+(?P<name>[A-Za-z_]\w*)`),
			pat(Var, `^var\s+(?P<name>[A-Za-z_]\w*)`),
			pat(Const, `^const\s+(?P<name>[A-Za-z_]\w*)`),
		},
		docPrefixes: []string{"//", "/*"},
		closers:     braceClosers,
	}
})

// recoverGo completes the declarations go/parser found in a file with a
// syntax error: an unclosed brace makes it read the rest of the file as
// one body, which is common while the user types. The declarations it
// parsed before the first error stay; after them, the line scan's.
func recoverGo(src []byte, parsed []Def, err error) []Def {
	var el scanner.ErrorList
	if !errors.As(err, &el) || len(el) == 0 {
		return parsed
	}
	first := int32(el[0].Pos.Offset)
	var out []Def
	var kept int32
	for _, d := range parsed {
		if d.End <= first {
			out = append(out, d)
			kept = max(kept, d.End)
		}
	}
	for _, d := range goLines().scan(src) {
		if d.Start >= kept {
			out = append(out, d)
		}
	}
	return out
}

// baseTypeName returns the type name of a method receiver: T for T, *T,
// T[P] and (*T).
func baseTypeName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.SelectorExpr:
			return x.Sel.Name
		default:
			return ""
		}
	}
}

// members returns the field names (embedded types by their type name) of
// a struct type, or the method names of an interface type.
func members(t ast.Expr) []string {
	var list *ast.FieldList
	switch x := t.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		list = x.Methods
	}
	if list == nil {
		return nil
	}
	var out []string
	for _, f := range list.List {
		if len(f.Names) == 0 {
			if n := baseTypeName(f.Type); n != "" {
				out = append(out, n)
			}
			continue
		}
		for _, id := range f.Names {
			if id.Name != "_" {
				out = append(out, id.Name)
			}
		}
	}
	return out
}

// docStart returns where the comment lines directly above the line holding
// off begin (no blank line between), or the start of that line; off itself
// if other text precedes it on its line.
func docStart(src []byte, off int32) int32 {
	ls := lineStart(src, off)
	for i := ls; i < off; i++ {
		if src[i] != ' ' && src[i] != '\t' {
			return off
		}
	}
	for ls > 0 {
		ps := lineStart(src, ls-1)
		l := trimSpace(src[ps : ls-1])
		switch {
		case len(l) >= 2 && l[0] == '/' && l[1] == '/':
			ls = ps
			continue
		case len(l) >= 2 && l[len(l)-2] == '*' && l[len(l)-1] == '/':
			// A /* … */ block ending on the line above.
			for j := ls - 1; j > 0; j-- {
				if src[j-1] == '/' && j < int32(len(src)) && src[j] == '*' {
					return lineStart(src, j-1)
				}
			}
		}
		break
	}
	return ls
}

func lineStart(src []byte, off int32) int32 {
	for off > 0 && src[off-1] != '\n' {
		off--
	}
	return off
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// Ref is a name a piece of code refers to.
type Ref struct {
	// Qual is the name before the dot of a selector (x in x.Name), "." when
	// the dot follows an expression other than a name (f().Name, a[i].Name),
	// "" for a plain name.
	Qual string
	Name string
	// Count is how many times the range uses it.
	Count int
	// Offset is the byte offset, in the text the range was taken from, of
	// the name's first use in the range (the Name, not its Qual): where a
	// language server is asked for its definition.
	Offset int
}

// predeclared are Go's universe names: never a workspace declaration
// worth looking up (a shadowing declaration is rare and still found
// through the file that declares it).
var predeclared = map[string]bool{
	"bool": true, "byte": true, "complex64": true, "complex128": true, "error": true, "float32": true,
	"float64": true, "int": true, "int8": true, "int16": true, "int32": true, "int64": true, "rune": true,
	"string": true, "uint": true, "uint8": true, "uint16": true, "uint32": true, "uint64": true,
	"uintptr": true, "any": true, "comparable": true, "true": true, "false": true, "iota": true, "nil": true,
	"append": true, "cap": true, "clear": true, "close": true, "complex": true, "copy": true, "delete": true,
	"imag": true, "len": true, "make": true, "max": true, "min": true, "new": true, "panic": true,
	"print": true, "println": true, "real": true, "recover": true, "_": true,
}

// GoRefs returns the names src[start:end] refers to, in order of first
// appearance, each once with its count of uses: plain identifiers (Go's predeclared
// names left out) and, for each selector x.y, the pair {x, y} besides the
// plain x. The range may cut a token; what cannot be scanned is skipped.
func GoRefs(src []byte, start, end int) []Ref {
	start, end = max(start, 0), min(end, len(src))
	if start >= end {
		return nil
	}
	var s scanner.Scanner
	fset := token.NewFileSet()
	text := src[start:end]
	file := fset.AddFile("", -1, len(text))
	s.Init(file, text, func(token.Position, string) {}, 0)
	var refs refList
	add := refs.add
	var prev, prev2 token.Token
	var prevLit string
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		if tok == token.IDENT {
			at := start + file.Offset(pos)
			switch {
			case prev == token.PERIOD && prev2 == token.IDENT:
				add(Ref{Qual: prevLit, Name: lit, Offset: at})
			case prev == token.PERIOD:
				add(Ref{Qual: ".", Name: lit, Offset: at}) // (expr).Name, a[i].Name, f().Name
			case !predeclared[lit]:
				add(Ref{Name: lit, Offset: at})
			}
		}
		if tok == token.IDENT {
			prevLit = lit
		}
		prev2, prev = prev, tok
	}
	return refs.list
}

// refList collects references in order of first appearance, counting
// repeats.
type refList struct {
	list  []Ref
	index map[[2]string]int
}

func (l *refList) add(r Ref) {
	k := [2]string{r.Qual, r.Name}
	if i, ok := l.index[k]; ok {
		l.list[i].Count++
		return
	}
	if l.index == nil {
		l.index = make(map[[2]string]int)
	}
	l.index[k] = len(l.list)
	r.Count = 1
	l.list = append(l.list, r)
}
