// Command completion replays typing sessions against kimi-lsp's inline
// completion and reports what they cost: provider requests per 100
// keystrokes, prompt tokens per request, the prompt-cache hit ratio, and the
// cost of an hour of such typing at K3.1 prices.
//
// Everything but the typist is real: the server (lsp.NewServer, in this
// process) speaks LSP over pipes to a fake editor (lsp/lsptest), and asks the
// stand-in provider (assist/model/modeltest, HTTP on loopback, with its
// prefix-cache simulator). The editor behaves as VS Code does: each
// keystroke sends textDocument/didChange, cancels the previous
// inlineCompletion request and sends a new one (triggerKind Automatic).
//
// The typist retypes a region of a real Go file (a function of
// $(go env GOROOT)/src/net/http/client.go by default) at a seeded, human
// rhythm: 60–160 ms between characters inside words, 100–300 ms after a
// space or punctuation, 400–2 000 ms before a new line (the editor indents
// it: Enter is one keystroke). The stand-in answers each request with the
// rest of the true line (or the next line at a line's end) with probability
// -q, else with a wrong suggestion; a right suggestion shown when the
// typist's next key is due is accepted with Tab (one keystroke), a wrong
// one is typed over. The stand-in takes -latency to answer (a first-token
// delay, then the content in a few chunks).
//
//	go run ./bench/completion [-debounce 0,50,100,150,250,400] [-keys 400] [-q 0.35] [-blocks 16]
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
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/bench/internal/benchkit"
	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// name is the retyped file's base name: the bench's workspace holds it
// under that name, and its extension gives the language.
var name string

func main() {
	var (
		debounces = flag.String("debounce", "0,50,100,150,250,400", "completion.debounceMs values, one session each")
		keys      = flag.Int("keys", 400, "keystrokes per session (about)")
		q         = flag.Float64("q", 0.35, "probability that a suggestion is right")
		latency   = flag.Duration("latency", 700*time.Millisecond, "provider time to a whole suggestion")
		blocks    = flag.Int("blocks", 16, "stand-in cache block size in tokens (256: with a 1024-token minimum)")
		file      = flag.String("file", "net/http/client.go", "file whose region is retyped: under $(go env GOROOT)/src, or a path from the current directory (assist/complete/testdata/inventory.py)")
		start     = flag.String("at", "func (c *Client) do(", "the region starts at the line holding this text")
		seed      = flag.Uint64("seed", 1, "random seed of the typist and of the suggestions")
		verbose   = flag.Bool("v", false, "print each provider request's tokens and the prompt layout changes")
	)
	flag.Parse()
	log.SetFlags(0)
	src, err := benchkit.GoSourceDir()
	if err != nil {
		log.Fatal(err)
	}
	b, err := os.ReadFile(*file)
	if err != nil {
		b, err = os.ReadFile(filepath.Join(src, *file))
	}
	if err != nil {
		log.Fatal(err)
	}
	name = filepath.Base(*file)
	text := string(b)
	at := strings.Index(text, *start)
	if at < 0 {
		log.Fatalf("%q not found in %s", *start, *file)
	}
	at = strings.LastIndexByte(text[:at], '\n') + 1
	fmt.Printf("file %s (%d bytes), region from byte %d; q %.2f, provider latency %v, cache blocks %d; load average %s\n\n",
		*file, len(text), at, *q, *latency, *blocks, benchkit.LoadAvg())
	fmt.Println("| debounce ms | keystrokes | provider requests / 100 keys (hung up) | suggestions shown / accepted | reused answers | prompt tokens / request | hit ratio: provider's view / completed streams | time to a suggestion p50 | session | $ / hour (completed streams; + hung-up prompts) |")
	fmt.Println("|---:|---:|---|---|---:|---:|---|---:|---:|---|")
	for _, d := range strings.Split(*debounces, ",") {
		ms, err := strconv.Atoi(strings.TrimSpace(d))
		if err != nil {
			log.Fatal(err)
		}
		r, err := replay(text, at, *keys, ms, *q, *latency, *blocks, *seed, *verbose)
		if err != nil {
			log.Fatalf("debounce %d: %v", ms, err)
		}
		fmt.Println(r.row())
	}
	fmt.Printf("\nload average after: %s\n", benchkit.LoadAvg())
}

