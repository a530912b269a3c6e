package complete

import (
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, before, after, answer, want string
		lang                              string
		maxLines                          int
	}{
		{name: "plain", before: "func add(a, b int) int {\n\treturn ", after: "\n}\n", answer: "a + b", want: "a + b"},
		{name: "fenced, echoing the line", before: "func add(a, b int) int {\n\treturn ", after: "\n}\n",
			answer: "```go\n\treturn a + b\n```", want: "a + b"},
		{name: "fence with prose around it", before: "func add(a, b int) int {\n\treturn ", after: "\n}\n",
			answer: "Here is the completion:\n```\nreturn a + b\n```\nDone.", want: "a + b"},
		{name: "unterminated fence", before: "x := ", after: "\n", answer: "```go\nx := 42\n", want: "42"},
		{name: "echo of the word being typed", before: "\tfmt.Pri", after: "\n", answer: "Println(x)", want: "ntln(x)"},
		{name: "word echo and an auto-paired bracket", before: "\tfmt.Pri", after: ")\n", answer: "Println(x)", want: "ntln(x"},
		{name: "one-letter identifier echoed", before: "\tfor i", after: "\n", answer: "i := 0; i < n; i++ {", want: " := 0; i < n; i++ {"},
		{name: "one punctuation char is not an echo", before: "\tx := a +", after: "\n", answer: "+ b", want: "+ b"},
		{name: "closing text already there", before: "\tfmt.Println(", after: ")\n}\n", answer: `"hi")`, want: `"hi"`},
		{name: "rest of the line repeated", before: "\tx := f(", after: ") + 1\n", answer: "a) + 1", want: "a"},
		{name: "block already closed below", before: "func f() int {\n\t", after: "\n}\n",
			answer: "x := 1\n\treturn x\n}\n\nfunc g() {}", want: "x := 1\n\treturn x"},
		{name: "new block: its closer is kept, what follows is cut", before: "func f() int {\n\t", after: "\n",
			answer: "x := 1\n\treturn x\n}\n\nfunc g() {}", want: "x := 1\n\treturn x\n}"},
		{name: "brackets in strings and comments do not count", before: "func f() {\n\t", after: "\n}\n",
			answer: "s := \"}\" // }\n\tprintln(s)\n}", want: "s := \"}\" // }\n\tprintln(s)"},
		{name: "inside a string literal", before: "\ts := \"hello, ", after: "\"\n", answer: "world\"", want: "world"},
		{name: "max lines", before: "func f() {\n", after: "\n}", answer: "\ta()\n\tb()\n\tc()", want: "\ta()\n\tb()", maxLines: 2},
		{name: "max lines: a suggestion starting on the next line", before: "func f() {", after: "\n}",
			answer: "\n\ta()\n\tb()\n\tc()", want: "\n\ta()\n\tb()", maxLines: 2},
		{name: "empty fence", before: "x := ", after: "\n", answer: "```\n```", want: ""},
		{name: "only an echo", before: "\treturn ", after: "\n", answer: "return ", want: ""},
		{name: "only white space", before: "x := ", after: "\n", answer: " \n\t\n", want: ""},
		{name: "CRLF document", before: "a := 1\r\nb := ", after: "\r\n", answer: "2\nc := 3", want: "2\r\nc := 3"},
		{name: "echoed cursor marker", before: "x := ", after: "\n", answer: "x := <|cursor|>42", want: "42"},
		{name: "python stops at the dedent", lang: "python", before: "def f(x):\n    y = x + 1\n    ", after: "\n\nprint(f(2))\n",
			answer: "return y\n\ndef g():\n    pass", want: "return y"},
		{name: "python block opener", lang: "python", before: "def f(x):", after: "\n",
			answer: "\n    return x\nprint(1)", want: "\n    return x"},
		{name: "markdown keeps inline fences", lang: "markdown", before: "Use ", after: "\n", answer: "```go``` fences.", want: "```go``` fences."},
		{name: "markdown unwraps a wholly fenced answer", lang: "markdown", before: "Use ", after: "\n", answer: "```\nfences.\n```", want: "fences."},
		{name: "whole lines above echoed", before: "func f() {\n\ta := 1\n\tb := ", after: "\n}", answer: "\ta := 1\n\tb := 2", want: "2"},
		{name: "cursor in the indentation, answer indented again", before: "if x {\n\t", after: "\n}", answer: "\treturn 1", want: "return 1"},
		{name: "cursor in deeper indentation", before: "if x {\n\t\t", after: "\n}", answer: "\treturn 1", want: "return 1"},
		{name: "prefix echoed without indentation", before: "\t\tx := ", after: "\n", answer: "x := 42", want: "42"},
		{name: "the lines below repeated", before: "func f() {\n\t", after: "\n\tif x {\n\t\treturn\n\t}\n}\n",
			answer: "if x {\n\t\treturn\n\t}", want: ""},
		{name: "the line typed over, contradicting the typed word", before: "func f() {\n\tfmt.Px", after: "\n}",
			answer: "\tfmt.Println(x)", want: ""},
		{name: "the line typed over without its indentation", before: "\tfmt.Px", after: "\n", answer: "fmt.Println(x)", want: ""},
		{name: "a token of the line typed over", before: "\tx := fmt.Px", after: "\n", answer: "fmt.Sprintf(\"%d\", x)", want: ""},
		{name: "an identifier alone on its line typed over", before: "\tPx", after: "\n", answer: "\tPrintln(x)", want: ""},
		{name: "the line started over after punctuation", before: "\tfoo(", after: "\n", answer: "\tbar(1)", want: ""},
		{name: "the line started over after an operator", before: "    x = ", after: "\n", answer: "    y = 2", want: ""},
		{name: "a tab-aligned comment after code is kept", before: "\tx := 1", after: "\n", answer: "\t// one", want: "\t// one"},
		{name: "an argument after punctuation is kept", before: "\tfoo(", after: "\n", answer: "bar(1)", want: "bar(1)"},
		{name: "a token of the line echoed with other indentation", before: "\tx := fmt.Pr", after: "\n",
			answer: "  fmt.Println(x)", want: "intln(x)"},
		{name: "the word's first letter is a continuation", before: "\tad", after: "\n", answer: "apter.Run()", want: "apter.Run()"},
		{name: "trailing blank line already there", before: "a()", after: "\n\nb()", answer: "\nc()\n", want: "\nc()"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lang := tt.lang
			if lang == "" {
				lang = "go"
			}
			got := Normalize(tt.answer, Around{Before: tt.before, After: tt.after, Language: lang, MaxLines: tt.maxLines})
			if got != tt.want {
				t.Errorf("Normalize(%q) with %q|%q = %q, want %q", tt.answer, tt.before, tt.after, got, tt.want)
			}
		})
	}
}

