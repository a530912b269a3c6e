package symbols

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
)

// A lineScanner finds top-level declarations line by line: a declaration
// starts on a line with no indentation that one of its patterns matches,
// and runs to the next top-level line that is not a closer ("}", "end",
// ")") or a comment; the comment lines (and decorators) directly above it
// are its doc.
type lineScanner struct {
	decls []declPattern
	// docPrefixes start the comment (or decorator) lines of a doc.
	docPrefixes []string
	// closers start top-level lines that end the declaration above them
	// and belong to it.
	closers []string
	// keywords are left out of references.
	keywords map[string]bool
	// hash comments ("#") rather than C-style ones, for references.
	hashComments bool
}

type declPattern struct {
	re   *regexp.Regexp // submatch "name" is the declared name
	kind Kind
}

func pat(kind Kind, re string) declPattern {
	return declPattern{re: regexp.MustCompile(re), kind: kind}
}

func words(s string) map[string]bool {
	m := make(map[string]bool)
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var braceClosers = []string{"}", ")", "]"}

// scanners returns the scanners by language family (see family), compiled
// on first use: nothing is compiled when the program starts.
var scanners = sync.OnceValue(func() map[string]*lineScanner {
	return map[string]*lineScanner{
		"python": {
			decls: []declPattern{
				pat(Func, `^(?:async\s+)?def\s+(?P<name>[A-Za-z_]\w*)`),
				pat(Type, `^class\s+(?P<name>[A-Za-z_]\w*)`),
				pat(Const, `^(?P<name>[A-Z][A-Z0-9_]*)\s*(?::[^=]*)?=[^=]`),
				pat(Var, `^(?P<name>[A-Za-z_]\w*)\s*(?::[^=]*)?=[^=]`),
			},
			docPrefixes:  []string{"#", "@"},
			closers:      []string{")", "]", "}"},
			keywords:     words("False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield self cls print len str int float list dict set tuple bool object super isinstance range"),
			hashComments: true,
		},
		"js": {
			decls: []declPattern{
				pat(Func, `^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:async\s+)?function\s*\*?\s*(?P<name>[A-Za-z_$][\w$]*)`),
				pat(Type, `^(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:class|interface|enum|namespace|module)\s+(?P<name>[A-Za-z_$][\w$]*)`),
				pat(Type, `^(?:export\s+)?(?:declare\s+)?type\s+(?P<name>[A-Za-z_$][\w$]*)`),
				pat(Const, `^(?:export\s+)?(?:declare\s+)?const\s+(?P<name>[A-Za-z_$][\w$]*)`),
				pat(Var, `^(?:export\s+)?(?:declare\s+)?(?:let|var)\s+(?P<name>[A-Za-z_$][\w$]*)`),
			},
			docPrefixes: []string{"//", "/*", "*", "@"},
			closers:     braceClosers,
			keywords:    words("abstract any as async await boolean break case catch class const constructor continue debugger declare default delete do else enum export extends false finally for from function get if implements import in instanceof interface keyof let module namespace never new null number object of private protected public readonly require return set static string super switch symbol this throw true try type typeof undefined unknown var void while with yield console"),
		},
		"rust": {
			decls: []declPattern{
				pat(Func, `^(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+"[^"]*")\s+)*fn\s+(?P<name>[A-Za-z_]\w*)`),
				pat(Type, `^(?:pub(?:\([^)]*\))?\s+)?(?:struct|enum|trait|type|union|mod)\s+(?P<name>[A-Za-z_]\w*)`),
				pat(Const, `^(?:pub(?:\([^)]*\))?\s+)?(?:const|static)\s+(?:mut\s+)?(?P<name>[A-Za-z_]\w*)`),
				pat(Func, `^macro_rules!\s*(?P<name>[A-Za-z_]\w*)`),
			},
			docPrefixes: []string{"//", "#[", "/*", "*"},
			closers:     braceClosers,
			keywords:    words("as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err Box Vec String Option Result"),
		},
		"c": {
			decls: []declPattern{
				pat(Const, `^#\s*define\s+(?P<name>[A-Za-z_]\w*)`),
				pat(Type, `^(?:typedef\s+)?(?:struct|union|enum|class)\s+(?P<name>[A-Za-z_]\w*)\s*(?:\{|:|$)`),
				pat(Type, `^typedef\s+[^;(]*?\b(?P<name>[A-Za-z_]\w*)\s*;`),
				pat(Type, `^namespace\s+(?P<name>[A-Za-z_]\w*)`),
				pat(Func, `^(?:[A-Za-z_][\w:<>,\*&\s]*?[\s\*&])?(?P<name>[A-Za-z_][\w:~]*)\s*\([^;]*$`),
			},
			docPrefixes: []string{"//", "/*", "*", "template"},
			closers:     braceClosers,
			keywords:    words("auto break case char const continue default do double else enum extern float for goto if inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void volatile while bool true false nullptr NULL class namespace template typename public private protected virtual override new delete this using std"),
		},
		"jvm": {
			decls: []declPattern{
				pat(Type, `^(?:(?:public|private|protected|internal|static|final|abstract|sealed|open|data|inline|value|partial|export|enum|annotation|case)\s+)*(?:class|interface|enum|record|object|struct|protocol|trait|extension)\s+(?P<name>[A-Za-z_]\w*)`),
				pat(Func, `^(?:(?:public|private|protected|internal|inline|suspend|static|final)\s+)*(?:fun|func|def)\s+(?:<[^>]*>\s*)?(?:[A-Za-z_]\w*\.)?(?P<name>[A-Za-z_]\w*)`),
				pat(Const, `^(?:(?:public|private|protected|internal|const)\s+)*(?:val|let|final)\s+(?P<name>[A-Za-z_]\w*)`),
				pat(Var, `^(?:(?:public|private|protected|internal)\s+)*var\s+(?P<name>[A-Za-z_]\w*)`),
			},
			docPrefixes: []string{"//", "/*", "*", "@", "["},
			closers:     braceClosers,
			keywords:    words("abstract boolean break byte case catch char class const continue default do double else enum extends final finally float for if implements import instanceof int interface long native new null package private protected public return short static super switch synchronized this throw throws try void volatile while true false val var fun let func def object override String List Map"),
		},
		"ruby": {
			decls: []declPattern{
				pat(Type, `^(?:class|module)\s+(?P<name>[A-Z]\w*)`),
				pat(Func, `^def\s+(?:self\.)?(?P<name>[A-Za-z_]\w*[?!=]?)`),
				pat(Const, `^(?P<name>[A-Z][A-Z0-9_]*)\s*=[^=]`),
			},
			docPrefixes:  []string{"#"},
			closers:      []string{"end", ")", "]", "}"},
			keywords:     words("alias and begin break case class def defined do else elsif end ensure false for if in module next nil not or redo rescue retry return self super then true undef unless until when while yield require puts attr_reader attr_accessor"),
			hashComments: true,
		},
		"php": {
			decls: []declPattern{
				pat(Func, `^function\s+&?(?P<name>[A-Za-z_]\w*)`),
				pat(Type, `^(?:(?:abstract|final|readonly)\s+)*(?:class|interface|trait|enum)\s+(?P<name>[A-Za-z_]\w*)`),
				pat(Const, `^(?:const|define\(\s*['"])\s*(?P<name>[A-Za-z_]\w*)`),
			},
			docPrefixes: []string{"//", "/*", "*", "#"},
			closers:     braceClosers,
			keywords:    words("abstract and array as break callable case catch class clone const continue declare default do echo else elseif empty enddeclare endfor endforeach endif endswitch endwhile extends final finally fn for foreach function global goto if implements include instanceof insteadof interface isset list match namespace new or print private protected public readonly require return static switch this throw trait try unset use var while yield null true false self parent"),
		},
		"lua": {
			decls: []declPattern{
				pat(Func, `^(?:local\s+)?function\s+(?:[A-Za-z_][\w]*[.:])*(?P<name>[A-Za-z_]\w*)`),
				pat(Func, `^(?:local\s+)?(?:[A-Za-z_]\w*\.)*(?P<name>[A-Za-z_]\w*)\s*=\s*function\b`),
			},
			docPrefixes: []string{"--"},
			closers:     []string{"end", "}", ")"},
			keywords:    words("and break do else elseif end false for function goto if in local nil not or repeat return then true until while self"),
		},
		"shellscript": {
			decls: []declPattern{
				pat(Func, `^function\s+(?P<name>[A-Za-z_][\w-]*)`),
				pat(Func, `^(?P<name>[A-Za-z_][\w-]*)\s*\(\)`),
				pat(Var, `^(?:export\s+|readonly\s+)?(?P<name>[A-Z_][A-Z0-9_]*)=`),
			},
			docPrefixes:  []string{"#"},
			closers:      []string{"}", ")", "fi", "done", "esac"},
			keywords:     words("if then else elif fi case esac for while until do done in function select time local export readonly return echo exit set unset shift"),
			hashComments: true,
		},
		"elixir": {
			decls: []declPattern{
				pat(Type, `^defmodule\s+(?P<name>[A-Z][\w.]*)`),
			},
			docPrefixes:  []string{"#", "@"},
			closers:      []string{"end"},
			keywords:     words("def defp defmodule do end fn if else case cond when true false nil and or not in"),
			hashComments: true,
		},
		"haskell": {
			decls: []declPattern{
				pat(Type, `^(?:data|newtype|type|class)\s+(?:[A-Z]\w*\s+=>\s*)?(?P<name>[A-Z]\w*)`),
				pat(Func, `^(?P<name>[a-z_]\w*'*)\s*::`),
			},
			docPrefixes: []string{"--", "{-"},
			closers:     nil,
			keywords:    words("case class data default deriving do else foreign if import in infix infixl infixr instance let module newtype of then type where"),
		},
	}
})

// Scan finds the top-level declarations of src, a file in language lang,
// line by line (see the package comment). A language without a scanner
// yields a File with no declarations.
func Scan(lang string, src []byte) *File {
	out := &File{Lang: lang}
	if sc := scanners()[family(lang)]; sc != nil {
		out.Defs = sc.scan(src)
	}
	return out
}

// scan returns the declarations of src.
func (sc *lineScanner) scan(src []byte) []Def {
	var out []Def
	type hit struct {
		start, body int32 // line start, end of the first line
		name, recv  string
		kind        Kind
	}
	var hits []hit
	// anchors are the starts of top-level lines that end the declaration
	// before them: declarations and any other top-level code.
	var anchors []int32
	for off := 0; off < len(src); {
		end := bytes.IndexByte(src[off:], '\n')
		next := len(src)
		if end >= 0 {
			next = off + end + 1
		} else {
			end = len(src) - off
		}
		line := src[off : off+end]
		if len(line) > 0 && line[0] != ' ' && line[0] != '\t' && line[0] != '\r' && !sc.isDoc(line) && !sc.isCloser(line) {
			anchors = append(anchors, int32(off))
			for _, p := range sc.decls {
				if m := p.re.FindSubmatchIndex(line); m != nil {
					h := hit{start: int32(off), body: int32(next), kind: p.kind}
					i := 2 * p.re.SubexpIndex("name")
					h.name = string(line[m[i]:m[i+1]])
					if r := 2 * p.re.SubexpIndex("recv"); r >= 0 && m[r] >= 0 {
						h.recv = string(line[m[r]:m[r+1]])
					}
					hits = append(hits, h)
					break
				}
			}
		}
		off = next
	}
	a := 0
	for _, h := range hits {
		for a < len(anchors) && anchors[a] <= h.start {
			a++
		}
		end := int32(len(src))
		if a < len(anchors) {
			end = anchors[a]
			// Leave the next declaration's doc comment and the blank lines
			// before it.
			for end > h.body {
				ps := lineStart(src, end-1)
				l := trimSpace(src[ps : end-1])
				if len(l) != 0 && !(ps < end-1 && src[ps] != ' ' && src[ps] != '\t' && sc.isDoc(l)) {
					break
				}
				end = ps
			}
		}
		out = append(out, Def{Name: h.name, Kind: h.kind, Recv: h.recv, Start: sc.docStart(src, h.start), End: max(end, h.body), Body: h.body})
	}
	return out
}

func (sc *lineScanner) isDoc(line []byte) bool {
	for _, p := range sc.docPrefixes {
		if bytes.HasPrefix(line, []byte(p)) {
			return true
		}
	}
	return false
}

func (sc *lineScanner) isCloser(line []byte) bool {
	for _, c := range sc.closers {
		if bytes.HasPrefix(line, []byte(c)) && (len(line) == len(c) || !isIdentByte(line[len(c)])) {
			return true
		}
	}
	return false
}

// docStart returns where the doc lines directly above the line at start
// begin.
func (sc *lineScanner) docStart(src []byte, start int32) int32 {
	for start > 0 {
		ps := lineStart(src, start-1)
		l := trimSpace(src[ps : start-1])
		if len(l) == 0 || !sc.isDoc(l) {
			break
		}
		start = ps
	}
	return start
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// Refs returns the names src[start:end] refers to, as GoRefs does for Go;
// for other languages identifiers are read outside strings and comments,
// the language's keywords left out, and a.b gives {a, b} besides a.
func Refs(lang string, src []byte, start, end int) []Ref {
	if lang == "go" {
		return GoRefs(src, start, end)
	}
	start, end = max(start, 0), min(end, len(src))
	if start >= end {
		return nil
	}
	sc := scanners()[family(lang)]
	var kw map[string]bool
	hash := false
	if sc != nil {
		kw, hash = sc.keywords, sc.hashComments
	}
	b := src[start:end]
	var refs refList
	add := refs.add
	prevIdent, dot := "", false
	for i := 0; i < len(b); {
		c := b[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			for j < len(b) && b[j] != c && b[j] != '\n' {
				if b[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			prevIdent, dot = "", false
		case hash && c == '#', !hash && c == '/' && i+1 < len(b) && b[i+1] == '/':
			for i < len(b) && b[i] != '\n' {
				i++
			}
		case !hash && c == '/' && i+1 < len(b) && b[i+1] == '*':
			j := bytes.Index(b[i+2:], []byte("*/"))
			if j < 0 {
				i = len(b)
			} else {
				i += j + 4
			}
		case isIdentByte(c) && !('0' <= c && c <= '9'):
			j := i
			for j < len(b) && isIdentByte(b[j]) {
				j++
			}
			name := string(b[i:j])
			switch {
			case dot && prevIdent != "":
				add(Ref{Qual: prevIdent, Name: name, Offset: start + i})
			case dot:
				add(Ref{Qual: ".", Name: name, Offset: start + i})
			case !kw[name]:
				add(Ref{Name: name, Offset: start + i})
			}
			prevIdent, dot = name, false
			i = j
		case c == '.':
			dot = true
			i++
		case c == ' ' || c == '\t':
			i++
		default:
			if '0' <= c && c <= '9' {
				for i < len(b) && isIdentByte(b[i]) {
					i++
				}
			} else {
				i++
			}
			prevIdent, dot = "", false
		}
	}
	return refs.list
}
