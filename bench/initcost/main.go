// Command initcost counts the instructions a language server executes from
// exec to its reply to `initialize` (issue 11 item 8), a figure that, unlike
// wall-clock time, repeats on a shared machine.
//
// Each server runs under `valgrind --tool=callgrind` (all threads in one
// profile); the driver writes `initialize` (lsptest.DefaultInitializeParams
// rooted at an empty temporary folder, as bench/startup sends it) to its
// stdin at once, reads the reply, asks `callgrind_control -d` for a dump and
// reads the dump's total instruction count. Valgrind cannot follow Go's
// asynchronous preemption signals, so every server runs with
// GODEBUG=asyncpreemptoff=1 (parsing it adds ~0.45 M instructions to each).
//
//	go run ./bench/initcost -server kimi-lsp=/tmp/kimi-lsp \
//	    -server hexai=/tmp/hexai-lsp -n 5
//
// A -server value is NAME=[VAR=VALUE ...] COMMAND [ARGS...]. The summary
// (median, min and max of -n runs, in millions of instructions) goes to
// stdout as a Markdown table. With -inittrace the servers run without
// valgrind under GODEBUG=inittrace=1, and the table sums the package init
// functions' instructions-free figures instead: clock, bytes, allocations.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

type server struct {
	name string
	env  []string
	argv []string
}

// envWord is a VAR=VALUE word of a -server value.
var envWord = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

type servers []server

func (s *servers) String() string { return fmt.Sprint(*s) }

func (s *servers) Set(v string) error {
	name, cmd, ok := strings.Cut(v, "=")
	argv := strings.Fields(cmd)
	var env []string
	for len(argv) > 0 && envWord.MatchString(argv[0]) {
		env, argv = append(env, argv[0]), argv[1:]
	}
	if !ok || name == "" || len(argv) == 0 {
		return fmt.Errorf("want NAME=[VAR=VALUE ...] COMMAND [ARGS...], got %q", v)
	}
	*s = append(*s, server{name: name, env: env, argv: argv})
	return nil
}