// result is one session's figures.
type result struct {
	debounce                    int
	keystrokes, shown, accepted int
	provider, hungUp, reused    int
	promptTokens, cachedTokens  int64
	recorded                    int64
	cost, hungUpCost            float64
	waits                       []float64 // ms from a request to its suggestion
	dur                         time.Duration
	// What the provider saw with usage: every request but those hung up
	// before the reply started.
	seenRequests, seenTokens, seenCached int64
}

func (r *result) row() string {
	per100 := func(n int) float64 { return float64(n) * 100 / float64(r.keystrokes) }
	hour := float64(time.Hour) / float64(r.dur)
	ratio := func(a, b int64) float64 {
		if b == 0 {
			return 0
		}
		return float64(a) / float64(b)
	}
	return fmt.Sprintf("| %d | %d | %.1f (%.1f) | %d / %d | %d | %.0f | %.3f / %.3f | %.0f ms | %.0f s | %.3f; %.3f |",
		r.debounce, r.keystrokes, per100(r.provider), per100(r.hungUp), r.shown, r.accepted, r.reused,
		ratio(r.seenTokens, r.seenRequests), ratio(r.seenCached, r.seenTokens), ratio(r.cachedTokens, r.promptTokens),
		benchkit.Median(r.waits), r.dur.Seconds(), r.cost*hour, (r.cost+r.hungUpCost)*hour)
}

// srv2rule returns the stand-in's pacing for a latency: half of it before
// the reply starts, the rest spread over four chunks.
func srv2rule(latency time.Duration) modeltest.Rule {
	const chunks = 4
	return modeltest.Rule{DelayMS: int(latency / 2 / time.Millisecond), Chunks: chunks,
		IntervalMS: int(latency / 2 / chunks / time.Millisecond)}
}

// typist is the seeded rhythm of the keys.
type typist struct{ rng *rand.Rand }

func (t typist) pause(prev byte, next byte) time.Duration {
	ms := func(lo, hi int) time.Duration { return time.Duration(lo+t.rng.IntN(hi-lo+1)) * time.Millisecond }
	switch {
	case next == '\n':
		return ms(100, 300)
	case prev == '\n':
		return ms(400, 2000) // thinking about the next line
	case prev == ' ' || strings.IndexByte("(){}[].,;:=", prev) >= 0:
		return ms(100, 300)
	}
	return ms(60, 160)
}

