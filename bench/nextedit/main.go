// Command nextedit replays editing sessions against kimi-lsp's next-edit
// suggestions and reports what they cost: provider requests per 100 edits
// and per edit burst, the prompt-cache hit ratio, the cost of an hour of
// such editing at K3.1 prices, the server's own time per suggestion, and
// the share of suggestions dropped as stale.
//
// Everything but the user is real: the server (lsp.NewServer, in this
// process) speaks LSP over pipes to a fake editor (lsp/lsptest) and asks the
// stand-in provider (assist/model/modeltest, HTTP on loopback, with its
// prefix-cache simulator). The user works through edit tasks in Go and
// Python files — renames of a parameter, an added field, a changed call
// signature — each a burst of keystrokes (60–160 ms apart inside a word,
// with a 300–900 ms hesitation now and then), then a look at the screen
// (1.5–4 s). A suggestion shown then is accepted through its code action's
// edit; with probability -stale the user first types inside it (it must be
// dropped). The stand-in answers every request with the task's true next
// edit, as a unified diff of the file as it is after the whole burst, after
// -latency: a request made mid-burst gets a diff that no longer applies.
// With -bare the diff has no ---/+++ file header, only its @@ hunks.
// Every task runs -rounds times, on its own file each round.
//
//	go run ./bench/nextedit [-debounce 300,500,800,1200] [-rounds 4] [-stale 0.15] [-blocks 16] [-bare] [-nethttp] [-context N]
//
// With -nethttp the files are four net/http sources of the Go tree
// (cookie.go, response.go, client.go, fs.go: 371 to 1,116 lines), and each
// round renames a parameter of the next function down each file; a second
// table gives each request's input: prompt and uncached tokens after each
// file's first request, and the input cost of an hour at a burst every
// 10 s.
//
// One line per debounce value; see bench/README.md for how to read them.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/bench/internal/benchkit"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

func main() {
	var (
		debounces = flag.String("debounce", "300,500,800,1200", "nextEdit.debounceMs values, one session each")
		rounds    = flag.Int("rounds", 4, "times each task is done (each on its own file)")
		stale     = flag.Float64("stale", 0.15, "probability that the user types inside a shown suggestion before accepting")
		latency   = flag.Duration("latency", 900*time.Millisecond, "provider time to a whole answer")
		blocks    = flag.Int("blocks", 16, "stand-in cache block size in tokens (256: with a 1024-token minimum)")
		seed      = flag.Uint64("seed", 1, "random seed of the user")
		v         = flag.Bool("v", false, "print the token and cost breakdown")
		bareFlag  = flag.Bool("bare", false, "answer @@ hunks without the ---/+++ file header, as models often do")
		ctxTokens = flag.Int("context", 0, "nextEdit.maxContextTokens (0: the default)")
		nethttp   = flag.Bool("nethttp", false, "edit four net/http sources of GOROOT (371-1,116 lines) instead: rename a parameter of one function after another")
	)
	flag.Parse()
	log.SetFlags(0)
	if *nethttp {
		f, err := nethttpFiles()
		if err != nil {
			log.Fatal(err)
		}
		files = f
	}
	var rows []*result
	fmt.Printf("%d files x %d rounds, provider latency %v, cache blocks %d, stale typing %.2f; load average %s\n\n",
		len(files), *rounds, *latency, *blocks, *stale, benchkit.LoadAvg())
	fmt.Println("| debounce ms | edits | bursts | provider requests / 100 edits | requests / burst | hung up | shown / accepted | stale share | hit ratio: provider's view / kimi.stats / warm files | server time / answer (server's count; end to end less debounce and provider, p50) | session | $ / hour ($ / burst) |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---|---:|---|---|---:|---|")
	for _, d := range strings.Split(*debounces, ",") {
		ms, err := strconv.Atoi(strings.TrimSpace(d))
		if err != nil {
			log.Fatal(err)
		}
		verbose, bare = *v, *bareFlag
		r, err := replay(ms, *ctxTokens, *rounds, *stale, *latency, *blocks, *seed)
		if err != nil {
			log.Fatalf("debounce %d: %v", ms, err)
		}
		fmt.Println(r.row())
		rows = append(rows, r)
	}
	fmt.Println()
	fmt.Println("| debounce ms | requests: first of a file / after | prompt tokens per request after the first (mean) | uncached prompt tokens per request after the first: mean / p90 / max | input $ per request: first / after | input $ / hour at a burst every 10 s |")
	fmt.Println("|---:|---|---:|---|---|---:|")
	for _, r := range rows {
		fmt.Println(r.inputRow(len(files)))
	}
	fmt.Printf("\nload average after: %s\n", benchkit.LoadAvg())
}

