// Command latency measures, on the real kimi-lsp binary, how long the text
// of a streamed model reply takes from arriving at the server's HTTP client
// to leaving the server as a `$/progress` report (issue 5, benchmark b).
//
// The pieces, all real: the stand-in provider (assist/model/modeltest, HTTP
// on loopback) streams an explanation in N content chunks paced by
// interval_ms; a loopback TCP relay between kimi-lsp and the stand-in notes
// the moment it hands each chunk to the socket kimi-lsp reads ("arrival");
// the fake editor (lsp/lsptest) reads kimi-lsp's stdout pipe and notes the
// moment each `$/progress` frame is read ("leave"; the pipe adds
// microseconds). Content chunk i carries the word c<i> (reasoning chunk i
// carries r<i>), so the newest word in a report says which chunks it shows.
//
// Per scenario it runs several explain jobs on one kimi-lsp process and
// prints:
//
//   - per-chunk latency: for every content chunk, the time from its arrival
//     to the first report that shows it (p50, p90, p99, max);
//   - staleness: for every report, the time since its newest chunk arrived;
//   - first token: the first content chunk's arrival to the first report
//     with answer text;
//   - reports per second while content streams.
//
// The throttle (progress.maxReportsPerSecond, default 10) decides most of
// what these show; see bench/README.md for how to read them.
//
//	go run ./bench/latency [-runs 5] [-binary /tmp/kimi-lsp] [-only pipeline,fast]
//
// Without -binary, kimi-lsp is built from ./cmd/kimi-lsp into a temporary
// directory (run from the repository root).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/bench/internal/benchkit"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// scenario is one provider pacing and one throttle setting.
type scenario struct {
	name      string
	rate      int  // progress.maxReportsPerSecond
	reasoning bool // stream n reasoning chunks before the content
	chunks    int  // content chunks (and reasoning chunks, if any)
	interval  time.Duration
	about     string
}

var scenarios = []scenario{
	{"pipeline", 100, false, 100, 30 * time.Millisecond, "33 chunks/s under a 100/s throttle: every chunk is reported at once, so the latency is the server's own cost"},
	{"fast", 10, false, 200, 10 * time.Millisecond, "100 chunks/s (a fast model) under the default 10/s throttle"},
	{"thinking", 10, true, 100, 10 * time.Millisecond, "100 reasoning chunks, then 100 content chunks, 100 chunks/s, default throttle, thinking shown"},
	{"burst", 10, false, 1000, 0, "1 000 chunks with no pause (a reply replayed from a buffer), default throttle"},
}

func main() {
	var (
		binary  = flag.String("binary", "", "kimi-lsp binary (default: build ./cmd/kimi-lsp)")
		runs    = flag.Int("runs", 5, "explain jobs per scenario")
		only    = flag.String("only", "", "comma-separated scenario names (default all)")
		verbose = flag.Bool("v", false, "print every job's figures")
	)
	flag.Parse()
	log.SetFlags(0)
	if *binary == "" {
		dir, err := os.MkdirTemp("", "latency-bin-")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(dir)
		*binary = filepath.Join(dir, "kimi-lsp")
		if out, err := exec.Command("go", "build", "-o", *binary, "./cmd/kimi-lsp").CombinedOutput(); err != nil {
			log.Fatalf("building kimi-lsp (run from the repository root): %v\n%s", err, out)
		}
	}
	src, err := benchkit.GoSourceDir()
	if err != nil {
		log.Fatal(err)
	}
	bufs, err := benchkit.Buffers(src, 1, 20*1024)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("load average before: %s\n\n", benchkit.LoadAvg())
	fmt.Println("| scenario | reports/job | per-chunk latency p50 / p90 / p99 / max, ms | staleness p50 / p99, ms | first token p50 (min–max), ms | reports/s | load |")
	fmt.Println("|---|---:|---|---|---|---:|---|")
	var abouts []string
	for _, sc := range scenarios {
		if *only != "" && !contains(strings.Split(*only, ","), sc.name) {
			continue
		}
		res, err := runScenario(*binary, bufs[0], sc, *runs, *verbose)
		if err != nil {
			log.Fatalf("%s: %v", sc.name, err)
		}
		fmt.Println(res.row())
		abouts = append(abouts, fmt.Sprintf("- %s: %s; %d jobs", sc.name, sc.about, *runs))
	}
	fmt.Println()
	fmt.Println(strings.Join(abouts, "\n"))
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if strings.TrimSpace(x) == s {
			return true
		}
	}
	return false
}

// words returns n words w<i> (i from 1), each six runes with its space, so
// the stand-in's even split puts exactly one in each of n chunks.
func words(prefix string, n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s%04d ", prefix, i)
	}
	return b.String()
}

// result gathers a scenario's jobs.
type result struct {
	sc        scenario
	reports   []int
	perChunk  []float64 // ms
	stale     []float64 // ms
	first     []float64 // ms
	perSecond []float64
	missing   int // content chunks no report showed
	load      string
}

