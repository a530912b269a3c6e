package verify

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

const defsUse = `package m

import "fmt"

func Run(p *Pool) {
	conn := p.Get()
	fmt.Println(conn.Addr)
	conn.Close()
	missing()
}
`

const defsConn = `package m

// A is one kind of connection.
type A struct{ Addr string }

func (a *A) Close() error { return nil }

// B is another.
type B struct {
	Addr string
}

func (b *B) Close() error { return nil }

// Pool hands out Bs.
type Pool struct{ idle []*B }

func (p *Pool) Get() *B { return p.idle[0] }
`

// lineIn returns the 0-based line of text holding s.
func lineIn(t *testing.T, text, s string) int {
	t.Helper()
	i := strings.Index(text, s)
	if i < 0 {
		t.Fatalf("no %q", s)
	}
	return strings.Count(text[:i], "\n")
}

// definitionsOnce asks until the helper answers (it starts in the
// background at the first call), within a minute.
func definitionsOnce(t *testing.T, v *Verifier, file File, offsets []int) ([][]Location, Result) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		out, r := v.Definitions(context.Background(), file, offsets)
		if r.Verified && r.Reason == "" || time.Now().After(deadline) {
			return out, r
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestDefinitionsGopls: gopls says where each name of a selection is
// declared, with the editor's buffers as it sees them; the first call
// starts it without waiting.
func TestDefinitionsGopls(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"use.go": defsUse, "conn.go": defsConn})
	// The editor has conn.go open with two lines more at the top than the
	// disk: the lines gopls gives must be the buffer's.
	edited := "package m\n\n// edited in the editor\n\n" + strings.TrimPrefix(defsConn, "package m\n\n")
	docs := workspace.NewDocuments()
	if err := docs.Open(uriOf(dir, "conn.go"), "go", 3, edited); err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, dir, Options{Buffers: docs.All})
	use := File{URI: uriOf(dir, "use.go"), Text: defsUse}
	at := func(s string) int { return strings.Index(defsUse, s) }
	offsets := []int{at("Get()"), at("Addr)"), at("Close()"), at("conn :="), at("Println"), at("missing")}

	start := time.Now()
	out, r := v.Definitions(context.Background(), use, offsets)
	if r.Verified || r.Reason != "gopls is starting" || out != nil {
		t.Fatalf("first call: %v %+v, want none, gopls is starting", out, r)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the first call waited %v for the start", took)
	}
	out, r = definitionsOnce(t, v, use, offsets)
	if !r.Verified || !slices.Equal(r.Helpers, []string{"gopls"}) {
		t.Fatalf("gopls did not answer: %+v", r)
	}
	one := func(i int, uri workspace.URI, line int) {
		t.Helper()
		if len(out[i]) != 1 || out[i][0].URI != uri || out[i][0].Line != line {
			t.Errorf("definition %d = %+v, want %s:%d", i, out[i], uri, line)
		}
	}
	conn := uriOf(dir, "conn.go")
	one(0, conn, lineIn(t, edited, "func (p *Pool) Get()"))
	one(1, conn, lineIn(t, edited, "\tAddr string"))
	one(2, conn, lineIn(t, edited, "func (b *B) Close()"))
	one(3, use.URI, lineIn(t, defsUse, "conn :="))
	if len(out[4]) != 1 || !strings.HasSuffix(string(out[4][0].URI), "/fmt/print.go") {
		t.Errorf("fmt.Println: %+v, want GOROOT's fmt/print.go", out[4])
	}
	if len(out[5]) != 0 {
		t.Errorf("an undefined name has a definition: %+v", out[5])
	}
}

// TestDefinitionsPyright: the same with pyright, across modules.
func TestDefinitionsPyright(t *testing.T) {
	needPyright(t)
	dir := t.TempDir()
	lib := "class Store:\n    def save(self, total: int) -> None:\n        pass\n\n\ndef open_store() -> Store:\n    return Store()\n"
	app := "from lib import open_store\n\n\ndef run() -> None:\n    s = open_store()\n    s.save(1)\n"
	write(t, dir, "lib.py", lib)
	write(t, dir, "app.py", app)
	v := newVerifier(t, dir, Options{})
	file := File{URI: uriOf(dir, "app.py"), Text: app}
	offsets := []int{strings.Index(app, "open_store()"), strings.Index(app, "save(1)")}
	v.Definitions(context.Background(), file, offsets) // starts it
	out, r := definitionsOnce(t, v, file, offsets)
	if !r.Verified {
		t.Fatalf("pyright did not answer: %+v", r)
	}
	libURI := uriOf(dir, "lib.py")
	for i, want := range []int{lineIn(t, lib, "def open_store"), lineIn(t, lib, "def save")} {
		if !slices.ContainsFunc(out[i], func(l Location) bool { return sameFile(l.URI, libURI) && l.Line == want }) {
			t.Errorf("definition %d = %+v, want lib.py:%d", i, out[i], want)
		}
	}
}