// verbose prints the token and cost breakdown; bare drops the answers'
// file header (-bare).
var verbose, bare bool

// result is one session's figures.
type result struct {
	debounce               int
	edits, bursts          int
	provider, hungUp       int
	shown, accepted, stale int64
	seenTokens, seenCached int64
	statsHit, cost         float64
	serverMs               []float64 // last edit to diagnostic, less debounce and provider latency
	serverMsInside         float64   // the server's own count, per answer
	warmTokens, warmCached int64     // each file's first request left out
	dur                    time.Duration
	// The input of each request: of each file's first, and after it.
	firstIn, warmIn []requestInput
}

// requestInput is one request's prompt as the stand-in counted it.
type requestInput struct {
	prompt, uncached int
	usd              float64
}

// K3.1 input prices, US dollars per million tokens (the fast model's, as
// bench/README.md states them): plain input, cached read, 5-minute write.
const priceInput, priceCached, priceWrite5m = 2.00, 0.20, 2.00

func inputOf(u modeltest.Usage) requestInput {
	plain := max(u.PromptTokens-u.CachedTokens-u.CacheWriteTokens, 0)
	return requestInput{prompt: u.PromptTokens, uncached: u.PromptTokens - u.CachedTokens,
		usd: (float64(plain)*priceInput + float64(u.CachedTokens)*priceCached + float64(u.CacheWriteTokens)*priceWrite5m) / 1e6}
}

// inputRow is the session's input figures: an hour at a burst every 10 s
// (360 requests) opens each of the files once (its first request) and
// asks after it the rest of the time.
func (r *result) inputRow(files int) string {
	mean := func(in []requestInput, f func(requestInput) float64) float64 {
		if len(in) == 0 {
			return 0
		}
		t := 0.0
		for _, x := range in {
			t += f(x)
		}
		return t / float64(len(in))
	}
	var unc []float64
	for _, x := range r.warmIn {
		unc = append(unc, float64(x.uncached))
	}
	slices.Sort(unc)
	p90, worst := 0.0, 0.0
	if n := len(unc); n > 0 {
		p90, worst = unc[min(n-1, n*9/10)], unc[n-1]
	}
	usd := func(x requestInput) float64 { return x.usd }
	first, warm := mean(r.firstIn, usd), mean(r.warmIn, usd)
	hour := float64(files)*first + float64(360-files)*warm
	return fmt.Sprintf("| %d | %d / %d | %.0f | %.0f / %.0f / %.0f | $%.5f / $%.5f | **$%.3f** |", r.debounce, len(r.firstIn), len(r.warmIn),
		mean(r.warmIn, func(x requestInput) float64 { return float64(x.prompt) }), mean(r.warmIn, func(x requestInput) float64 { return float64(x.uncached) }),
		p90, worst, first, warm, hour)
}

func (r *result) row() string {
	hour := float64(time.Hour) / float64(r.dur)
	ratio := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	return fmt.Sprintf("| %d | %d | %d | %.1f | %.2f | %d | %d / %d | %.2f | %.3f / %.3f / %.3f | %.1f ms; %.0f ms | %.0f s | %.3f ($%.4f) |",
		r.debounce, r.edits, r.bursts, ratio(float64(r.provider)*100, float64(r.edits)), ratio(float64(r.provider), float64(r.bursts)),
		r.hungUp, r.shown, r.accepted, ratio(float64(r.stale), float64(r.shown)),
		ratio(float64(r.seenCached), float64(r.seenTokens)), r.statsHit, ratio(float64(r.warmCached), float64(r.warmTokens)),
		r.serverMsInside, benchkit.Median(r.serverMs), r.dur.Seconds(), r.cost*hour, ratio(r.cost, float64(r.bursts)))
}