// replay runs one session.
func replay(text string, at, keys, debounce int, q float64, latency time.Duration, blocks int, seed uint64, verbose bool) (*result, error) {
	// The region: whole lines from at, about keys characters.
	end := at
	for end < len(text) && end-at < keys {
		if j := strings.IndexByte(text[end:], '\n'); j >= 0 {
			end += j + 1
		} else {
			end = len(text)
		}
	}
	// The region is replaced by an empty line, where the typist types it
	// again (its last line break is not typed).
	target := strings.TrimSuffix(text[at:end], "\n")
	rng := rand.New(rand.NewPCG(seed, 7))
	cache := modeltest.CacheConfig{BlockTokens: blocks}
	if blocks >= 256 {
		cache.MinTokens = 1024
	}
	wrong := srv2rule(latency)
	wrong.Content = "nil // not this"
	srv := modeltest.NewServer(modeltest.Config{Cache: cache, Script: &modeltest.Script{Default: &wrong}})
	defer srv.Close()

	dir, err := os.MkdirTemp("", "completion-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, name)
	doc := text[:at] + "\n" + text[end:]
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		return nil, err
	}
	settings := map[string]any{"completion": map[string]any{"debounceMs": debounce}}
	logger := slog.New(slog.DiscardHandler)
	if verbose {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	ed, stop, err := benchkit.Serve(ctx, srv, dir, settings, logger, func(params map[string]any) {
		caps := params["capabilities"].(map[string]any)
		caps["textDocument"].(map[string]any)["inlineCompletion"] = map[string]any{"dynamicRegistration": true}
	})
	if err != nil {
		return nil, err
	}
	defer stop()
	uri := string(workspace.FileURI(path))
	ed.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{"uri": uri, "languageId": workspace.LanguageOf(path), "version": 1, "text": doc}})

	def := srv2rule(latency)
	s := &session{ed: ed, srv: srv, uri: uri, doc: doc, cursor: at, version: 1, rng: rng, q: q, target: target,
		delay: def.DelayMS, chunks: def.Chunks, interval: def.IntervalMS, res: &result{debounce: debounce}}
	t := typist{rng: rng}
	began := time.Now()
	prev := byte('\n')
	for s.typed < len(target) {
		next := target[s.typed]
		time.Sleep(t.pause(prev, next))
		// A right suggestion on screen is accepted with Tab.
		if ins, ok := s.shown(target[s.typed:]); ok {
			s.change(ins)
			s.res.accepted++
			prev = target[s.typed-1]
			continue
		}
		ins := target[s.typed : s.typed+1]
		if next == '\n' {
			// Enter: the editor indents the new line.
			ins = "\n" + indentation(target[s.typed+1:])
		}
		s.change(ins)
		prev = next
	}
	time.Sleep(latency + time.Duration(debounce)*time.Millisecond + 500*time.Millisecond)
	s.res.dur = time.Since(began)
	s.wg.Wait()

	var st struct {
		Completion struct {
			Reused       int     `json:"reused"`
			Requests     int64   `json:"requests"`
			PromptTokens int64   `json:"promptTokens"`
			CachedTokens int64   `json:"cachedTokens"`
			HitRatio     float64 `json:"hitRatio"`
			CostUSD      float64 `json:"costUSD"`
		} `json:"completion"`
	}
	if err := ed.Call(ctx, "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, &st); err != nil {
		return nil, err
	}
	c := st.Completion
	r := s.res
	r.reused, r.recorded, r.promptTokens, r.cachedTokens, r.cost = c.Reused, c.Requests, c.PromptTokens, c.CachedTokens, c.CostUSD
	// The provider's view: every request it saw, its prompt through the
	// cache simulator (a request hung up before the reply started has no
	// usage: its prompt is counted at the session's hit ratio).
	for _, rec := range srv.Requests() {
		if verbose {
			fmt.Fprintf(os.Stderr, "request %d: hung up %v, prompt %d, cached %d\n", rec.Seq, rec.HungUp, rec.Usage.PromptTokens, rec.Usage.CachedTokens)
		}
		r.provider++
		u := rec.Usage
		if u.PromptTokens > 0 {
			r.seenRequests++
			r.seenTokens += int64(u.PromptTokens)
			r.seenCached += int64(u.CachedTokens)
		}
		if rec.HungUp {
			r.hungUp++
			// Worst case: the provider bills a hung-up prompt as if it had
			// answered it (input only, at the K3.1 prices).
			if u.PromptTokens > 0 {
				r.hungUpCost += (float64(u.PromptTokens-u.CachedTokens-u.CacheWriteTokens)*2.00 + float64(u.CachedTokens)*0.20 + float64(u.CacheWriteTokens)*2.00) / 1e6
			} else {
				n := float64(cachetest.Count(rec.Prompt))
				r.hungUpCost += n * (c.HitRatio*0.20 + (1-c.HitRatio)*2.00) / 1e6
			}
		}
	}
	return r, nil
}

// session is the editor's side of a replay.
type session struct {
	ed      *lsptest.Editor
	srv     *modeltest.Server
	uri     string
	rng     *rand.Rand
	q       float64
	res     *result
	wg      sync.WaitGroup
	cancel  json.RawMessage // id of the request in flight
	version int
	target  string // what the typist types
	typed   int    // bytes of target in the document
	// The stand-in's pacing.
	delay, chunks, interval int

	mu     sync.Mutex
	doc    string
	cursor int
	item   *item // the suggestion shown
}

type item struct {
	start int // byte offset the insert text replaces from
	text  string
}

// shown returns what accepting the shown suggestion inserts at the cursor,
// if it is shown and right (a prefix of what the typist means to type).
func (s *session) shown(want string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.item
	if it == nil || it.start > s.cursor || !strings.HasPrefix(it.text, s.doc[it.start:s.cursor]) {
		return "", false
	}
	ins := it.text[s.cursor-it.start:]
	return ins, ins != "" && strings.HasPrefix(want, ins)
}

