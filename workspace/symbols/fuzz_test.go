package symbols

import "testing"

var fuzzLangs = []string{"go", "python", "typescript", "rust", "c", "java", "ruby", "php", "lua", "shellscript", "elixir", "haskell"}

// FuzzParse checks that any input parses without panicking into
// declarations whose ranges lie inside it, and that references can be read
// from any range of it.
func FuzzParse(f *testing.F) {
	f.Add(uint8(0), []byte(goSrc), 3, 40)
	f.Add(uint8(0), []byte("package p\nfunc A() {\n\tif x {\n}\nfunc B() {}\n"), 0, 10)
	f.Add(uint8(1), []byte("@d\nclass A:\n  pass\n# c\ndef b():\n  return 'x'\n"), 5, 30)
	f.Add(uint8(2), []byte("export function f() {\n}\n/* x */ const a = `t${b}`;\n"), 0, 50)
	f.Add(uint8(4), []byte("#define X 1\nstatic int\nf(void)\n{\n}\n"), 2, 20)
	f.Add(uint8(6), []byte("class A\n  def b\n  end\nend\n"), 0, 100)
	f.Fuzz(func(t *testing.T, which uint8, src []byte, start, end int) {
		lang := fuzzLangs[int(which)%len(fuzzLangs)]
		file := Parse(lang, src)
		n := int32(len(src))
		for _, d := range file.Defs {
			if d.Name == "" || d.Start < 0 || d.Start > d.Header() || d.Header() > d.End || d.End > n {
				t.Fatalf("%s: bad declaration %+v in %d bytes", lang, d, n)
			}
		}
		for _, r := range Refs(lang, src, start, end) {
			if r.Name == "" {
				t.Fatalf("%s: empty reference", lang)
			}
			if r.Offset < start || r.Offset+len(r.Name) > min(end, len(src)) || string(src[r.Offset:r.Offset+len(r.Name)]) != r.Name {
				t.Fatalf("%s: reference %+v is not at its offset in [%d, %d)", lang, r, start, end)
			}
		}
	})
}