// replay runs one session: every task, rounds times.
func replay(debounce, ctxTokens, rounds int, staleP float64, latency time.Duration, blocks int, seed uint64) (*result, error) {
	rng := rand.New(rand.NewPCG(seed, 24))
	cache := modeltest.CacheConfig{BlockTokens: blocks}
	if blocks >= 256 {
		cache.MinTokens = 1024
	}
	srv := modeltest.NewServer(modeltest.Config{Cache: cache})
	defer srv.Close()
	dir, err := os.MkdirTemp("", "nextedit-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	neSet := map[string]any{"debounceMs": debounce}
	if ctxTokens > 0 {
		neSet["maxContextTokens"] = ctxTokens
	}
	settings := map[string]any{"nextEdit": neSet, "completion": map[string]any{"enable": false}}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Minute)
	defer cancel()
	ed, stop, err := benchkit.Serve(ctx, srv, dir, settings, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		return nil, err
	}
	defer stop()
	u := &user{ed: ed, rng: rng, res: &result{debounce: debounce}, diags: map[string]chan diag{}}
	go u.listen(ctx)
	began := time.Now()
	docs := make([]*doc, len(files))
	for i, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, []byte(f.base), 0o644); err != nil {
			return nil, err
		}
		uri := string(workspace.FileURI(path))
		lang := "go"
		if strings.HasSuffix(f.name, ".py") {
			lang = "python"
		}
		docs[i] = &doc{ed: ed, uri: uri, text: f.base, version: 1, diags: make(chan diag, 16)}
		u.mu.Lock()
		u.diags[uri] = docs[i].diags
		u.mu.Unlock()
		ed.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": lang, "version": 1, "text": f.base}})
	}
	for round := range rounds {
		for i, f := range files {
			burst, next := f.step(docs[i].text, round)
			if burst == docs[i].text {
				return nil, fmt.Errorf("%s round %d: the burst changes nothing", f.name, round)
			}
			if err := u.task(ctx, srv, f.name, docs[i], burst, next, debounce, latency, staleP); err != nil {
				return nil, fmt.Errorf("%s round %d: %w", f.name, round, err)
			}
		}
	}
	u.res.dur = time.Since(began)
	var st struct {
		NextEdit struct {
			Shown    int64   `json:"shown"`
			Accepted int64   `json:"accepted"`
			Stale    int64   `json:"stale"`
			HitRatio float64 `json:"hitRatio"`
			CostUSD  float64 `json:"costUSD"`
			Input    float64 `json:"inputCostUSD"`
			ServerMs float64 `json:"serverMsPerAnswer"`
			Output   int64   `json:"outputTokens"`
			Prompt   int64   `json:"promptTokens"`
			Requests int64   `json:"requests"`
		} `json:"nextEdit"`
	}
	if err := ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
		return nil, err
	}
	r := u.res
	ne := st.NextEdit
	r.shown, r.accepted, r.stale, r.statsHit, r.cost = ne.Shown, ne.Accepted, ne.Stale, ne.HitRatio, ne.CostUSD
	r.serverMsInside = ne.ServerMs
	if verbose {
		fmt.Fprintf(os.Stderr, "debounce %d: %d requests with usage, %d prompt tokens, %d output tokens, input $%.4f of $%.4f\n",
			debounce, ne.Requests, ne.Prompt, ne.Output, ne.Input, ne.CostUSD)
	}
	first := map[string]bool{}
	for _, rec := range srv.Requests() {
		name := ""
		for _, f := range files {
			if strings.Contains(string(rec.Body), "Next-edit suggestions in "+f.name) {
				name = f.name
			}
		}
		if rec.Usage.PromptTokens > 0 {
			if first[name] {
				r.warmTokens += int64(rec.Usage.PromptTokens)
				r.warmCached += int64(rec.Usage.CachedTokens)
				r.warmIn = append(r.warmIn, inputOf(rec.Usage))
			} else {
				r.firstIn = append(r.firstIn, inputOf(rec.Usage))
			}
			first[name] = true
		}
		if verbose {
			var body struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			_ = json.Unmarshal(rec.Body, &body)
			var sizes []string
			for _, m := range body.Messages {
				sizes = append(sizes, strconv.Itoa(len(m.Content)))
			}
			fmt.Fprintf(os.Stderr, "%s: prompt %d, cached %d, written %d, hung up %v; message bytes %s\n", name,
				rec.Usage.PromptTokens, rec.Usage.CachedTokens, rec.Usage.CacheWriteTokens, rec.HungUp, strings.Join(sizes, " / "))
		}
		r.provider++
		if rec.HungUp {
			r.hungUp++
		}
		r.seenTokens += int64(rec.Usage.PromptTokens)
		r.seenCached += int64(rec.Usage.CachedTokens)
	}
	return r, nil
}