// change inserts text at the cursor as one keystroke: didChange, then the
// stand-in's answer for the new state, then VS Code's cancel-and-ask.
func (s *session) change(text string) {
	s.res.keystrokes++
	s.typed += len(text)
	s.mu.Lock()
	pos := position(s.doc, s.cursor)
	s.doc = s.doc[:s.cursor] + text + s.doc[s.cursor:]
	s.cursor += len(text)
	s.item = nil // typing hides it until the next answer
	s.version++
	end := position(s.doc, s.cursor)
	doc, cursor := s.doc, s.cursor
	s.mu.Unlock()
	s.ed.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": s.uri, "version": s.version},
		"contentChanges": []any{map[string]any{"range": map[string]any{"start": pos, "end": pos}, "text": text}},
	})
	s.script(doc, cursor)
	if s.cancel != nil {
		s.ed.Notify("$/cancelRequest", map[string]any{"id": s.cancel})
	}
	id := s.ed.NextID()
	s.cancel = id
	sent := time.Now()
	ch, err := s.ed.Send(id, "textDocument/inlineCompletion", map[string]any{
		"textDocument": map[string]any{"uri": s.uri}, "position": end, "context": map[string]any{"triggerKind": 2},
	})
	if err != nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		m, ok := <-ch
		if !ok || m.Error != nil {
			return
		}
		var l struct {
			Items []struct {
				InsertText string `json:"insertText"`
				Range      struct {
					Start struct{ Line, Character int } `json:"start"`
				} `json:"range"`
			} `json:"items"`
		}
		if json.Unmarshal(m.Result, &l) != nil || len(l.Items) == 0 {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.res.shown++
		if w := time.Since(sent); w > time.Duration(s.res.debounce)*time.Millisecond {
			s.res.waits = append(s.res.waits, benchkit.Ms(w)) // not answered from an earlier suggestion
		}
		if s.doc != doc || s.cursor != cursor {
			return // typed on meanwhile: VS Code would ask again
		}
		it := l.Items[0]
		s.item = &item{start: offset(s.doc, it.Range.Start.Line, it.Range.Start.Character), text: it.InsertText}
	}()
}

// script pushes the stand-in's answer for the document state: the rest of
// the true line, or the true next line at a line's end, with probability q.
// The rule matches the request block's cursor window: the line above and the
// cursor's line up to the marker.
func (s *session) script(doc string, cursor int) {
	if s.rng.Float64() >= s.q || s.typed >= len(s.target) {
		return // the default answers: a wrong suggestion
	}
	rest := s.target[s.typed:]
	var want string
	if rest[0] == '\n' {
		want = "\n" + indentation(rest[1:])
		rest = rest[len(want):]
	}
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	want += rest
	ls := strings.LastIndexByte(doc[:cursor], '\n') + 1
	prev := strings.LastIndexByte(doc[:max(ls-1, 0)], '\n') + 1
	s.srv.Push(modeltest.Rule{Match: doc[prev:cursor] + "<|cursor|>", Content: want,
		DelayMS: s.delay, Chunks: s.chunks, IntervalMS: s.interval})
}

// indentation returns the spaces and tabs text starts with.
func indentation(text string) string {
	return text[:len(text)-len(strings.TrimLeft(text, " \t"))]
}

// position returns the LSP position (UTF-16) of byte offset off.
func position(doc string, off int) map[string]any {
	line := strings.Count(doc[:off], "\n")
	ls := strings.LastIndexByte(doc[:off], '\n') + 1
	return map[string]any{"line": line, "character": len(utf16.Encode([]rune(doc[ls:off])))}
}

// offset returns the byte offset of an LSP position (UTF-16).
func offset(doc string, line, char int) int {
	off := 0
	for i := 0; i < line; i++ {
		j := strings.IndexByte(doc[off:], '\n')
		if j < 0 {
			return len(doc)
		}
		off += j + 1
	}
	n := 0
	for i, r := range doc[off:] {
		if n >= char || r == '\n' {
			return off + i
		}
		n += len(utf16.Encode([]rune{r}))
	}
	return len(doc)
}
