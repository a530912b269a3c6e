// Command readloop measures, on the real kimi-lsp process, that the read
// loop does not wait on the disk (issue 11, item 4):
//
//   - exit: the time from writing `exit` to the process's end, while the
//     first scan of a large workspace folder is running (initialize, then
//     shutdown and exit at once);
//   - remove: the round trip of a codeAction sent right after a
//     didChangeWorkspaceFolders that removes the folder being scanned,
//     against the same codeAction with no folder change (baseline).
//
// The folder is generated once in a temporary directory: -dirs directories
// of -files-per-dir files each (400×100 = 40,000 by default), hard links to
// one small Go file (a scan lstat()s them like any file; making 40,000
// distinct files takes minutes on a busy disk).
//
//	go run ./bench/readloop -server new=/tmp/kimi-lsp -server old=/tmp/kimi-lsp-old -n 11
//
// With no -server, kimi-lsp is built from ./cmd/kimi-lsp. The summary is a
// Markdown table on stdout; per-run lines go to stderr.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/bench/internal/benchkit"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

type server struct{ name, path string }

type serverFlags []server

func (s *serverFlags) String() string { return fmt.Sprint(*s) }

func (s *serverFlags) Set(v string) error {
	name, path, ok := strings.Cut(v, "=")
	if !ok || name == "" || path == "" {
		return fmt.Errorf("want NAME=PATH, got %q", v)
	}
	*s = append(*s, server{name, path})
	return nil
}

func main() {
	var servers serverFlags
	var (
		runs  = flag.Int("n", 11, "runs per server and measure")
		dirs  = flag.Int("dirs", 400, "directories in the generated folder")
		files = flag.Int("files-per-dir", 100, "files per directory")
		delay = flag.Duration("delay", 20*time.Millisecond, "wait after the folder is added before exit or removal (the scan is under way)")
	)
	flag.Var(&servers, "server", "NAME=PATH of a kimi-lsp binary (repeatable; default: build ./cmd/kimi-lsp)")
	flag.Parse()
	log.SetFlags(0)

	tmp, err := os.MkdirTemp("", "readloop-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	if len(servers) == 0 {
		bin := filepath.Join(tmp, "kimi-lsp")
		if out, err := exec.Command("go", "build", "-o", bin, "./cmd/kimi-lsp").CombinedOutput(); err != nil {
			log.Fatalf("building kimi-lsp: %v\n%s", err, out)
		}
		servers = serverFlags{{"kimi-lsp", bin}}
	}
	folder := filepath.Join(tmp, "big")
	start := time.Now()
	if err := generate(folder, *dirs, *files); err != nil {
		log.Fatal(err)
	}
	other := filepath.Join(tmp, "other")
	if err := os.MkdirAll(other, 0o755); err != nil {
		log.Fatal(err)
	}
	log.Printf("folder of %d files made in %v; load average %s", *dirs**files, time.Since(start).Round(time.Millisecond), benchkit.LoadAvg())

	b := &bench{folder: folder, other: other, home: filepath.Join(tmp, "home"), delay: *delay}
	type figures struct{ exit, remove, base []float64 }
	res := map[string]*figures{}
	loads := []string{benchkit.LoadAvg()}
	for i := 0; i < *runs; i++ {
		for _, s := range servers {
			f := res[s.name]
			if f == nil {
				f = &figures{}
				res[s.name] = f
			}
			if d, err := b.exitMidScan(s.path); err != nil {
				log.Printf("%s run %d exit: %v", s.name, i+1, err)
			} else {
				f.exit = append(f.exit, benchkit.Ms(d))
			}
			rm, base, err := b.removeMidScan(s.path)
			if err != nil {
				log.Printf("%s run %d remove: %v", s.name, i+1, err)
			} else {
				f.remove = append(f.remove, benchkit.Ms(rm))
				f.base = append(f.base, benchkit.Ms(base))
			}
			log.Printf("%-10s run %2d: exit → process end %8.2f ms   codeAction after removal %8.2f ms (baseline %.2f ms)",
				s.name, i+1, last(f.exit), last(f.remove), last(f.base))
		}
		loads = append(loads, benchkit.LoadAvg())
	}
	fmt.Printf("Folder of %d files (%d directories); %d runs; load average (1, 5, 15 min) before and after each round: %s\n\n",
		*dirs**files, *dirs, *runs, strings.Join(loads, " | "))
	fmt.Println("| server | exit mid-scan → process end, ms | codeAction right after removing the folder mid-scan, ms | codeAction, no folder change, ms |")
	fmt.Println("|---|---|---|---|")
	for _, s := range servers {
		f := res[s.name]
		fmt.Printf("| %s | %s | %s | %s |\n", s.name, cell(f.exit), cell(f.remove), cell(f.base))
	}
	fmt.Println("\nCells: median (min–max).")
}