// diag is a next-edit diagnostic as the user sees it.
type diag struct {
	line int
	at   time.Time
}

// user is the editor's side of a replay.
type user struct {
	ed  *lsptest.Editor
	rng *rand.Rand
	res *result

	mu    sync.Mutex
	diags map[string]chan diag // by URI: the next-edit diagnostics published
}

// listen routes published next-edit diagnostics to their document.
func (u *user) listen(ctx context.Context) {
	seen := 0
	for ctx.Err() == nil {
		msgs := u.ed.Messages()
		for _, m := range msgs[seen:] {
			if m.Method != "textDocument/publishDiagnostics" {
				continue
			}
			var p struct {
				URI         string `json:"uri"`
				Diagnostics []struct {
					Code  string `json:"code"`
					Range struct {
						Start struct{ Line int } `json:"start"`
					} `json:"range"`
				} `json:"diagnostics"`
			}
			if json.Unmarshal(m.Params, &p) != nil {
				continue
			}
			u.mu.Lock()
			ch := u.diags[p.URI]
			u.mu.Unlock()
			for _, d := range p.Diagnostics {
				if d.Code == "next-edit" && ch != nil {
					select {
					case ch <- diag{line: d.Range.Start.Line, at: time.Now()}:
					default:
					}
				}
			}
		}
		seen = len(msgs)
		time.Sleep(5 * time.Millisecond)
	}
}

// doc is one open document of the fake editor.
type doc struct {
	ed      *lsptest.Editor
	uri     string
	text    string
	version int
	diags   chan diag // its next-edit diagnostics
}

// replace replaces [start, end) with text as one didChange.
func (d *doc) replace(start, end int, text string) {
	a, b := position(d.text, start), position(d.text, end)
	d.text = d.text[:start] + text + d.text[end:]
	d.version++
	d.ed.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": d.uri, "version": d.version},
		"contentChanges": []any{map[string]any{"range": map[string]any{"start": a, "end": b}, "text": text}},
	})
}

func (u *user) pause(lo, hi int) time.Duration {
	return time.Duration(lo+u.rng.IntN(hi-lo+1)) * time.Millisecond
}

