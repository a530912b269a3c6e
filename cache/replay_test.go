package cache_test

import (
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
)

// The replay benchmark: an editing session over real files of net/http,
// replayed against the prefix cache simulator with our layout and naive
// ones. Run it with
//
//	go test ./cache -run '^TestReplay' -v -count=1 -replay.policies
//
// (-replay.policies adds the sweep of rebase policies). It prints markdown
// tables; bench/README.md records them.
var (
	replayPolicies = flag.Bool("replay.policies", false, "also replay every rebase policy")
	replaySeed     = flag.Uint64("replay.seed", 2026, "seed of the scripted editing session")
	replaySteps    = flag.Int("replay.steps", 48, "steps of the scripted editing session")
)

var replayFiles = []string{"client.go", "cookie.go", "fs.go", "header.go", "request.go", "response.go", "server.go", "transfer.go"}

// step is one request of the scripted session.
type step struct {
	req cache.Request
	at  time.Time
}

// script makes the editing session of cachetest.Script over the replay
// files, server.go active first, as cache requests.
func script(t testing.TB, seed uint64, steps int, idleAt int) []step {
	var docs []cachetest.ScriptDoc
	for _, d := range workspace(t, replayFiles...) {
		docs = append(docs, cachetest.ScriptDoc{Path: d.Path, Text: d.Text, Version: d.Version, LastEdited: d.LastEdited})
	}
	var out []step
	for _, st := range cachetest.Script(docs, 6, seed, steps, idleAt, t0) {
		req := cache.Request{
			Project:     project,
			Active:      st.Docs[st.Active].Path,
			Selection:   cache.Selection{Start: st.SelStart, End: st.SelEnd},
			Action:      st.Action.Name,
			Instruction: st.Action.Instruction,
			Now:         st.At,
		}
		for _, d := range st.Docs {
			req.Documents = append(req.Documents, cache.Document{Path: d.Path, Language: "go", Text: d.Text, Version: d.Version, LastEdited: d.LastEdited})
		}
		if st.DiagLine >= 0 {
			req.Diagnostics = []cache.Diagnostic{{StartLine: st.DiagLine, EndLine: st.DiagLine, Severity: cache.SeverityError, Source: "compiler", Message: "undefined: x1"}}
		}
		out = append(out, step{req: req, at: st.At})
	}
	return out
}

