// Command startup measures language servers as whole processes over stdio,
// the same script for each (issue 2, benchmark b):
//
//   - init: time from starting the process (just before fork/exec) to
//     reading the reply to `initialize`, which is written to the server's
//     stdin at once;
//   - open: time from the first of N `didOpen`s to the reply to a request
//     sent after the last one (an unknown method, so every server answers at
//     once and in order);
//   - memory: VmRSS and VmHWM from /proc/PID/status right after the
//     initialize reply, and after the N buffers are open and a settle time
//     has passed; also the sum over the process and its descendants, for
//     servers that start helpers; and, at the end, how much of each loaded
//     section of the server's executable is resident (benchkit.ExeResidency:
//     the binary's part of RssFile).
//
// The buffers are real Go source cut from GOROOT (see benchkit.Buffers),
// written as files into a temporary workspace folder that is the session's
// root. Each server gets its own HOME (and XDG directories) in a temporary
// directory, kept across its runs as a user's would be: the unrecorded
// warm-up run is the first start in an empty HOME (its figures are printed
// on stderr), the recorded runs are later starts; -fresh-home gives every
// run an empty HOME instead. Servers are run in turn, alternating which goes
// first.
//
//	go run ./bench/startup -server kimi-lsp=/tmp/kimi-lsp \
//	    -server 'copilot=/path/to/copilot-language-server --stdio' -n 7
//
// With -edits N, N didChange notifications follow the opens (typing: bursts
// of 20 characters typed at the start of a line, then 20 backspaces, the
// bursts going round the buffers); edit is the time from the first to the
// reply of a request sent after the last, and the memory is read after
// them. A server that asks for full-text sync (textDocumentSync 1) is sent
// the whole text with every change, as an editor would. Issue 11's
// scenario is -buffers 8 -edits 2000 (bench/startup/peers.sh).
//
// A -server value is NAME=[VAR=VALUE ...] COMMAND [ARGS...], split on
// spaces; the VAR=VALUE words are added to the server's environment. The
// summary is a Markdown table on stdout; per-run lines go to stderr.
// bench/startup/run.sh builds kimi-lsp and installs
// @github/copilot-language-server into a temporary directory first.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/bench/internal/benchkit"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

type serverSpec struct {
	name string
	env  []string // VAR=VALUE added to the clean environment
	argv []string
}

type serverFlags []serverSpec

func (s *serverFlags) String() string { return fmt.Sprint(*s) }

func (s *serverFlags) Set(v string) error {
	name, cmd, ok := strings.Cut(v, "=")
	argv := strings.Fields(cmd)
	var env []string
	for len(argv) > 0 && strings.Contains(argv[0], "=") && !strings.ContainsRune(argv[0], '/') {
		env, argv = append(env, argv[0]), argv[1:]
	}
	if !ok || name == "" || len(argv) == 0 {
		return fmt.Errorf("want NAME=[VAR=VALUE ...] COMMAND [ARGS...], got %q", v)
	}
	*s = append(*s, serverSpec{name: name, env: env, argv: argv})
	return nil
}

// result is one run of one server.
type result struct {
	init, open, edit time.Duration
	memInit, memOpen benchkit.Mem
	treeOpen         benchkit.Mem
	faultsInit       int64 // minor page faults by the initialize reply
	// exe is the executable's resident part at the end, per loaded section
	// (nil when /proc/PID/pagemap could not be read).
	exe   []benchkit.SectionResidency
	procs int
	exit  string
	notes []string
}