func main() {
	var list servers
	flag.Var(&list, "server", "NAME=[VAR=VALUE ...] COMMAND [ARGS...] (repeatable)")
	n := flag.Int("n", 5, "runs per server")
	inittrace := flag.Bool("inittrace", false, "sum GODEBUG=inittrace=1 lines instead of counting instructions")
	timeout := flag.Duration("timeout", 60*time.Second, "bound on one run")
	flag.StringVar(&valgrindArgs, "valgrind", "", "extra valgrind arguments, space-separated (e.g. --toggle-collect=runtime.doInit1)")
	flag.StringVar(&keepDir, "keep", "", "keep each run's dump in this directory (for callgrind_annotate)")
	flag.Parse()
	log.SetFlags(0)
	if len(list) == 0 {
		log.Fatal("initcost: no -server given")
	}
	tmp, err := os.MkdirTemp("", "initcost-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)

	results := make([][]sample, len(list))
	for i := 0; i < *n; i++ {
		for j, s := range list {
			r, err := runOnce(s, tmp, *inittrace, *timeout)
			// Valgrind 3.19 does not know RDTSCP, which the Go runtime's
			// cputicks executes when a lock is contended (sysmon): the
			// server dies with SIGILL. Such a run says nothing about the
			// server; it is run again.
			for retry := 0; errors.Is(err, errSIGILL) && retry < 10; retry++ {
				log.Printf("%s run %d: SIGILL under valgrind (RDTSCP), again", s.name, i+1)
				r, err = runOnce(s, tmp, *inittrace, *timeout)
			}
			if err != nil {
				log.Fatalf("initcost: %s run %d: %v", s.name, i+1, err)
			}
			log.Printf("%s run %d: %s", s.name, i+1, r)
			results[j] = append(results[j], r)
		}
	}
	if *inittrace {
		fmt.Println("| server | init clock, ms | init allocations | init bytes, KB |")
		fmt.Println("|---|---|---|---|")
		for j, s := range list {
			fmt.Printf("| %s | %s | %s | %s |\n", s.name,
				stat(results[j], func(r sample) float64 { return r.initMs }, "%.2f"),
				stat(results[j], func(r sample) float64 { return float64(r.allocs) }, "%.0f"),
				stat(results[j], func(r sample) float64 { return float64(r.bytes) / 1000 }, "%.0f"))
		}
		return
	}
	fmt.Println("| server | instructions to the initialize reply, M |")
	fmt.Println("|---|---|")
	for j, s := range list {
		fmt.Printf("| %s | %s |\n", s.name,
			stat(results[j], func(r sample) float64 { return float64(r.instr) / 1e6 }, "%.2f"))
	}
}

// valgrindArgs is -valgrind.
var valgrindArgs string

// keepDir is -keep: where dumps are kept ("": removed).
var keepDir string

var errSIGILL = errors.New("SIGILL under valgrind")

type sample struct {
	instr  int64
	initMs float64
	allocs int64
	bytes  int64
}

func (r sample) String() string {
	if r.instr > 0 {
		return fmt.Sprintf("%.3f M instructions", float64(r.instr)/1e6)
	}
	return fmt.Sprintf("init %.2f ms, %d allocs, %d B", r.initMs, r.allocs, r.bytes)
}

// stat formats "median (min–max)".
func stat(rs []sample, f func(sample) float64, format string) string {
	v := make([]float64, len(rs))
	for i, r := range rs {
		v[i] = f(r)
	}
	sort.Float64s(v)
	return fmt.Sprintf("**"+format+"** ("+format+"–"+format+")", v[len(v)/2], v[0], v[len(v)-1])
}

func runOnce(s server, tmp string, inittrace bool, timeout time.Duration) (sample, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	ws, err := os.MkdirTemp(tmp, "ws-")
	if err != nil {
		return sample{}, err
	}
	home := filepath.Join(tmp, "home-"+s.name)
	if err := os.MkdirAll(home, 0o755); err != nil {
		return sample{}, err
	}
	out := filepath.Join(tmp, "callgrind.out")
	var argv []string
	godebug := "asyncpreemptoff=1"
	if inittrace {
		argv = s.argv
		godebug = "inittrace=1"
	} else {
		argv = append([]string{"valgrind", "--tool=callgrind", "--callgrind-out-file=" + out + ".%p"}, strings.Fields(valgrindArgs)...)
		argv = append(argv, s.argv...)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local/share"), "GODEBUG=" + godebug}, s.env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return sample{}, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return sample{}, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second // a helper holding the pipes open cannot hang the run
	if err := cmd.Start(); err != nil {
		return sample{}, err
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
	}()
	ed := lsptest.New(stdout, stdin)
	ch, err := ed.Send(ed.NextID(), "initialize", lsptest.DefaultInitializeParams(string(workspace.FileURI(ws))))
	if err != nil {
		return sample{}, err
	}
	m, err := lsptest.Await(ctx, ch)
	if err != nil && strings.Contains(stderr.String(), "SIGILL") {
		return sample{}, errSIGILL
	}
	if err != nil {
		return sample{}, fmt.Errorf("initialize: %w; stderr: %s", err, tail(stderr.String()))
	}
	if m.Error != nil {
		return sample{}, fmt.Errorf("initialize: %v", m.Error)
	}
	if inittrace {
		cmd.Process.Kill()
		cmd.Wait()
		return parseInittrace(stderr.String())
	}
	pid := cmd.Process.Pid
	if b, err := exec.CommandContext(ctx, "callgrind_control", "-d", strconv.Itoa(pid)).CombinedOutput(); err != nil {
		return sample{}, fmt.Errorf("callgrind_control: %v: %s", err, b)
	}
	// The dump is written as "callgrind.out.PID.1"; the process's own end
	// (killed) would write another, which is not read.
	dump := fmt.Sprintf("%s.%d.1", out, pid)
	defer os.Remove(dump)
	defer os.Remove(fmt.Sprintf("%s.%d", out, pid))
	for {
		if n, err := totals(dump); err == nil {
			if keepDir != "" {
				b, _ := os.ReadFile(dump)
				os.WriteFile(filepath.Join(keepDir, fmt.Sprintf("callgrind.%s.%d", s.name, pid)), b, 0o644)
			}
			return sample{instr: n}, nil
		}
		select {
		case <-ctx.Done():
			return sample{}, fmt.Errorf("no dump at %s: %s", dump, tail(stderr.String()))
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// totals reads the "totals:" (or "summary:") line of a complete dump.
func totals(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if v, ok := strings.CutPrefix(line, "totals:"); ok {
			return strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
		if v, ok := strings.CutPrefix(line, "summary:"); ok {
			return strconv.ParseInt(strings.Fields(v)[0], 10, 64)
		}
	}
	return 0, errors.New("dump incomplete")
}

var initLine = regexp.MustCompile(`^init \S+ @\S+ ms, ([0-9.]+) ms clock, ([0-9]+) bytes, ([0-9]+) allocs`)

func parseInittrace(stderr string) (sample, error) {
	var r sample
	found := false
	for _, line := range strings.Split(stderr, "\n") {
		m := initLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		found = true
		ms, _ := strconv.ParseFloat(m[1], 64)
		b, _ := strconv.ParseInt(m[2], 10, 64)
		a, _ := strconv.ParseInt(m[3], 10, 64)
		r.initMs += ms
		r.bytes += b
		r.allocs += a
	}
	if !found {
		return r, fmt.Errorf("no inittrace lines: %s", tail(stderr))
	}
	return r, nil
}

// tail shortens a server's stderr for an error message: its start (where
// a Go crash names its cause) and its end.
func tail(s string) string {
	if len(s) > 1200 {
		return s[:600] + " … " + s[len(s)-600:]
	}
	return s
}
