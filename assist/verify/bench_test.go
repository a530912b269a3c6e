package verify

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/symbols"
)

// benchModule writes a 50-file Go module whose files call each other and
// the standard library, and returns its directory and the text of f0.go.
func benchModule(b *testing.B) (string, string) {
	b.Helper()
	dir := b.TempDir()
	must := func(err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/bench\n\ngo 1.22\n"), 0o644))
	var first string
	for i := range 50 {
		var sb strings.Builder
		fmt.Fprintf(&sb, "package bench\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n")
		for j := range 8 {
			fmt.Fprintf(&sb, "// F%d_%d joins its arguments.\nfunc F%d_%d(xs []string, n int) string {\n", i, j, i, j)
			fmt.Fprintf(&sb, "\tif n <= 0 {\n\t\treturn strings.Join(xs, \",\")\n\t}\n")
			fmt.Fprintf(&sb, "\treturn fmt.Sprint(F%d_%d(xs, n-1), len(xs))\n}\n\n", (i+1)%50, j)
		}
		if i == 0 {
			first = sb.String()
		}
		must(os.WriteFile(filepath.Join(dir, "f"+strconv.Itoa(i)+".go"), []byte(sb.String()), 0o644))
	}
	return dir, first
}

// report records the p50 and p90 of the latencies.
func report(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	p := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(p(0.5), "p50-ms")
	b.ReportMetric(p(0.9), "p90-ms")
}

// helperRSS returns the resident memory of the running helper, in MiB.
func helperRSS(b *testing.B, v *Verifier, argv ...string) float64 {
	v.mu.Lock()
	s := v.helpers[slotKey(argv, true)]
	v.mu.Unlock()
	if s != nil {
		s.start.Lock()
		defer s.start.Unlock()
	}
	if s == nil || s.h == nil {
		b.Fatalf("no helper %v", argv)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.h.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

func benchVerifier(b *testing.B, dir string) *Verifier {
	v := New(Options{Folders: func() []workspaceURI { return []workspaceURI{fileURI(dir)} }, Env: helperEnv, Bounds: Bounds{Cold: 120 * time.Second}})
	return v
}

// BenchmarkCheckGo measures the time a check adds to an edit of one file
// of a 50-file module: warm (gopls running, the file checked before) and
// cold (a new gopls for each edit; its on-disk cache is warm).
func BenchmarkCheckGo(b *testing.B) {
	if _, err := execLookPath("gopls"); err != nil {
		b.Fatal("gopls not found on PATH")
	}
	dir, text := benchModule(b)
	uri := fileURI(filepath.Join(dir, "f0.go"))
	edit := func(i int) string {
		return strings.Replace(text, "return strings.Join(xs, \",\")", fmt.Sprintf("return strings.Join(xs, %q)", strconv.Itoa(i)), 1)
	}
	b.Run("warm", func(b *testing.B) { benchWarm(b, dir, uri, text, edit, "gopls") })
	b.Run("cold", func(b *testing.B) {
		var lat []time.Duration
		for i := 0; b.Loop(); i++ {
			v := benchVerifier(b, dir)
			t0 := time.Now()
			r := v.Check(context.Background(), []File{{uri, text}}, []File{{uri, edit(i)}})
			lat = append(lat, time.Since(t0))
			b.StopTimer()
			v.Close()
			b.StartTimer()
			if !r.Verified || len(r.NewErrors) != 0 {
				b.Fatal(r.Line())
			}
		}
		report(b, lat)
	})
	// The first check on a machine: gopls's file cache is empty, so it
	// type-checks the standard library packages the module imports.
	b.Run("first", func(b *testing.B) {
		var lat []time.Duration
		for i := 0; b.Loop(); i++ {
			v := New(Options{Folders: func() []workspaceURI { return []workspaceURI{fileURI(dir)} },
				Env:    append(slices.Clone(helperEnv), "GOPLSCACHE="+b.TempDir()),
				Bounds: Bounds{Cold: 120 * time.Second}})
			t0 := time.Now()
			r := v.Check(context.Background(), []File{{uri, text}}, []File{{uri, edit(i)}})
			lat = append(lat, time.Since(t0))
			b.StopTimer()
			v.Close()
			b.StartTimer()
			if !r.Verified || len(r.NewErrors) != 0 {
				b.Fatal(r.Line())
			}
		}
		report(b, lat)
	})
}

// BenchmarkDefinitionsGo measures what the helper's definitions add
// before an action's prompt is built (Definitions, gopls warm): the names
// of the whole of f0.go of the 50-file module, at most 48 (as
// relevance.Lookups gives them), asked at once.
func BenchmarkDefinitionsGo(b *testing.B) {
	if _, err := execLookPath("gopls"); err != nil {
		b.Fatal("gopls not found on PATH")
	}
	dir, text := benchModule(b)
	uri := fileURI(filepath.Join(dir, "f0.go"))
	var offsets []int
	for _, r := range symbols.GoRefs([]byte(text), 0, len(text)) {
		if r.Qual == "" && (r.Name == "fmt" || r.Name == "strings") {
			continue // package names, as Lookups leaves them out
		}
		if offsets = append(offsets, r.Offset); len(offsets) == 48 {
			break
		}
	}
	v := benchVerifier(b, dir)
	defer v.Close()
	file := File{URI: uri, Text: text}
	if r := v.Check(context.Background(), []File{file}, []File{file}); !r.Verified {
		b.Fatal(r.Line())
	}
	var lat []time.Duration
	located := 0
	for b.Loop() {
		t0 := time.Now()
		out, r := v.Definitions(context.Background(), file, offsets)
		lat = append(lat, time.Since(t0))
		if !r.Verified || r.Reason != "" {
			b.Fatalf("%+v", r)
		}
		located = 0
		for _, l := range out {
			if len(l) > 0 {
				located++
			}
		}
	}
	report(b, lat)
	b.ReportMetric(float64(len(offsets)), "names")
	b.ReportMetric(float64(located), "located")
}

// BenchmarkCheckPython is the same for pyright on one module of 50
// functions.
func BenchmarkCheckPython(b *testing.B) {
	if _, err := execLookPath("pyright-langserver"); err != nil {
		b.Fatal("pyright-langserver not found on PATH")
	}
	dir := b.TempDir()
	var sb strings.Builder
	for i := range 50 {
		fmt.Fprintf(&sb, "def f%d(xs: list[str], n: int) -> str:\n    if n <= 0:\n        return \",\".join(xs)\n    return f%d(xs, n - 1)\n\n\n", i, (i+1)%50)
	}
	text := sb.String()
	if err := os.WriteFile(filepath.Join(dir, "m.py"), []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	uri := fileURI(filepath.Join(dir, "m.py"))
	edit := func(i int) string {
		return strings.Replace(text, "return \",\".join(xs)", fmt.Sprintf("return %q.join(xs)", strconv.Itoa(i)), 1)
	}
	b.Run("warm", func(b *testing.B) { benchWarm(b, dir, uri, text, edit, "pyright-langserver", "--stdio") })
}

// benchWarm times Check of edit(i) against text with one helper kept
// running (checked once before), and reports its latencies and the RSS of
// the helper named by argv.
func benchWarm(b *testing.B, dir string, uri workspaceURI, text string, edit func(int) string, argv ...string) {
	v := benchVerifier(b, dir)
	defer v.Close()
	if r := v.Check(context.Background(), []File{{uri, text}}, []File{{uri, edit(-1)}}); !r.Verified {
		b.Fatal(r.Line())
	}
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		t0 := time.Now()
		r := v.Check(context.Background(), []File{{uri, text}}, []File{{uri, edit(i)}})
		lat = append(lat, time.Since(t0))
		if !r.Verified || len(r.NewErrors) != 0 {
			b.Fatal(r.Line())
		}
	}
	report(b, lat)
	b.ReportMetric(helperRSS(b, v, argv...), "rss-MiB")
}

type workspaceURI = workspace.URI

var (
	fileURI      = workspace.FileURI
	execLookPath = exec.LookPath
)

// BenchmarkCheckSuggestion measures the check of a next-edit suggestion
// (assist.Engine.CheckSuggestion: one Check of the file before and after
// it) on real-size files: net/http's, with $(go env GOROOT)/src as the
// workspace folder (module std) and gopls warm. Each iteration checks a
// clean suggestion and one that adds an undefined name (reported apart:
// clean-p50-ms, broken-p50-ms, …), a new declaration at the end of the
// file, so that gopls type-checks net/http again for each; the checks
// gopls did not answer within DiagTimeout are counted (unanswered), not
// timed.
func BenchmarkCheckSuggestion(b *testing.B) {
	if _, err := execLookPath("gopls"); err != nil {
		b.Fatal("gopls not found on PATH")
	}
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatal(err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	for _, name := range []string{"cookie.go", "client.go", "fs.go"} {
		b.Run(name, func(b *testing.B) {
			p := filepath.Join(src, "net", "http", name)
			raw, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			text := string(raw)
			with := func(decl string) string { return text + "\n" + decl + "\n" }
			uri := fileURI(p)
			v := benchVerifier(b, src)
			defer v.Close()
			if r := v.Check(context.Background(), []File{{uri, text}}, []File{{uri, with("var _ = 0")}}); !r.Verified {
				b.Fatal(r.Line())
			}
			var clean, broken []time.Duration
			unanswered := 0
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				r := v.Check(context.Background(), []File{{uri, text}}, []File{{uri, with(fmt.Sprintf("var _ = %d", i))}})
				took := time.Since(t0)
				switch {
				case !r.Verified:
					// gopls did not answer within DiagTimeout (a loaded
					// machine): the suggestion would be shown unchecked.
					unanswered++
				case len(r.NewErrors) != 0:
					b.Fatal("clean:", r.Line())
				default:
					clean = append(clean, took)
				}
				t0 = time.Now()
				r = v.Check(context.Background(), []File{{uri, text}}, []File{{uri, with(fmt.Sprintf("var _ = undefinedNext%d", i))}})
				took = time.Since(t0)
				switch {
				case !r.Verified:
					unanswered++
				case len(r.NewErrors) != 1:
					b.Fatal("broken:", r.Line())
				default:
					broken = append(broken, took)
				}
			}
			if len(clean) == 0 || len(broken) == 0 {
				b.Fatalf("gopls answered no check of one kind (%d unanswered)", unanswered)
			}
			reportAs(b, "clean-", clean)
			reportAs(b, "broken-", broken)
			b.ReportMetric(float64(unanswered), "unanswered")
			b.ReportMetric(float64(strings.Count(text, "\n")), "lines")
		})
	}
}

// reportAs records the p50 and p90 of the latencies, their names
// prefixed.
func reportAs(b *testing.B, prefix string, lat []time.Duration) {
	slices.Sort(lat)
	p := func(q float64) float64 {
		return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(p(0.5), prefix+"p50-ms")
	b.ReportMetric(p(0.9), prefix+"p90-ms")
}