// task does one edit task in d: the burst, a look, and the suggestion
// accepted (or typed into first).
func (u *user) task(ctx context.Context, srv *modeltest.Server, name string, d *doc, burstText, next string, debounce int, latency time.Duration, staleP float64) error {
	ch := d.diags
	diff := patch.Unified("a/"+name, "b/"+name, burstText, next, 3)
	if i := strings.Index(diff, "@@"); bare && i >= 0 {
		diff = diff[i:]
	}
	half := int(latency / 2 / time.Millisecond)
	if err := srv.SetScript(&modeltest.Script{Default: &modeltest.Rule{Content: diff, DelayMS: half, Chunks: 4, IntervalMS: half / 4}}); err != nil {
		return err
	}
	uri := d.uri
	// The burst: the old text is deleted key by key, the new one typed.
	p, s := common(d.text, burstText)
	old, neu := d.text[p:len(d.text)-s], burstText[p:len(burstText)-s]
	u.res.bursts++
	for i := len(old); i > 0; i-- {
		time.Sleep(u.pause(60, 160))
		d.replace(p+i-1, p+i, "")
		u.res.edits++
	}
	for i := range len(neu) {
		gap := u.pause(60, 160)
		if u.rng.Float64() < 0.1 {
			gap = u.pause(300, 900) // a hesitation
		}
		time.Sleep(gap)
		d.replace(p+i, p+i, neu[i:i+1])
		u.res.edits++
	}
	last := time.Now()
	look := time.NewTimer(u.pause(1500, 4000) + time.Duration(debounce)*time.Millisecond)
	var shown *diag
wait:
	for {
		select {
		case g := <-ch:
			if g.at.After(last) {
				shown = &g
				u.res.serverMs = append(u.res.serverMs, benchkit.Ms(g.at.Sub(last)-time.Duration(debounce)*time.Millisecond-latency))
			}
		case <-look.C:
			break wait
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if shown != nil {
		if u.rng.Float64() < staleP {
			// The user types inside it first: it must go.
			u.res.bursts++ // the user's typing is a burst too
			ls := lineStart(d.text, shown.line)
			d.replace(ls, ls, " ")
			time.Sleep(u.pause(200, 400))
			d.replace(ls, ls+1, "")
		} else {
			var actions []struct {
				Title string          `json:"title"`
				Edit  json.RawMessage `json:"edit"`
			}
			if err := u.ed.Call(ctx, "textDocument/codeAction", map[string]any{
				"textDocument": map[string]any{"uri": uri},
				"range":        map[string]any{"start": map[string]any{"line": shown.line, "character": 0}, "end": map[string]any{"line": shown.line, "character": 0}},
				"context":      map[string]any{"diagnostics": []any{}},
			}, &actions); err != nil {
				return err
			}
			if len(actions) > 0 && strings.HasPrefix(actions[0].Title, "Kimi: Apply next edit") {
				d.applyEdit(actions[0].Edit)
			}
		}
	}
	time.Sleep(u.pause(300, 800))
	return nil
}

// applyEdit applies a code action's WorkspaceEdit as the editor does: one
// didChange with its edits, last first.
func (d *doc) applyEdit(raw json.RawMessage) {
	var we struct {
		DocumentChanges []struct {
			Edits []struct {
				Range struct {
					Start, End struct{ Line, Character int }
				} `json:"range"`
				NewText string `json:"newText"`
			} `json:"edits"`
		} `json:"documentChanges"`
	}
	if json.Unmarshal(raw, &we) != nil || len(we.DocumentChanges) == 0 {
		return
	}
	es := we.DocumentChanges[0].Edits
	var changes []any
	for i := len(es) - 1; i >= 0; i-- {
		e := es[i]
		start := lineStart(d.text, e.Range.Start.Line) + e.Range.Start.Character
		end := lineStart(d.text, e.Range.End.Line) + e.Range.End.Character
		changes = append(changes, map[string]any{"range": map[string]any{"start": position(d.text, start), "end": position(d.text, end)}, "text": e.NewText})
		d.text = d.text[:start] + e.NewText + d.text[end:]
	}
	d.version++
	d.ed.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": d.uri, "version": d.version},
		"contentChanges": changes,
	})
}

// common returns the lengths of the common prefix and suffix of a and b.
func common(a, b string) (int, int) {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	s := 0
	for s < len(a)-p && s < len(b)-p && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return p, s
}

func lineStart(text string, line int) int {
	off := 0
	for range line {
		i := strings.IndexByte(text[off:], '\n')
		if i < 0 {
			return len(text)
		}
		off += i + 1
	}
	return off
}

// position is off in text as an LSP position (the tasks are ASCII).
func position(text string, off int) map[string]any {
	line := strings.Count(text[:off], "\n")
	return map[string]any{"line": line, "character": off - (strings.LastIndexByte(text[:off], '\n') + 1)}
}