// sameFile compares two file URIs by their paths (servers spell URIs
// their own way).
func sameFile(a, b workspace.URI) bool {
	pa, err1 := a.Path()
	pb, err2 := b.Path()
	return err1 == nil && err2 == nil && filepath.Clean(pa) == filepath.Clean(pb)
}

// TestDefinitionsHelperStopsAnswering: a warm helper that stops answering
// costs one bound, then it is stopped and not asked again.
func TestDefinitionsHelperStopsAnswering(t *testing.T) {
	needGopls(t)
	dir := goModule(t, map[string]string{"a.go": goValid})
	bounds := Bounds{Definition: 2 * time.Second}
	v := newVerifier(t, dir, Options{Bounds: bounds})
	a := uriOf(dir, "a.go")
	if r := v.Check(context.Background(), []File{{a, goValid}}, []File{{a, goValid}}); !r.Verified {
		t.Fatalf("warm-up: %+v", r)
	}
	file := File{URI: a, Text: goValid}
	offsets := []int{strings.Index(goValid, "F()")}
	if out, r := v.Definitions(context.Background(), file, offsets); !r.Verified || len(out[0]) != 1 {
		t.Fatalf("warm: %v %+v", out, r)
	}
	pid := helperPid(t, v, "gopls")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	start := time.Now()
	out, r := v.Definitions(context.Background(), file, offsets)
	took := time.Since(start)
	if r.Verified || r.Reason != "gopls did not answer within 2s" || len(out) != 1 || out[0] != nil {
		t.Errorf("got %v %+v, want nothing, gopls did not answer within 2s", out, r)
	}
	if took > bounds.Definition+5*time.Second {
		t.Errorf("took %v, bound %v", took, bounds.Definition)
	}
	// Not asked again for RetryAfter.
	if _, r := v.Definitions(context.Background(), file, offsets); r.Verified || !strings.Contains(r.Reason, "did not answer") {
		t.Errorf("second call: %+v", r)
	}
}

// TestDefinitionsNoHelper: no helper on PATH, a language without one, no
// names: nothing, and nothing started.
func TestDefinitionsNoHelper(t *testing.T) {
	dir := goModule(t, map[string]string{"a.go": goValid})
	t.Setenv("PATH", t.TempDir())
	v := newVerifier(t, dir, Options{})
	if _, r := v.Definitions(context.Background(), File{URI: uriOf(dir, "a.go"), Text: goValid}, []int{1}); r.Verified || r.Reason != "no gopls found" {
		t.Errorf("no gopls: %+v", r)
	}
	if _, r := v.Definitions(context.Background(), File{URI: uriOf(dir, "a.md"), Text: "# x"}, []int{1}); !r.None {
		t.Errorf("markdown: %+v", r)
	}
	if len(v.helpers) != 0 {
		t.Errorf("a helper slot was made: %v", v.helpers)
	}
}

func TestParseLocations(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []Location
	}{
		{`null`, nil},
		{`[]`, nil},
		{`{"uri":"file:///a.go","range":{"start":{"line":3,"character":1},"end":{"line":3,"character":2}}}`, []Location{{"file:///a.go", 3}}},
		{`[{"uri":"file:///a.go","range":{"start":{"line":3,"character":1},"end":{"line":3,"character":2}}},{"uri":"file:///b.go","range":{"start":{"line":9,"character":0},"end":{"line":9,"character":1}}}]`,
			[]Location{{"file:///a.go", 3}, {"file:///b.go", 9}}},
		{`[{"targetUri":"file:///c.py","targetRange":{"start":{"line":1,"character":0},"end":{"line":5,"character":0}},"targetSelectionRange":{"start":{"line":2,"character":4},"end":{"line":2,"character":8}}}]`,
			[]Location{{"file:///c.py", 2}}},
		{`[{"targetUri":"file:///c.py","targetRange":{"start":{"line":1,"character":0},"end":{"line":5,"character":0}}}]`, []Location{{"file:///c.py", 1}}},
		{`"garbage"`, nil},
		{`[{"range":{}}]`, nil},
		{`{`, nil},
	} {
		if got := parseLocations(json.RawMessage(c.raw)); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.raw, got, c.want)
		}
	}
}

// FuzzParseLocations: any reply, however malformed, gives locations with a
// URI and a line, or none, and never panics.
func FuzzParseLocations(f *testing.F) {
	f.Add(`[{"uri":"file:///a.go","range":{"start":{"line":3,"character":1},"end":{"line":3,"character":2}}}]`)
	f.Add(`{"targetUri":"file:///c.py","targetSelectionRange":{"start":{"line":2,"character":4}}}`)
	f.Add(`null`)
	f.Add(`[{"uri":1}]`)
	f.Fuzz(func(t *testing.T, raw string) {
		for _, l := range parseLocations(json.RawMessage(raw)) {
			if l.URI == "" || l.Line < 0 {
				t.Fatalf("%q: location %+v", raw, l)
			}
		}
	})
}