// naive lays a request out the way assistants without a cache-aware layout
// do: every file's current text, in path order or with the active file
// first, then the request. The system message is the same as ours.
func naive(req cache.Request, activeFirst bool) []cache.Message {
	docs := slices.Clone(req.Documents)
	slices.SortFunc(docs, func(a, b cache.Document) int {
		if activeFirst && (a.Path == req.Active) != (b.Path == req.Active) {
			if a.Path == req.Active {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
	var b strings.Builder
	fmt.Fprintf(&b, "<project name=%q languages=%q>\n%s\n</project>\n\n", req.Project.Name, strings.Join(req.Project.Languages, ","), req.Project.Conventions)
	for _, d := range docs {
		fmt.Fprintf(&b, "<file path=%q language=%q>\n%s\n</file>\n\n", d.Path, d.Language, d.Text)
	}
	var active string
	for _, d := range docs {
		if d.Path == req.Active {
			active = d.Text
		}
	}
	// The same window as ours: 20 lines either side of the selection.
	sel := req.Selection
	lo, hi := sel.Start, sel.End
	for n := 0; n <= 20 && lo > 0; n++ {
		lo = strings.LastIndexByte(active[:lo-1], '\n') + 1
	}
	for n := 0; n <= 20 && hi < len(active); n++ {
		if j := strings.IndexByte(active[hi:], '\n'); j >= 0 {
			hi += j + 1
		} else {
			hi = len(active)
		}
	}
	fmt.Fprintf(&b, "<request action=%q>\n<active path=%q/>\n<selection>\n%s<|selection|>%s<|/selection|>%s\n</selection>\n",
		req.Action, req.Active, active[lo:sel.Start], active[sel.Start:sel.End], active[sel.End:hi])
	for _, d := range req.Diagnostics {
		fmt.Fprintf(&b, "<diagnostics>\n- line %d %s: %s\n</diagnostics>\n", d.StartLine+1, d.Severity, d.Message)
	}
	fmt.Fprintf(&b, "<instruction>\n%s\n</instruction>\n</request>\n", req.Instruction)
	return []cache.Message{{Role: "system", Content: cache.DefaultSystem}, {Role: "user", Content: b.String()}}
}

// result sums one replay.
type result struct {
	layout                  string
	block                   int
	requests                int
	prompt, cached, written int64
	cost, uncached          float64
	build                   time.Duration
	rebases                 int
	logTokens               int64 // edit log tokens summed over requests
}

func (r result) hitRatio() float64 { return float64(r.cached) / float64(r.prompt) }

// replay plays the script against a fresh simulator with the given layout:
// "ours" (a Session with cfg) or "path order" / "active first".
func replay(t testing.TB, steps []step, layout string, block int, cfg cache.Config) result {
	sim := cachetest.New(cachetest.Config{BlockTokens: block, MinTokens: 1024})
	price := cache.DefaultPrices()[cache.DefaultModel]
	res := result{layout: layout, block: block}
	var s *cache.Session
	if layout == "ours" || strings.HasPrefix(layout, "ours") {
		cfg.Tools = tools
		var err error
		if s, err = cache.NewSession(cfg); err != nil {
			t.Fatal(err)
		}
	}
	var buf []byte
	for _, st := range steps {
		var msgs []cache.Message
		var p *cache.Prompt
		begin := time.Now()
		switch {
		case s != nil:
			var err error
			p, err = s.Build(st.req)
			if err != nil {
				t.Fatal(err)
			}
			msgs = p.Messages
		case layout == "path order":
			msgs = naive(st.req, false)
		case layout == "active first":
			msgs = naive(st.req, true)
		default:
			t.Fatalf("unknown layout %q", layout)
		}
		res.build += time.Since(begin)
		buf = cache.Render(buf[:0], tools, msgs)
		pt, cached, written := sim.Observe(st.at, buf, 5*time.Minute)
		u := cache.Usage{PromptTokens: pt, CachedTokens: cached, CacheWriteTokens: written}
		if p != nil {
			if _, err := s.Record(p.Handle, u); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(p.Layout, "rebase") {
				res.rebases++
			}
			if i := strings.LastIndex(msgs[2].Content, "<request action="); i > 0 {
				res.logTokens += int64(cachetest.CountString(msgs[2].Content[:i]))
			}
			// The prompt always conveys the active buffer's current text.
			files, err := cache.Reconstruct(msgs)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range st.req.Documents {
				if d.Path == st.req.Active && files[d.Path] != d.Text {
					t.Fatalf("%s: the prompt does not convey the active text", st.req.Active)
				}
			}
		}
		res.requests++
		res.prompt += int64(pt)
		res.cached += int64(cached)
		res.written += int64(written)
		plain := pt - cached - written
		res.cost += (float64(plain)*price.Input + float64(cached)*price.CachedInput + float64(written)*price.CacheWrite5m) / 1e6
		res.uncached += float64(pt) * price.Input / 1e6
	}
	return res
}

func header(t testing.TB) {
	t.Log("| layout | block | hit ratio | cost vs uncached | mean prompt tokens | mean build time |")
	t.Log("|---|---:|---:|---:|---:|---:|")
}

func row(t testing.TB, r result) {
	t.Logf("| %s | %d | %.3f | %.3f | %d | %v |", r.layout, r.block, r.hitRatio(), r.cost/r.uncached,
		r.prompt/int64(r.requests), (r.build / time.Duration(r.requests)).Round(time.Microsecond))
}

// TestReplay replays the scripted session with our layout and two naive
// ones, 16- and 256-token blocks, and checks the targets: a hit ratio of at
// least 0.95 (16-token blocks) and 0.90 (256-token blocks) for ours, the
// naive layouts far below.
func TestReplay(t *testing.T) {
	n := *replaySteps
	if raceEnabled {
		n = min(n, 12) // the race detector slows the simulator tenfold
	}
	steps := script(t, *replaySeed, n, -1)
	t.Logf("session: %d steps over %d files of net/http, seed %d", len(steps), len(replayFiles), *replaySeed)
	header(t)
	for _, block := range []int{16, 256} {
		var ours result
		for _, layout := range []string{"ours", "path order", "active first"} {
			r := replay(t, steps, layout, block, cache.Config{})
			row(t, r)
			switch layout {
			case "ours":
				ours = r
				want := map[int]float64{16: 0.95, 256: 0.90}[block]
				// The first request misses whole: a short session cannot
				// reach the target (a 12-step one is capped at 11/12).
				if n >= 40 && r.hitRatio() < want {
					t.Errorf("ours, %d-token blocks: hit ratio %.3f, want >= %.2f", block, r.hitRatio(), want)
				}
			default:
				if r.hitRatio() > ours.hitRatio()-0.25 {
					t.Errorf("%s, %d-token blocks: hit ratio %.3f, not far below ours (%.3f)", layout, block, r.hitRatio(), ours.hitRatio())
				}
			}
		}
	}
}

// TestReplayPolicies compares rebase policies on the same session (and on
// one with an idle gap past the TTL); it runs with -replay.policies.
func TestReplayPolicies(t *testing.T) {
	if !*replayPolicies {
		t.Skip("run with -replay.policies")
	}
	for _, idle := range []int{-1, *replaySteps / 2} {
		steps := script(t, *replaySeed, *replaySteps, idle)
		if idle >= 0 {
			t.Logf("with a 10 minute idle gap before step %d:", idle)
		}
		t.Log("| rebase when the log passes | hit ratio (16) | cost (16) | hit ratio (256) | cost (256) | rebases | mean log tokens |")
		t.Log("|---|---:|---:|---:|---:|---:|---:|")
		for _, maxLog := range []int{1, 512, 1024, 2048, 4096, 8192, -1} {
			name := fmt.Sprintf("%d tokens", maxLog)
			switch maxLog {
			case 1:
				name = "every edit (move the buffer to the end)"
			case -1:
				name = "never (only when cold)"
			}
			a := replay(t, steps, "ours", 16, cache.Config{MaxLogTokens: maxLog})
			b := replay(t, steps, "ours", 256, cache.Config{MaxLogTokens: maxLog})
			t.Logf("| %s | %.3f | %.3f | %.3f | %.3f | %d | %d |", name, a.hitRatio(), a.cost/a.uncached, b.hitRatio(), b.cost/b.uncached, a.rebases, a.logTokens/int64(a.requests))
		}
	}
}