func last(xs []float64) float64 {
	if len(xs) == 0 {
		return -1
	}
	return xs[len(xs)-1]
}

func cell(xs []float64) string {
	if len(xs) == 0 {
		return "failed"
	}
	lo, hi := benchkit.MinMax(xs)
	return fmt.Sprintf("**%.2f** (%.2f–%.2f)", benchkit.Median(xs), lo, hi)
}

// generate makes dirs directories of n hard links each to one Go file.
func generate(root string, dirs, n int) error {
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	src := filepath.Join(filepath.Dir(root), "src.go")
	if err := os.WriteFile(src, []byte("package p\n"), 0o644); err != nil {
		return err
	}
	for d := 0; d < dirs; d++ {
		dir := filepath.Join(root, fmt.Sprintf("pkg%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			return err
		}
		for f := 0; f < n; f++ {
			if err := os.Link(src, filepath.Join(dir, fmt.Sprintf("f%03d.go", f))); err != nil {
				return err
			}
		}
	}
	return nil
}

type bench struct {
	folder, other, home string
	delay               time.Duration
}

// session is one kimi-lsp process initialised on the big folder.
type session struct {
	cmd    *exec.Cmd
	ed     *lsptest.Editor
	stdin  io.WriteCloser
	exited chan error
}

func (b *bench) start(path string) (*session, error) {
	cmd := exec.Command(path)
	cmd.Dir = b.other
	cmd.Env = []string{"HOME=" + b.home, "XDG_CONFIG_HOME=" + filepath.Join(b.home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(b.home, ".cache"), "PATH=" + os.Getenv("PATH")}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &session{cmd: cmd, ed: lsptest.New(stdout, stdin), stdin: stdin, exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	params := lsptest.DefaultInitializeParams(string(workspace.FileURI(b.folder)))
	params["processId"] = os.Getpid()
	if _, err := s.ed.Initialize(ctx, params); err != nil {
		s.kill()
		return nil, err
	}
	// A request is answered once what initialize queued (adding the folder,
	// which starts its scan) is done; then the scan is under way.
	uri := string(workspace.FileURI(filepath.Join(b.other, "a.go")))
	if err := s.ed.Notify("textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": "package a\n\nfunc A() {}\n"},
	}); err != nil {
		s.kill()
		return nil, err
	}
	if _, err := s.codeAction(uri); err != nil {
		s.kill()
		return nil, err
	}
	time.Sleep(b.delay)
	return s, nil
}

func (s *session) kill() {
	s.cmd.Process.Kill()
	<-s.exited
}

func (s *session) codeAction(uri string) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	t0 := time.Now()
	var out []any
	err := s.ed.Call(ctx, "textDocument/codeAction", map[string]any{
		"textDocument": map[string]any{"uri": uri},
		"range": map[string]any{"start": map[string]any{"line": 2, "character": 0},
			"end": map[string]any{"line": 2, "character": 5}},
		"context": map[string]any{"diagnostics": []any{}},
	}, &out)
	d := time.Since(t0)
	if err == nil && len(out) == 0 {
		err = errors.New("no code actions")
	}
	return d, err
}

// exitMidScan: shutdown, then exit; the time from writing exit to the
// process's end.
func (b *bench) exitMidScan(path string) (time.Duration, error) {
	s, err := b.start(path)
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.ed.Call(ctx, "shutdown", nil, nil); err != nil {
		s.kill()
		return 0, err
	}
	t0 := time.Now()
	if err := s.ed.Notify("exit", nil); err != nil {
		s.kill()
		return 0, err
	}
	select {
	case err := <-s.exited:
		d := time.Since(t0)
		if err != nil {
			return d, fmt.Errorf("exit status: %w", err)
		}
		return d, nil
	case <-time.After(60 * time.Second):
		s.kill()
		return 0, errors.New("still running 60 s after exit")
	}
}

// removeMidScan: a baseline codeAction, then the folder's removal followed
// at once by a codeAction; both round trips.
func (b *bench) removeMidScan(path string) (removed, baseline time.Duration, err error) {
	s, err := b.start(path)
	if err != nil {
		return 0, 0, err
	}
	defer func() {
		s.stdin.Close()
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			s.kill()
		}
	}()
	uri := string(workspace.FileURI(filepath.Join(b.other, "a.go")))
	if baseline, err = s.codeAction(uri); err != nil {
		return 0, 0, err
	}
	if err := s.ed.Notify("workspace/didChangeWorkspaceFolders", map[string]any{"event": map[string]any{
		"added":   []any{},
		"removed": []any{map[string]any{"uri": string(workspace.FileURI(b.folder)), "name": "big"}},
	}}); err != nil {
		return 0, 0, err
	}
	removed, err = s.codeAction(uri)
	return removed, baseline, err
}
