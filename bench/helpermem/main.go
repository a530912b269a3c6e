// Command helpermem measures what the helper language servers kimi-lsp
// starts to verify edits cost in memory: one small workspace with a Go, a
// Python, a TypeScript and a C file, one check of a one-line edit in each
// (which starts that language's helper), then the resident memory of
// every process the helpers run, untrusted (restricted, the default) and
// trusted. The helpers are the ones on PATH (gopls, pyright-langserver,
// typescript-language-server, clangd); a missing one is said and left
// out.
//
//	go run ./bench/helpermem
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/verify"
	"github.com/kimi-lsp/kimi-lsp/bench/internal/benchkit"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

var files = map[string][2]string{
	"go.mod": {"module example.com/m\n\ngo 1.26\n", ""},
	"a.go":   {"package m\n\nfunc Add(a, b int) int { return a + b }\n", "package m\n\nfunc Add(a, b int) int { return a - b }\n"},
	"a.py":   {"def add(a: int, b: int) -> int:\n    return a + b\n", "def add(a: int, b: int) -> int:\n    return a - b\n"},
	"a.ts":   {"export const x: number = 'one';\nexport function add(a: number, b: number): number { return a + b; }\n", "export const x: number = 'one';\nexport function add(a: number, b: number): number { return a - b; }\n"},
	"a.c":    {"int add(int a, int b) { return a + b; }\n", "int add(int a, int b) { return a - b; }\n"},
}

func main() {
	dir, err := os.MkdirTemp("", "kimi-helpermem-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(dir)
	for name, t := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(t[0]), 0o644); err != nil {
			fail(err)
		}
	}
	fmt.Printf("load %s\n", benchkit.LoadAvg())
	for _, trusted := range []bool{false, true} {
		measure(dir, trusted)
		// Close returns before every helper has exited: wait for them.
		for i := 0; i < 300 && len(benchkit.Descendants(os.Getpid())) > 0; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
}

func measure(dir string, trusted bool) {
	folder := workspace.FileURI(dir)
	opts := verify.Options{Folders: func() []workspace.URI { return []workspace.URI{folder} }}
	if trusted {
		opts.Trusted = func([]workspace.URI) bool { return true }
	}
	v := verify.New(opts)
	defer v.Close()
	fmt.Printf("\n%s folder:\n", map[bool]string{false: "untrusted", true: "trusted"}[trusted])
	names := make([]string, 0, len(files))
	for name := range files {
		if name != "go.mod" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	for _, name := range names {
		uri := workspace.FileURI(filepath.Join(dir, name))
		t := files[name]
		r := v.Check(context.Background(), []verify.File{{URI: uri, Text: t[0]}}, []verify.File{{URI: uri, Text: t[1]}})
		fmt.Printf("  %s: %s\n", name, r.Line())
	}
	var total int64
	procs := benchkit.Descendants(os.Getpid())
	byName := map[string][2]int64{}
	for _, pid := range procs {
		m, err := benchkit.ReadMem(pid)
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid))
		n := strings.TrimSpace(string(b))
		e := byName[n]
		byName[n] = [2]int64{e[0] + 1, e[1] + m.RSS}
		total += m.RSS
	}
	keys := make([]string, 0, len(byName))
	for k := range byName {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Printf("  %-22s %d process(es) %6.0f MiB\n", k, byName[k][0], float64(byName[k][1])/1024)
	}
	fmt.Printf("  total: %d processes, %.0f MiB resident\n", len(procs), float64(total)/1024)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "helpermem:", err)
	os.Exit(1)
}