func main() {
	var (
		servers serverFlags
		runs    = flag.Int("n", 7, "recorded runs per server")
		warmup  = flag.Int("warmup", 1, "unrecorded runs per server before the recorded ones")
		nbuf    = flag.Int("buffers", 100, "buffers to open")
		nedit   = flag.Int("edits", 0, "didChange notifications after the opens (typing bursts)")
		syncM   = flag.String("sync", "unknown", "the request that follows the opens and the edits: `unknown` (a method no server has; some servers never answer it) or codeAction (on the first buffer)")
		size    = flag.Int("size", 50*1024, "bytes per buffer (at most; cut at line ends)")
		settle  = flag.Duration("settle", 2*time.Second, "wait after the opens before reading memory")
		timeout = flag.Duration("timeout", 60*time.Second, "limit for each step of a run")
		corpus  = flag.String("corpus", "", "directory of Go source to cut buffers from (default $(go env GOROOT)/src)")
		verbose = flag.Bool("v", false, "print the servers' stderr and notifications of each run")
		fresh   = flag.Bool("fresh-home", false, "give every run an empty HOME (default: one HOME per server, kept across its runs)")
	)
	flag.Var(&servers, "server", "NAME=COMMAND [ARGS...] of a server to measure (repeatable)")
	flag.Parse()
	log.SetFlags(0)
	if len(servers) == 0 {
		log.Fatal("startup: give at least one -server NAME=COMMAND")
	}
	if *corpus == "" {
		dir, err := benchkit.GoSourceDir()
		if err != nil {
			log.Fatal(err)
		}
		*corpus = dir
	}
	texts, err := benchkit.Buffers(*corpus, *nbuf, *size)
	if err != nil {
		log.Fatal(err)
	}
	total := 0
	for _, t := range texts {
		total += len(t)
	}
	ws, err := os.MkdirTemp("", "startup-ws-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)
	ws, _ = filepath.EvalSymlinks(ws)
	uris := make([]string, len(texts))
	for i, t := range texts {
		p := filepath.Join(ws, fmt.Sprintf("buf%03d.go", i))
		if err := os.WriteFile(p, []byte(t), 0o644); err != nil {
			log.Fatal(err)
		}
		uris[i] = string(workspace.FileURI(p))
	}
	log.Printf("corpus %s: %d buffers, %d bytes (%.1f KB mean); load average %s", *corpus, len(texts), total, float64(total)/float64(len(texts))/1024, benchkit.LoadAvg())

	if *syncM != "unknown" && *syncM != "codeAction" {
		log.Fatalf("startup: -sync %q: want unknown or codeAction", *syncM)
	}
	b := &bench{ws: ws, uris: uris, texts: texts, edits: *nedit, sync: *syncM, settle: *settle, timeout: *timeout, verbose: *verbose, homes: map[string]string{}}
	if !*fresh {
		for _, s := range servers {
			h, err := os.MkdirTemp("", "startup-home-")
			if err != nil {
				log.Fatal(err)
			}
			defer os.RemoveAll(h)
			b.homes[s.name] = h
		}
	}
	results := make(map[string][]result)
	first := make(map[string]result) // the first warm-up run of each server
	loads := []string{benchkit.LoadAvg()}
	for i := -*warmup; i < *runs; i++ {
		order := servers
		if i%2 != 0 && len(servers) > 1 { // alternate who goes first
			order = append(serverFlags{}, servers[1:]...)
			order = append(order, servers[0])
		}
		for _, s := range order {
			r, err := b.run(s)
			tag := fmt.Sprintf("run %d", i+1)
			if i < 0 {
				tag = "warm-up"
			}
			if err != nil {
				log.Printf("%-10s %s: %v", s.name, tag, err)
				for _, n := range r.notes {
					log.Printf("    note: %s", n)
				}
				continue
			}
			log.Printf("%-10s %s: init %7.1f ms  open %7.1f ms  edit %7.1f ms  RSS init %6.1f MB  RSS end %6.1f MB (anon %.1f, file %.1f)  HWM %6.1f MB  tree RSS %6.1f MB (%d procs, %d threads)  exit %s",
				s.name, tag, benchkit.Ms(r.init), benchkit.Ms(r.open), benchkit.Ms(r.edit), mb(r.memInit.RSS), mb(r.memOpen.RSS), mb(r.memOpen.Anon), mb(r.memOpen.File), mb(r.memOpen.HWM), mb(r.treeOpen.RSS), r.procs, r.treeOpen.Threads, r.exit)
			for _, n := range r.notes {
				log.Printf("    note: %s", n)
			}
			if i >= 0 {
				results[s.name] = append(results[s.name], r)
			} else if i == -*warmup {
				first[s.name] = r
			}
		}
		loads = append(loads, benchkit.LoadAvg())
	}
	report(os.Stdout, servers, results, len(texts), total, *nedit, loads)
	if len(first) > 0 {
		what := "an empty HOME"
		if *fresh {
			what = "an empty HOME, like every run"
		}
		fmt.Printf("\nFirst start (the first warm-up run, %s):", what)
		for _, s := range servers {
			if r, ok := first[s.name]; ok {
				fmt.Printf(" %s: initialize %.1f ms, VmRSS with buffers open %.1f MB;", s.name, benchkit.Ms(r.init), mb(r.memOpen.RSS))
			}
		}
		fmt.Println()
	}
}

// mb converts KiB to MiB (the tables say MB for MiB).
func mb(kib int64) float64 { return float64(kib) / 1024 }

// bench is the fixed part of every run.
type bench struct {
	ws      string
	uris    []string
	texts   []string
	edits   int
	sync    string // the -sync request
	settle  time.Duration
	timeout time.Duration
	verbose bool
	homes   map[string]string // server name → its HOME; none: a fresh one per run
}

// run starts the server once and measures it.
func (b *bench) run(s serverSpec) (result, error) {
	var r result
	home := b.homes[s.name]
	if home == "" {
		h, err := os.MkdirTemp("", "startup-home-")
		if err != nil {
			return r, err
		}
		defer os.RemoveAll(h)
		home = h
	}
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Dir = b.ws
	cmd.Env = []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local/share"),
		"PATH=" + os.Getenv("PATH"),
		"LANG=C.UTF-8",
	}
	cmd.Env = append(cmd.Env, s.env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return r, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	stderr := &limitedBuffer{max: 64 << 10}
	cmd.Stderr = stderr

	params := lsptest.DefaultInitializeParams(string(workspace.FileURI(b.ws)))
	params["processId"] = os.Getpid()
	// What Copilot's server wants to know; other servers ignore it.
	params["initializationOptions"] = map[string]any{
		"editorInfo":       map[string]any{"name": "kimi-lsp-bench", "version": "1.0.0"},
		"editorPluginInfo": map[string]any{"name": "kimi-lsp-bench", "version": "1.0.0"},
	}

	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return r, fmt.Errorf("starting %s: %w", s.argv[0], err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		select {
		case <-exited:
		default:
			cmd.Process.Kill()
			<-exited
		}
	}()
	ed := lsptest.New(stdout, stdin)
	// An editor with no settings, except VS Code's standard telemetry switch
	// turned off (Copilot's server asks for the "telemetry" section and
	// would otherwise try to reach its telemetry host, which fails here).
	ed.Handle("workspace/configuration", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		var cp struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		json.Unmarshal(p, &cp)
		out := make([]any, len(cp.Items))
		for i, it := range cp.Items {
			if it.Section == "telemetry" {
				out[i] = map[string]any{"telemetryLevel": "off"}
			}
		}
		return out, nil
	})
	pid := cmd.Process.Pid

	ctx, cancel := context.WithTimeout(context.Background(), b.timeout)
	defer cancel()
	initCh, err := ed.Send(ed.NextID(), "initialize", params)
	if err != nil {
		return r, fmt.Errorf("writing initialize: %w", err)
	}
	m, err := lsptest.Await(ctx, initCh)
	if err != nil {
		r.notes = append(r.notes, "stderr: "+stderr.tail(600))
		return r, fmt.Errorf("initialize: %w", err)
	}
	if m.Error != nil {
		return r, fmt.Errorf("initialize: %v", m.Error)
	}
	r.init = m.At.Sub(t0)
	fullSync := syncKind(m.Result) == 1
	if r.memInit, err = benchkit.ReadMem(pid); err != nil {
		return r, fmt.Errorf("reading memory: %w", err)
	}
	if r.faultsInit, err = benchkit.MinorFaults(pid); err != nil {
		return r, fmt.Errorf("reading page faults: %w", err)
	}
	if err := ed.Notify("initialized", map[string]any{}); err != nil {
		return r, err
	}

	openStart := time.Now()
	for i, u := range b.uris {
		if err := ed.Notify("textDocument/didOpen", map[string]any{
			"textDocument": map[string]any{"uri": u, "languageId": "go", "version": 1, "text": b.texts[i]},
		}); err != nil {
			return r, fmt.Errorf("didOpen %d: %w", i, err)
		}
	}
	// Any request after the opens is read after them.
	sm, err := b.syncRequest(ctx, ed)
	if err != nil {
		return r, fmt.Errorf("request after the opens: %w", err)
	}
	r.open = sm.At.Sub(openStart)
	if b.edits > 0 {
		editStart := time.Now()
		ty := newTypist(b.uris, b.texts, fullSync)
		for i := 0; i < b.edits; i++ {
			if err := ed.Notify("textDocument/didChange", ty.next()); err != nil {
				return r, fmt.Errorf("didChange %d: %w", i, err)
			}
		}
		sm, err := b.syncRequest(ctx, ed)
		if err != nil {
			return r, fmt.Errorf("request after the edits: %w", err)
		}
		r.edit = sm.At.Sub(editStart)
	}
	time.Sleep(b.settle)
	if r.memOpen, err = benchkit.ReadMem(pid); err != nil {
		return r, fmt.Errorf("reading memory: %w", err)
	}
	r.treeOpen, r.procs, _ = benchkit.TreeMem(pid)
	r.exe, _ = benchkit.ExeResidency(pid)

	// Notes: what the server said that a reader of the figures should know.
	for _, msg := range ed.Messages() {
		switch msg.Method {
		case "window/showMessage", "window/logMessage", "window/showMessageRequest":
			var p struct {
				Type    int    `json:"type"`
				Message string `json:"message"`
			}
			json.Unmarshal(msg.Params, &p)
			if p.Type <= 2 || b.verbose { // errors and warnings
				r.notes = append(r.notes, fmt.Sprintf("%s (type %d): %s", msg.Method, p.Type, clip(p.Message, 300)))
			}
		default:
			if b.verbose && msg.Method != "" {
				r.notes = append(r.notes, fmt.Sprintf("%s %s", msg.Method, clip(string(msg.Params), 300)))
			}
		}
	}

	// shutdown, exit; then the exit status.
	sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer scancel()
	if err := ed.Call(sctx, "shutdown", nil, nil); err != nil {
		r.notes = append(r.notes, "shutdown: "+err.Error())
	}
	ed.Notify("exit", nil)
	stdin.Close()
	select {
	case err := <-exited:
		exited <- err // for the deferred check
		r.exit = "0"
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			r.exit = ee.ProcessState.String()
		} else if err != nil {
			r.exit = err.Error()
		}
	case <-time.After(10 * time.Second):
		r.exit = "killed after 10 s"
	}
	if b.verbose {
		r.notes = append(r.notes, "stderr: "+stderr.tail(2000))
	}
	return r, nil
}