func (r *result) row() string {
	pc := func(xs []float64, p float64) string { return fmt.Sprintf("%.2f", benchkit.Percentile(xs, p)) }
	lo, hi := benchkit.MinMax(r.first)
	rep := make([]float64, len(r.reports))
	for i, n := range r.reports {
		rep[i] = float64(n)
	}
	miss := ""
	if r.missing > 0 {
		miss = fmt.Sprintf(" (%d chunks never shown)", r.missing)
	}
	rate := "—"
	if len(r.perSecond) > 0 {
		rate = fmt.Sprintf("%.1f", benchkit.Median(r.perSecond))
	}
	return fmt.Sprintf("| %s | %.0f | %s / %s / %s / %s%s | %s / %s | %.2f (%.2f–%.2f) | %s | %s |",
		r.sc.name, benchkit.Median(rep),
		pc(r.perChunk, 50), pc(r.perChunk, 90), pc(r.perChunk, 99), pc(r.perChunk, 100), miss,
		pc(r.stale, 50), pc(r.stale, 99),
		benchkit.Median(r.first), lo, hi, rate, r.load)
}

// runScenario starts a stand-in, a relay and one kimi-lsp process, and runs
// the jobs one after the other.
func runScenario(binary, text string, sc scenario, runs int, verbose bool) (*result, error) {
	rule := modeltest.Rule{Content: words("c", sc.chunks), Chunks: sc.chunks, IntervalMS: int(sc.interval / time.Millisecond)}
	if sc.reasoning {
		rule.Reasoning = words("r", sc.chunks)
	}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{rule}}})
	defer srv.Close()
	up, err := url.Parse(srv.URL)
	if err != nil {
		return nil, err
	}
	rl, err := newRelay(up.Host)
	if err != nil {
		return nil, err
	}
	defer rl.Close()

	home, err := os.MkdirTemp("", "latency-home-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	ws := filepath.Join(home, "ws")
	os.MkdirAll(ws, 0o755)
	file := filepath.Join(ws, "main.go")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(binary)
	cmd.Env = []string{
		"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"PATH=" + os.Getenv("PATH"), "KIMI_API_KEY=" + srv.Key, "KIMI_BASE_URL=http://" + rl.Addr(),
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}()
	kimi := map[string]any{"progress": map[string]any{"maxReportsPerSecond": sc.rate, "showThinking": true}}
	ed := lsptest.New(stdout, stdin)
	ed.Handle("workspace/configuration", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		var cp struct {
			Items []json.RawMessage `json:"items"`
		}
		json.Unmarshal(p, &cp)
		out := make([]any, len(cp.Items))
		for i := range out {
			out[i] = kimi
		}
		return out, nil
	})
	ed.Handle("window/showDocument", func(json.RawMessage) (any, *lsptest.ResponseError) {
		return map[string]any{"success": true}, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	params := lsptest.DefaultInitializeParams(string(workspace.FileURI(ws)))
	params["initializationOptions"] = map[string]any{"kimi": kimi}
	if _, err := ed.Initialize(ctx, params); err != nil {
		return nil, fmt.Errorf("initialize: %w\n%s", err, stderr.String())
	}
	uri := string(workspace.FileURI(file))
	ed.Notify("textDocument/didOpen", map[string]any{
		"textDocument": map[string]any{"uri": uri, "languageId": "go", "version": 1, "text": text},
	})

	res := &result{sc: sc}
	for run := 0; run < runs; run++ {
		rl.reset()
		token := fmt.Sprintf("bench-%d", run)
		// A new range per job, so no job is served from an earlier answer.
		rng := map[string]any{"start": map[string]any{"line": run * 3, "character": 0}, "end": map[string]any{"line": run*3 + 2, "character": 0}}
		var reply struct {
			Job string `json:"job"`
		}
		if err := ed.Call(ctx, "workspace/executeCommand", map[string]any{
			"command": "kimi.explain", "arguments": []any{map[string]any{"uri": uri, "range": rng}}, "workDoneToken": token,
		}, &reply); err != nil {
			return nil, fmt.Errorf("executeCommand: %w", err)
		}
		endMsg, err := ed.WaitMethod(ctx, "$/progress", func(p json.RawMessage) bool {
			v := decodeProgress(p)
			return v.Token == token && v.Value.Kind == "end"
		})
		if err != nil {
			return nil, fmt.Errorf("waiting for the end of job %d: %w\n%s", run, err, stderr.String())
		}
		if v := decodeProgress(endMsg.Params); !strings.HasPrefix(v.Value.Message, "explanation ready") {
			return nil, fmt.Errorf("job %d ended with %q", run, v.Value.Message)
		}
		if err := res.add(sc, rl.arrivals(), ed.Messages(), token, verbose); err != nil {
			return nil, fmt.Errorf("job %d: %w", run, err)
		}
	}
	res.load = benchkit.LoadAvg()
	return res, nil
}

type progressMsg struct {
	Token string `json:"token"`
	Value struct {
		Kind    string `json:"kind"`
		Message string `json:"message"`
	} `json:"value"`
}

func decodeProgress(p json.RawMessage) progressMsg {
	var v progressMsg
	json.Unmarshal(p, &v)
	return v
}

var markerRE = regexp.MustCompile(`\b([cr])(\d{4})\b`)

// newest returns the kind ('c' or 'r') and number of the last marker word in
// a report, or 0, 0.
func newest(msg string) (byte, int) {
	all := markerRE.FindAllStringSubmatch(msg, -1)
	if len(all) == 0 {
		return 0, 0
	}
	last := all[len(all)-1]
	n, _ := strconv.Atoi(last[2])
	return last[1][0], n
}

// add folds one job into the result.
func (r *result) add(sc scenario, arr map[string]time.Time, msgs []*lsptest.Message, token string, verbose bool) error {
	type rep struct {
		at   time.Time
		kind byte
		n    int
	}
	var reps []rep
	for _, m := range msgs {
		if m.Method != "$/progress" {
			continue
		}
		v := decodeProgress(m.Params)
		if v.Token != token || v.Value.Kind != "report" {
			continue
		}
		k, n := newest(v.Value.Message)
		if k == 0 {
			return fmt.Errorf("report %q shows no chunk", v.Value.Message)
		}
		reps = append(reps, rep{m.At, k, n})
	}
	arrival := func(kind byte, n int) (time.Time, error) {
		t, ok := arr[fmt.Sprintf("%c%04d", kind, n)]
		if !ok {
			return t, fmt.Errorf("the relay never saw chunk %c%04d", kind, n)
		}
		return t, nil
	}
	var firstContent, lastContent time.Time
	contentReports := 0
	for _, p := range reps {
		t, err := arrival(p.kind, p.n)
		if err != nil {
			return err
		}
		r.stale = append(r.stale, benchkit.Ms(p.at.Sub(t)))
		if p.kind == 'c' {
			if firstContent.IsZero() {
				firstContent = p.at
				c1, err := arrival('c', 1)
				if err != nil {
					return err
				}
				r.first = append(r.first, benchkit.Ms(p.at.Sub(c1)))
			}
			lastContent = p.at
			contentReports++
		}
	}
	// Every content chunk: its arrival to the first report showing it.
	j := 0
	for i := 1; i <= sc.chunks; i++ {
		for j < len(reps) && (reps[j].kind != 'c' || reps[j].n < i) {
			j++
		}
		if j == len(reps) {
			r.missing += sc.chunks - i + 1
			break
		}
		t, err := arrival('c', i)
		if err != nil {
			return err
		}
		r.perChunk = append(r.perChunk, benchkit.Ms(reps[j].at.Sub(t)))
	}
	// A rate needs a few intervals; a burst gives only the first report and
	// the final flush.
	if d := lastContent.Sub(firstContent); contentReports > 2 && d > 0 {
		r.perSecond = append(r.perSecond, float64(contentReports-1)/d.Seconds())
	}
	r.reports = append(r.reports, len(reps))
	if verbose {
		log.Printf("%s: %d reports (%d with content), first token %.2f ms", sc.name, len(reps), contentReports, r.first[len(r.first)-1])
	}
	return nil
}

// relay is a loopback TCP relay that notes when each marker word of the
// provider's reply is handed to the client's socket.
type relay struct {
	ln       net.Listener
	upstream string
	wg       sync.WaitGroup

	// mu guards seen.
	mu   sync.Mutex
	seen map[string]time.Time
}

func newRelay(upstream string) (*relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &relay{ln: ln, upstream: upstream, seen: map[string]time.Time{}}
	r.wg.Add(1)
	go r.serve()
	return r, nil
}

func (r *relay) Addr() string { return r.ln.Addr().String() }

func (r *relay) Close() {
	r.ln.Close()
	r.wg.Wait()
}

func (r *relay) reset() {
	r.mu.Lock()
	r.seen = map[string]time.Time{}
	r.mu.Unlock()
}

func (r *relay) arrivals() map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]time.Time, len(r.seen))
	for k, v := range r.seen {
		out[k] = v
	}
	return out
}

func (r *relay) serve() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			r.pipe(c)
		}()
	}
}

// pipe relays one connection: requests as they are, replies with their
// marker words noted just before they are written to the client.
func (r *relay) pipe(client net.Conn) {
	defer client.Close()
	up, err := net.Dial("tcp", r.upstream)
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		io.Copy(up, client)
		up.(*net.TCPConn).CloseWrite()
	}()
	buf := make([]byte, 32<<10)
	var carry []byte // the end of the previous read, for a word cut in two
	for {
		n, err := up.Read(buf)
		if n > 0 {
			now := time.Now()
			scan := append(carry, buf[:n]...)
			r.mu.Lock()
			for _, m := range markerRE.FindAllSubmatch(scan, -1) {
				k := string(m[1]) + string(m[2])
				if _, ok := r.seen[k]; !ok {
					r.seen[k] = now
				}
			}
			r.mu.Unlock()
			if _, werr := client.Write(buf[:n]); werr != nil {
				return
			}
			carry = append(carry[:0], scan[max(0, len(scan)-8):]...)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return
			}
			return
		}
	}
}

// syncBuffer is a strings.Builder safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