// FuzzNormalize checks that any answer yields either nothing or a text
// without fences, that never ends in white space, within MaxLines lines.
func FuzzNormalize(f *testing.F) {
	f.Add("```go\n\treturn a + b\n```", "func f() {\n\treturn ", "\n}\n", 3)
	f.Add("Println(x)", "\tfmt.Pri", ")\n", 1)
	f.Add("x\r\ny", "a\r\n", "\r\n", 0)
	f.Add("<|cursor|><|cursor|>}", "{", "}", 2)
	f.Fuzz(func(t *testing.T, answer, before, after string, maxLines int) {
		maxLines = maxLines%50 + 1
		if maxLines < 1 {
			maxLines = 1
		}
		got := Normalize(answer, Around{Before: before, After: after, Language: "go", MaxLines: maxLines})
		if got == "" {
			return
		}
		if strings.TrimSpace(got) == "" {
			t.Fatalf("white space only: %q", got)
		}
		if strings.TrimRight(got, " \t\r\n") != got {
			t.Fatalf("trailing white space: %q", got)
		}
		n := strings.Count(strings.TrimPrefix(strings.TrimPrefix(got, "\r"), "\n"), "\n")
		if n >= maxLines {
			t.Fatalf("%d lines, max %d: %q", n+1, maxLines, got)
		}
	})
}