// syncRequest sends the -sync request and waits for its reply: an unknown
// method, which most servers answer at once with an error, or a codeAction
// on the first buffer's first line, for servers that leave unknown methods
// unanswered.
func (b *bench) syncRequest(ctx context.Context, ed *lsptest.Editor) (*lsptest.Message, error) {
	method, params := "kimiBench/sync", any(map[string]any{})
	if b.sync == "codeAction" {
		method = "textDocument/codeAction"
		params = map[string]any{
			"textDocument": map[string]any{"uri": b.uris[0]},
			"range":        lspRange(0, 0, 0, 0),
			"context":      map[string]any{"diagnostics": []any{}},
		}
	}
	ch, err := ed.Send(ed.NextID(), method, params)
	if err != nil {
		return nil, err
	}
	return lsptest.Await(ctx, ch)
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// limitedBuffer keeps the last max bytes written.
type limitedBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if len(l.b) > l.max {
		l.b = append(l.b[:0], l.b[len(l.b)-l.max:]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) tail(n int) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := string(l.b)
	if len(s) > n {
		s = s[len(s)-n:]
	}
	return strings.TrimSpace(s)
}

// syncKind returns the textDocumentSync change kind of an initialize
// result (a number, or an object with "change"); 2 (incremental) if absent.
func syncKind(result json.RawMessage) int {
	var r struct {
		Capabilities struct {
			TextDocumentSync json.RawMessage `json:"textDocumentSync"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(result, &r) != nil {
		return 2
	}
	var n int
	if json.Unmarshal(r.Capabilities.TextDocumentSync, &n) == nil {
		return n
	}
	var o struct {
		Change *int `json:"change"`
	}
	if json.Unmarshal(r.Capabilities.TextDocumentSync, &o) == nil && o.Change != nil {
		return *o.Change
	}
	return 2
}

// burst is the number of characters typed, then deleted, at one place.
const burst = 20

// typist makes the didChange params of a typing session: bursts of burst
// characters typed at the start of a line, then as many backspaces, the
// bursts going round the buffers. Lines and texts are deterministic. The
// typed characters are ASCII at the start of a line, so positions are the
// same in UTF-8, UTF-16 and UTF-32.
type typist struct {
	uris     []string
	texts    []string
	versions []int
	lines    []int // line count of each buffer
	full     bool  // send the whole text (full sync)
	step     int
}

func newTypist(uris, texts []string, full bool) *typist {
	t := &typist{uris: uris, texts: append([]string(nil), texts...), versions: make([]int, len(texts)), full: full}
	for i, s := range texts {
		t.versions[i] = 1
		t.lines = append(t.lines, max(1, strings.Count(s, "\n")))
	}
	return t
}

// next returns the params of the next change.
func (t *typist) next() map[string]any {
	n := t.step
	t.step++
	b := (n / (2 * burst)) % len(t.uris)
	round := n / (2 * burst * len(t.uris))
	line := (round*7919 + b*104729) % t.lines[b] // fixed, spread-out lines
	k := n % (2 * burst)                         // 0..burst-1 typing, then deleting
	t.versions[b]++
	var change map[string]any
	start := lineStart(t.texts[b], line)
	if k < burst {
		c := string(rune('a' + k%26))
		t.texts[b] = t.texts[b][:start+k] + c + t.texts[b][start+k:]
		change = map[string]any{"range": lspRange(line, k, line, k), "text": c}
	} else {
		col := 2*burst - k - 1 // the character before the cursor
		t.texts[b] = t.texts[b][:start+col] + t.texts[b][start+col+1:]
		change = map[string]any{"range": lspRange(line, col, line, col+1), "text": ""}
	}
	if t.full {
		change = map[string]any{"text": t.texts[b]}
	}
	return map[string]any{
		"textDocument":   map[string]any{"uri": t.uris[b], "version": t.versions[b]},
		"contentChanges": []any{change},
	}
}

func lineStart(s string, line int) int {
	off := 0
	for ; line > 0; line-- {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return len(s)
		}
		off += i + 1
	}
	return off
}

func lspRange(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{
		"start": map[string]any{"line": l1, "character": c1},
		"end":   map[string]any{"line": l2, "character": c2},
	}
}

// report prints the Markdown summary.
func report(w io.Writer, servers serverFlags, results map[string][]result, nbuf, total, nedit int, loads []string) {
	fmt.Fprintf(w, "%d buffers, %d bytes in all, %d edits; load average (1, 5, 15 min) before the runs and after each round: %s\n\n", nbuf, total, nedit, strings.Join(loads, " | "))
	fmt.Fprintln(w, "| server | runs | start → initialize reply, ms | open all buffers → reply, ms | edits → reply, ms | VmRSS after initialize, MB | VmRSS at the end, MB | VmHWM (peak), MB | tree VmRSS, MB (procs) |")
	fmt.Fprintln(w, "|---|---:|---|---|---|---|---|---|---|")
	for _, s := range servers {
		rs := results[s.name]
		if len(rs) == 0 {
			fmt.Fprintf(w, "| %s | 0 | failed | | | | | | |\n", s.name)
			continue
		}
		col := func(f func(result) float64) string {
			xs := make([]float64, len(rs))
			for i, r := range rs {
				xs[i] = f(r)
			}
			lo, hi := benchkit.MinMax(xs)
			return fmt.Sprintf("**%.1f** (%.1f–%.1f)", benchkit.Median(xs), lo, hi)
		}
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %s | %s | %s (%d) |\n", s.name, len(rs),
			col(func(r result) float64 { return benchkit.Ms(r.init) }),
			col(func(r result) float64 { return benchkit.Ms(r.open) }),
			col(func(r result) float64 { return benchkit.Ms(r.edit) }),
			col(func(r result) float64 { return mb(r.memInit.RSS) }),
			col(func(r result) float64 { return mb(r.memOpen.RSS) }),
			col(func(r result) float64 { return mb(r.memOpen.HWM) }),
			col(func(r result) float64 { return mb(r.treeOpen.RSS) }),
			rs[len(rs)-1].procs)
	}
	fmt.Fprintln(w, "\nAt the initialize reply (read right after it, as VmRSS after initialize):")
	fmt.Fprintln(w, "\n| server | threads | minor page faults | RssAnon, MB | RssFile, MB |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	for _, s := range servers {
		rs := results[s.name]
		if len(rs) == 0 {
			continue
		}
		col := func(f func(result) float64, format string) string {
			xs := make([]float64, len(rs))
			for i, r := range rs {
				xs[i] = f(r)
			}
			lo, hi := benchkit.MinMax(xs)
			return fmt.Sprintf("**"+format+"** ("+format+"–"+format+")", benchkit.Median(xs), lo, hi)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s |\n", s.name,
			col(func(r result) float64 { return float64(r.memInit.Threads) }, "%.0f"),
			col(func(r result) float64 { return float64(r.faultsInit) }, "%.0f"),
			col(func(r result) float64 { return mb(r.memInit.Anon) }, "%.1f"),
			col(func(r result) float64 { return mb(r.memInit.File) }, "%.1f"))
	}
	reportResidency(w, servers, results)
	fmt.Fprintln(w, "\nCells: median (min–max) over the runs.")
}

// reportResidency prints, per server, how much of each loaded section of
// its executable was resident at the end (the binary's part of RssFile):
// the sections over 64 KiB, median over the runs.
func reportResidency(w io.Writer, servers serverFlags, results map[string][]result) {
	header := false
	for _, s := range servers {
		rs := results[s.name]
		if len(rs) == 0 || rs[0].exe == nil {
			continue
		}
		if !header {
			fmt.Fprintln(w, "\nThe executable's sections at the end (resident of size, MiB; /proc/PID/pagemap):")
			fmt.Fprintln(w, "\n| server | sections |")
			fmt.Fprintln(w, "|---|---|")
			header = true
		}
		var cells []string
		for i, sec := range rs[0].exe {
			if sec.Size < 64 {
				continue
			}
			xs := make([]float64, 0, len(rs))
			for _, r := range rs {
				if i < len(r.exe) {
					xs = append(xs, mb(r.exe[i].Resident))
				}
			}
			cells = append(cells, fmt.Sprintf("%s **%.2f** of %.2f", sec.Name, benchkit.Median(xs), mb(sec.Size)))
		}
		fmt.Fprintf(w, "| %s | %s |\n", s.name, strings.Join(cells, "; "))
	}
}
