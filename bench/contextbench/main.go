// Command contextbench measures what enters a prompt: tokens, cache hit
// ratio, input cost per action and the recall of the definitions a
// selection uses, for the wave-1 selection ("before": open buffers, then
// imports, the package and recent files, whole, within 64,000 tokens) and
// the relevance-ranked one ("after": relevance.Choose, the entry point
// actions and completion use) at several budgets.
//
// Everything runs on real code, $(go env GOROOT)/src as the workspace
// folder, through the real pieces: workspace.Documents for the buffers,
// workspace.Folders (scan, symbol index), cache.Session for the layout,
// cache/cachetest's simulator for the provider's prefix cache, the real
// system message and tool definitions. Two sessions:
//
//   - replay: the scripted editing session of the cache package's replay
//     benchmark (cachetest.Script, seed 2026, 48 steps): 8 net/http files
//     open, edits, an action every step;
//   - recall: selections of whole functions and of a few lines inside them,
//     in Go's own packages, package after package, with the files holding
//     them open; ground truth from go/types: every object a selection uses
//     that is declared in another file of its package (package-level
//     names, methods, fields). A definition is in the prompt when its
//     declaration's text (a function's signature, a type's, var's or
//     const's spec; for a field or an interface method, its type's spec)
//     appears in it verbatim; "full" recall asks for a function's body too.
//     "Other packages" is the same for the objects of other packages of the
//     tree that the selection uses (methods through values, functions,
//     types, fields; not the builtins), on the same selections.
//
// With -definitions, each budget also runs "after + definitions": the same
// relevance request with Request.Definitions filled by assist.Definitions
// (the engine's code path: relevance.Lookups, verify.Definitions) from a
// verify.Verifier whose helper is the gopls on PATH, with GOROOT/src as
// its workspace folder and the pipeline's open documents as the editor's
// buffers. gopls takes GOROOT/src as it is (module "std"): it starts in a
// few seconds, locates every name of the recall session's selections and
// stays within a few hundred MB, so no copy of the tree is made. Each such
// pipeline has a helper of its own, warmed on its first selection before
// the session (asked until it answers; the warm-up is reported apart), and
// -defbound (10 s) bounds each action's look-ups so that a slow machine
// does not turn into missing answers; the actions with a partial answer or
// none are counted. Reported beside the pipelines: the look-up time per
// action (assist.Definitions, relevance.Lookups included), the names asked
// and located per action, and the helper's peak RSS (VmHWM). The prompts
// of two pipelines differ by more than their choices (what the session's
// stable part retains depends on the earlier prompts), so the recall
// session also chooses each request twice in the same state, without and
// with the definitions, and counts the ground truth in the chosen
// documents ("paired choices").
//
// Usage:
//
//	go run ./bench/contextbench [-budgets 6000,8000,12000,16000] [-only replay|recall] [-definitions [-defbound 10s]] [-v]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
	"github.com/kimi-lsp/kimi-lsp/assist/verify"
	"github.com/kimi-lsp/kimi-lsp/bench/internal/benchkit"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/relevance"
)

var (
	flagBudgets  = flag.String("budgets", "6000,8000,12000,16000", "context.maxTokens values to measure (comma-separated)")
	flagOnly     = flag.String("only", "", "run only the replay or the recall session")
	flagSeed     = flag.Uint64("seed", 2026, "seed of the scripted sessions")
	flagSteps    = flag.Int("steps", 48, "steps of the replayed editing session")
	flagPkgs     = flag.String("pkgs", strings.Join(defaultPkgs, ","), "packages of the recall session")
	flagPer      = flag.Int("per", 8, "selections per package in the recall session")
	flagSlack    = flag.Float64("slack", 1.5, "cache.Request.ContextBudget as a multiple of the budget")
	flagBlock    = flag.Int("block", 16, "cache block size of the simulated provider, in tokens")
	flagWindow   = flag.Int("window", 0, "lines around the selection repeated in the request (0: the cache package's default)")
	flagVerbose  = flag.Bool("v", false, "print each step")
	flagUnrelate = flag.Bool("unrelated", false, "recall session: also keep six large files of go/types open (173 KB)")
	flagDefs     = flag.Bool("definitions", false, "also run, at each budget, \"after + definitions\": the helper's (gopls) definitions of the selection's names ranked first (assist.Definitions)")
	flagDefBound = flag.Duration("defbound", 10*time.Second, "-definitions: verify.Bounds.Definition, the bound on one action's look-ups")
)

// defaultPkgs are the recall session's packages (go/types is kept out: the
// -unrelated buffers come from it).
var defaultPkgs = []string{"net/http", "encoding/json", "bufio", "strings", "fmt", "text/template", "archive/tar",
	"net/url", "compress/flate", "image/png", "go/printer", "regexp", "time", "log/slog", "database/sql", "mime/multipart"}

func main() {
	flag.Parse()
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "contextbench:", err)
		os.Exit(1)
	}
}

// openDoc is an open buffer of a session.
type openDoc struct {
	rel  string // relative to GOROOT/src
	text string
}

// state is the editor's state when an action is asked.
type state struct {
	at               time.Time
	open             []openDoc
	active           int
	selStart, selEnd int
	action           cachetest.ScriptAction
	diagLine         int
	truth            []truthDef // recall session only
	imported         []truthDef // recall session: those of other packages
}

// truthDef is a definition a selection uses.
type truthDef struct {
	name      string
	sig, full string
}

// pipeline builds the prompts of one session, one way.
type pipeline struct {
	name    string
	budget  int // context.maxTokens; 0 for wave 1
	root    string
	folders *workspace.Folders
	docs    *workspace.Documents
	sess    *cache.Session
	sim     *cachetest.Sim
	tools   []byte
	texts   map[workspace.URI]string
	version int32

	// totals
	steps                   int
	prompt, cached, written int64
	cost                    float64
	found, foundFull, truth int
	foundImp, truthImp      int
	build                   time.Duration

	defs *definer // -definitions: the helper's answers ranked first
}

// definer asks a pipeline's helper (gopls) for the definitions of each
// selection's names, as the engine does (assist.Definitions), and accounts
// for it.
type definer struct {
	v       *verify.Verifier
	warm    time.Duration   // from the start until the first verified answer
	lookups []time.Duration // one per action, with the warm helper
	names   int             // names asked
	located int             // names answered with a location
	// partial counts the actions where some names got no reply within the
	// bound, unverified those where the helper gave no answer at all.
	partial, unverified int
	hwmKB               int64 // the helper's peak RSS (VmHWM)
	// Paired choices: the same request, in the same session state, chosen
	// without and with the definitions; the ground truth found in the
	// chosen documents (not the prompt, whose retained part depends on the
	// earlier choices), and the actions where the definitions lost some.
	pairIndex, pairDefs, pairIndexImp, pairDefsImp, pairLost int
	pairTokensIndex, pairTokensDefs                          int
}

// pair accounts for the paired choices of st's action: index without the
// definitions, defs with them.
func (d *definer) pair(index, defs relevance.Docs, st state) {
	count := func(c relevance.Docs) (local, imp, size int) {
		var b strings.Builder
		for _, doc := range append(slices.Clone(c.Stable), c.Volatile...) {
			b.WriteString(doc.Text)
			b.WriteByte(0)
			size += len(doc.Text)
		}
		text := b.String()
		for _, t := range st.truth {
			if strings.Contains(text, t.sig) {
				local++
			}
		}
		for _, t := range st.imported {
			if strings.Contains(text, t.sig) {
				imp++
			}
		}
		return local, imp, size
	}
	li, ii, si := count(index)
	ld, id, sd := count(defs)
	d.pairIndex += li
	d.pairDefs += ld
	d.pairIndexImp += ii
	d.pairDefsImp += id
	d.pairTokensIndex += si
	d.pairTokensDefs += sd
	if ld < li || id < ii {
		d.pairLost++
		if *flagVerbose {
			fmt.Printf("    paired choice: the definitions lost: package %d → %d, other packages %d → %d (%d → %d bytes)\n", li, ld, ii, id, si, sd)
		}
	}
}

type docsBuffers struct{ d *workspace.Documents }

func (b docsBuffers) Buffer(uri workspace.URI) (string, bool) {
	s, ok := b.d.Snapshot(uri)
	if !ok {
		return "", false
	}
	return s.Text(), true
}

func newPipeline(name string, budget int, root string, toolsJSON []byte) (*pipeline, error) {
	p := &pipeline{name: name, budget: budget, root: root, docs: workspace.NewDocuments(), tools: toolsJSON, texts: map[workspace.URI]string{}}
	p.folders = workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{Buffers: docsBuffers{p.docs}, Logger: slog.New(slog.DiscardHandler)})
	if err := p.folders.Add(workspace.FileURI(root), "src"); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.folders.Ready(ctx); err != nil {
		return nil, err
	}
	var err error
	p.sess, err = cache.NewSession(cache.Config{System: assist.System, Tools: toolsJSON, WindowLines: *flagWindow, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	p.sim = cachetest.New(cachetest.Config{BlockTokens: *flagBlock, MinTokens: 1024})
	return p, nil
}

// withDefinitions gives p a helper of its own, with p's open documents as
// the editor's buffers and root as the workspace folder, and warms it on
// first's selection: it asks until the helper answers (the first call only
// starts it), and times that apart from the actions.
func (p *pipeline) withDefinitions(first state) error {
	d := &definer{}
	d.v = verify.New(verify.Options{
		Folders: func() []workspace.URI { return []workspace.URI{workspace.FileURI(p.root)} },
		Buffers: p.docs.All,
		Bounds:  verify.Bounds{Definition: *flagDefBound},
	})
	p.defs = d
	p.sync(first)
	req := p.request(first)
	begin := time.Now()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, res := assist.Definitions(ctx, d.v, relevance.Workspace(p.folders), req)
		cancel()
		if res.Verified {
			break
		}
		if res.None {
			return fmt.Errorf("definitions: no names to look up in %s", first.open[first.active].rel)
		}
		if time.Since(begin) > 5*time.Minute {
			return fmt.Errorf("definitions: the helper did not answer within 5 minutes: %s", res.Reason)
		}
		time.Sleep(200 * time.Millisecond)
	}
	d.warm = time.Since(begin)
	return nil
}

func (p *pipeline) close() {
	if p.defs != nil {
		p.defs.hwmKB = helperPeakRSS("gopls")
		p.defs.v.Close()
	}
	p.folders.Close()
}

// helperPeakRSS returns the largest VmHWM, in KB, among this process's
// children named name (the helper; 0 when none is found or /proc is
// missing).
func helperPeakRSS(name string) int64 {
	ents, _ := os.ReadDir("/proc")
	self := strconv.Itoa(os.Getpid())
	var peak int64
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var comm, ppid string
		var hwm int64
		for _, line := range strings.Split(string(b), "\n") {
			k, v, _ := strings.Cut(line, ":")
			v = strings.TrimSpace(v)
			switch k {
			case "Name":
				comm = v
			case "PPid":
				ppid = v
			case "VmHWM":
				hwm, _ = strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64)
			}
		}
		if comm == name && ppid == self {
			peak = max(peak, hwm)
		}
	}
	return peak
}

// cacheDocs lays chosen files out as the prompt cache's documents, as
// assist's task builder does.
func cacheDocs(fs []relevance.ContextFile) []cache.Document {
	var out []cache.Document
	for _, f := range fs {
		out = append(out, cache.Document{Path: f.Path, Part: f.Part, Line: f.Line, Language: f.Language, Text: f.Text,
			Version: f.Version, LastEdited: f.LastEdit})
	}
	return out
}

// request is the relevance request of st's action (after sync).
func (p *pipeline) request(st state) relevance.Request {
	uri := workspace.FileURI(filepath.Join(p.root, st.open[st.active].rel))
	snap, _ := p.docs.Snapshot(uri)
	return relevance.Request{Active: snap, SelStart: st.selStart, SelEnd: st.selEnd,
		Open: p.docs.All(), MaxTokens: p.budget, Bytes: p.sess.Estimator().Bytes, Cached: p.sess.Shown()}
}

// sync makes the open buffers those of st.
func (p *pipeline) sync(st state) {
	want := map[workspace.URI]bool{}
	for _, d := range st.open {
		uri := workspace.FileURI(filepath.Join(p.root, d.rel))
		want[uri] = true
		old, ok := p.texts[uri]
		switch {
		case !ok:
			p.version++
			p.docs.Open(uri, "go", p.version, d.text)
		case old != d.text:
			p.version++
			p.docs.Change(uri, p.version, []workspace.Change{{Text: d.text}}, workspace.UTF8)
		}
		p.texts[uri] = d.text
	}
	for uri := range p.texts {
		if !want[uri] {
			p.docs.Close(uri)
			delete(p.texts, uri)
		}
	}
}

// step builds the prompt of st, sends it to the simulated provider, and
// accounts for it.
func (p *pipeline) step(st state) error {
	p.sync(st)
	uri := workspace.FileURI(filepath.Join(p.root, st.open[st.active].rel))
	snap, _ := p.docs.Snapshot(uri)
	activePath, _ := p.folders.RelPath(filepath.Join(p.root, st.open[st.active].rel))
	active := cache.Document{Path: activePath, Language: "go", Text: snap.Text(), Version: snap.Version, LastEdited: int64(snap.Seq)}
	req := cache.Request{
		Project:     cache.Project{Name: "src", Languages: []string{"go"}},
		Active:      active.Path,
		Selection:   cache.Selection{Start: st.selStart, End: st.selEnd},
		Action:      st.action.Name,
		Instruction: st.action.Instruction,
		Now:         st.at,
	}
	if st.diagLine >= 0 {
		req.Diagnostics = []cache.Diagnostic{{StartLine: st.diagLine, EndLine: st.diagLine, Severity: cache.SeverityError, Source: "compiler", Message: "undefined: x1"}}
	}
	var lookup time.Duration
	begin := time.Now()
	if p.budget == 0 {
		req.Documents = wave1(p.folders, snap, p.docs.All())
	} else {
		rreq := p.request(st)
		if d := p.defs; d != nil {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defs, res := assist.Definitions(ctx, d.v, relevance.Workspace(p.folders), rreq)
			cancel()
			lookup = time.Since(begin)
			d.lookups = append(d.lookups, lookup)
			switch {
			case !res.Verified && !res.None:
				d.unverified++
			case res.Verified && res.Reason != "":
				d.partial++
			}
			located := 0
			for _, def := range defs {
				if len(def.Locations) > 0 {
					located++
				}
			}
			d.names += len(defs)
			d.located += located
			if *flagVerbose {
				fmt.Printf("    definitions: %d names, %d located in %v %s\n", len(defs), located, lookup.Round(time.Millisecond), res.Reason)
			}
			if *flagVerbose && os.Getenv("CONTEXTBENCH_DEFS") != "" {
				for _, def := range defs {
					var at []string
					for _, l := range def.Locations {
						lp, _ := l.URI.Path()
						rel, _ := filepath.Rel(p.root, lp)
						at = append(at, fmt.Sprintf("%s:%d", rel, l.Line+1))
					}
					fmt.Printf("      %s.%s -> %s\n", def.Qual, def.Name, strings.Join(at, " "))
				}
			}
			rreq.Definitions = defs
		}
		c := relevance.Choose(relevance.Workspace(p.folders), rreq)
		if p.defs != nil && len(st.truth) > 0 {
			p.defs.pair(relevance.Choose(relevance.Workspace(p.folders), p.request(st)), c, st)
		}
		req.Documents, req.Volatile, req.ExcerptActive = cacheDocs(c.Stable), cacheDocs(c.Volatile), c.ExcerptActive
		req.ContextBudget = int(float64(p.budget) * *flagSlack)
	}
	req.Documents = append(req.Documents, active)
	pr, err := p.sess.Build(req)
	p.build += time.Since(begin) - lookup
	if err != nil {
		return err
	}
	r := cache.Render(nil, p.tools, pr.Messages)
	pt, cached, written := p.sim.Observe(st.at, r, 5*time.Minute)
	if _, err := p.sess.Record(pr.Handle, cache.Usage{PromptTokens: pt, CachedTokens: cached, CacheWriteTokens: written}); err != nil {
		return err
	}
	price := cache.DefaultPrices()[cache.DefaultModel]
	cost := (float64(pt-cached-written)*price.Input + float64(cached)*price.CachedInput + float64(written)*price.CacheWrite5m) / 1e6
	p.steps++
	p.prompt += int64(pt)
	p.cached += int64(cached)
	p.written += int64(written)
	p.cost += cost
	found, full, foundImp := 0, 0, 0
	if len(st.truth) > 0 {
		text := string(r)
		for _, d := range st.truth {
			if strings.Contains(text, d.sig) {
				found++
			} else if *flagVerbose {
				head, _, _ := strings.Cut(d.sig, "\n")
				fmt.Printf("    missed %s in %s (first line shown: %v): %.80q\n", d.name, st.open[st.active].rel, strings.Contains(text, head), d.sig)
			}
			if strings.Contains(text, d.full) {
				full++
			}
		}
		p.truth += len(st.truth)
		p.found += found
		p.foundFull += full
		for _, d := range st.imported {
			if strings.Contains(text, d.sig) {
				foundImp++
			} else if *flagVerbose && os.Getenv("CONTEXTBENCH_IMPORTS") != "" {
				head, _, _ := strings.Cut(d.sig, "\n")
				fmt.Printf("    missed imported %s in %s (first line shown: %v): %.80q\n", d.name, st.open[st.active].rel, strings.Contains(text, head), d.sig)
			}
		}
		p.foundImp += foundImp
		p.truthImp += len(st.imported)
	}
	if *flagVerbose && os.Getenv("CONTEXTBENCH_DOCS") != "" {
		for _, d := range req.Documents {
			fmt.Printf("    %s#%s %d\n", d.Path, d.Part, d.LastEdited)
		}
		for _, d := range req.Volatile {
			fmt.Printf("    volatile %s#%s %d bytes\n", d.Path, d.Part, len(d.Text))
		}
	}
	if *flagVerbose {
		fmt.Printf("%s/%d: %s %s:%d-%d prompt %d cached %d layout %q defs %d/%d imported %d/%d vol %d diverged in %s\n", p.name, p.budget, st.action.Name, activePath,
			st.selStart, st.selEnd, pt, cached, pr.Layout, found, len(st.truth), foundImp, len(st.imported), len(req.Volatile), pr.DivergedIn)
	}
	return nil
}

func (p *pipeline) label() string {
	switch {
	case p.budget == 0:
		return "before (wave 1, 64,000)"
	case p.defs != nil:
		return fmt.Sprintf("after + definitions, %d", p.budget)
	}
	return fmt.Sprintf("after, %d", p.budget)
}

func run(w io.Writer) error {
	src, err := benchkit.GoSourceDir()
	if err != nil {
		return err
	}
	toolsJSON, err := json.Marshal(tools.ModelTools())
	if err != nil {
		return err
	}
	budgets := []int{0}
	for _, b := range strings.Split(*flagBudgets, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(b))
		if err != nil || n <= 0 {
			return fmt.Errorf("bad budget %q", b)
		}
		budgets = append(budgets, n)
	}
	price := cache.DefaultPrices()[cache.DefaultModel]
	fmt.Fprintf(w, "GOROOT/src: %s; prices per million: input %.2f, cached %.2f, 5m write %.2f; %d-token cache blocks; context budget slack %.1f\n\n",
		src, price.Input, price.CachedInput, price.CacheWrite5m, *flagBlock, *flagSlack)
	sessions := []struct {
		name  string
		steps func() ([]state, error)
	}{
		{"replay", func() ([]state, error) { return replaySession(src) }},
		{"recall", func() ([]state, error) { return recallSession(src) }},
	}
	for _, s := range sessions {
		if *flagOnly != "" && *flagOnly != s.name {
			continue
		}
		start := time.Now()
		steps, err := s.steps()
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "## %s: %d actions (made in %v)\n\n", s.name, len(steps), time.Since(start).Round(time.Millisecond))
		fmt.Fprintln(w, "| selection | mean prompt tokens | uncached per action | hit ratio | input cost per action | recall (signatures) | recall (full) | recall, other packages | mean build |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
		var withDefs []*pipeline
		for _, b := range budgets {
			for _, defs := range []bool{false, true} {
				if defs && (!*flagDefs || b == 0) {
					continue
				}
				p, err := runPipeline(s.name, b, src, toolsJSON, steps, defs)
				if err != nil {
					return err
				}
				if defs {
					withDefs = append(withDefs, p)
				}
				rec, recFull, recImp := "—", "—", "—"
				if p.truth > 0 {
					rec = fmt.Sprintf("%.3f (%d/%d)", float64(p.found)/float64(p.truth), p.found, p.truth)
					recFull = fmt.Sprintf("%.3f", float64(p.foundFull)/float64(p.truth))
				}
				if p.truthImp > 0 {
					recImp = fmt.Sprintf("%.3f (%d/%d)", float64(p.foundImp)/float64(p.truthImp), p.foundImp, p.truthImp)
				}
				fmt.Fprintf(w, "| %s | %d | %d | %.3f | $%.5f | %s | %s | %s | %v |\n", p.label(), p.prompt/int64(p.steps),
					(p.prompt-p.cached)/int64(p.steps), float64(p.cached)/float64(p.prompt), p.cost/float64(p.steps), rec, recFull, recImp,
					(p.build / time.Duration(p.steps)).Round(time.Microsecond))
			}
		}
		fmt.Fprintln(w)
		if len(withDefs) > 0 {
			fmt.Fprintf(w, "Definitions (gopls, bound %v per action; warm-up not in the look-up times):\n\n", *flagDefBound)
			fmt.Fprintln(w, "| selection | warm-up | look-up p50 | p90 | max | names per action | located per action | partial | unanswered | gopls peak RSS |")
			fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
			for _, p := range withDefs {
				d := p.defs
				l := slices.Clone(d.lookups)
				slices.Sort(l)
				q := func(f float64) time.Duration {
					return l[min(len(l)-1, int(f*float64(len(l))))].Round(100 * time.Microsecond)
				}
				fmt.Fprintf(w, "| %s | %v | %v | %v | %v | %.1f | %.1f | %d | %d | %d MB |\n", p.label(), d.warm.Round(100*time.Millisecond),
					q(0.5), q(0.9), l[len(l)-1].Round(100*time.Microsecond), float64(d.names)/float64(len(l)), float64(d.located)/float64(len(l)),
					d.partial, d.unverified, d.hwmKB/1024)
			}
			fmt.Fprintln(w)
			if withDefs[0].truth > 0 {
				fmt.Fprintln(w, "Paired choices (each action's request chosen twice in the same state, without and with the definitions; ground truth in the chosen documents):")
				fmt.Fprintln(w)
				fmt.Fprintln(w, "| budget | package: index → definitions | other packages: index → definitions | chosen bytes per action | actions where the definitions lost one |")
				fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
				for _, p := range withDefs {
					d := p.defs
					fmt.Fprintf(w, "| %d | %d → %d of %d | %d → %d of %d | %d → %d | %d |\n", p.budget, d.pairIndex, d.pairDefs, p.truth,
						d.pairIndexImp, d.pairDefsImp, p.truthImp, d.pairTokensIndex/p.steps, d.pairTokensDefs/p.steps, d.pairLost)
				}
				fmt.Fprintln(w)
			}
		}
	}
	return nil
}

// runPipeline runs steps through a new pipeline at budget, with the
// helper's definitions when defs is set.
func runPipeline(name string, budget int, src string, toolsJSON []byte, steps []state, defs bool) (*pipeline, error) {
	p, err := newPipeline(name, budget, src, toolsJSON)
	if err != nil {
		return nil, err
	}
	defer p.close()
	if defs {
		if err := p.withDefinitions(steps[0]); err != nil {
			return nil, err
		}
	}
	for _, st := range steps {
		if err := p.step(st); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// replaySession is cachetest.Script over the 8 net/http files of the cache
// package's replay benchmark, server.go active first.
func replaySession(src string) ([]state, error) {
	var docs []cachetest.ScriptDoc
	for i, n := range []string{"client.go", "cookie.go", "fs.go", "header.go", "request.go", "response.go", "server.go", "transfer.go"} {
		b, err := os.ReadFile(filepath.Join(src, "net/http", n))
		if err != nil {
			return nil, err
		}
		docs = append(docs, cachetest.ScriptDoc{Path: "net/http/" + n, Text: string(b), Version: 1, LastEdited: int64(i + 1)})
	}
	var out []state
	for _, st := range cachetest.Script(docs, 6, *flagSeed, *flagSteps, -1, time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)) {
		s := state{at: st.At, active: st.Active, selStart: st.SelStart, selEnd: st.SelEnd, action: st.Action, diagLine: st.DiagLine}
		// The least recently edited first, as an editor would have opened them.
		byEdit := slices.Clone(st.Docs)
		slices.SortStableFunc(byEdit, func(a, b cachetest.ScriptDoc) int { return int(a.LastEdited - b.LastEdited) })
		for _, d := range byEdit {
			if d.Path == st.Docs[st.Active].Path {
				s.active = len(s.open)
			}
			s.open = append(s.open, openDoc{rel: d.Path, text: d.Text})
		}
		out = append(out, s)
	}
	return out, nil
}

// recallSession makes selections in each package: whole functions of 5 to
// 60 lines, or 3 to 8 lines inside one, with their ground truth.
func recallSession(src string) ([]state, error) {
	r := rand.New(rand.NewPCG(*flagSeed, 2))
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "source", nil)
	now := time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC)
	var unrelated []openDoc
	if *flagUnrelate {
		for _, n := range []string{"call.go", "decl.go", "expr.go", "infer.go", "stmt.go", "typexpr.go"} {
			rel := "go/types/" + n
			b, err := os.ReadFile(filepath.Join(src, rel))
			if err != nil {
				return nil, err
			}
			unrelated = append(unrelated, openDoc{rel: rel, text: string(b)})
		}
	}
	var out []state
	decls := declCache{}
	for _, pkgPath := range strings.Split(*flagPkgs, ",") {
		bp, err := build.Default.Import(pkgPath, "", 0)
		if err != nil {
			return nil, err
		}
		var files []*ast.File
		srcs := map[*ast.File][]byte{}
		rels := map[*ast.File]string{}
		for _, name := range bp.GoFiles {
			full := filepath.Join(bp.Dir, name)
			b, err := os.ReadFile(full)
			if err != nil {
				return nil, err
			}
			f, err := parser.ParseFile(fset, full, b, parser.ParseComments|parser.SkipObjectResolution)
			if err != nil {
				return nil, err
			}
			files = append(files, f)
			srcs[f] = b
			rels[f] = path.Join(pkgPath, name)
		}
		info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
		conf := types.Config{Importer: imp, Error: func(error) {}}
		pkg, _ := conf.Check(pkgPath, fset, files, info)
		fileOf := map[*token.File]*ast.File{}
		for _, f := range files {
			fileOf[fset.File(f.Pos())] = f
		}
		// Candidate functions.
		type fn struct {
			file *ast.File
			decl *ast.FuncDecl
		}
		var fns []fn
		for _, f := range files {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Body != nil {
					lines := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
					if lines >= 5 && lines <= 60 {
						fns = append(fns, fn{f, fd})
					}
				}
			}
		}
		r.Shuffle(len(fns), func(i, j int) { fns[i], fns[j] = fns[j], fns[i] })
		var open []openDoc
		taken := 0
		for _, c := range fns {
			if taken == *flagPer {
				break
			}
			srcText := srcs[c.file]
			off := func(p token.Pos) int { return fset.Position(p).Offset }
			start, end := off(c.decl.Pos()), off(c.decl.End())
			if r.IntN(3) == 0 {
				// A few lines inside the body.
				body := srcText[off(c.decl.Body.Lbrace)+1 : off(c.decl.Body.Rbrace)]
				lines := strings.SplitAfter(string(body), "\n")
				if len(lines) > 6 {
					from := 1 + r.IntN(len(lines)-5)
					n := min(3+r.IntN(6), len(lines)-from)
					start = off(c.decl.Body.Lbrace) + 1 + len(strings.Join(lines[:from], ""))
					end = start + len(strings.Join(lines[from:from+n], ""))
				}
			}
			truth := usedElsewhere(fset, info, pkg, c.file, start, end, fileOf, srcs)
			if len(truth) == 0 {
				continue // nothing to recall: not a measurement
			}
			taken++
			rel := rels[c.file]
			idx := slices.IndexFunc(open, func(d openDoc) bool { return d.rel == rel })
			if idx < 0 {
				open = append(open, openDoc{rel: rel, text: string(srcText)})
				if len(open) > 6 {
					open = open[1:]
				}
				idx = len(open) - 1
			}
			now = now.Add(time.Duration(20+r.IntN(70)) * time.Second)
			st := state{at: now, open: append(slices.Clone(unrelated), open...), active: len(unrelated) + idx, selStart: start, selEnd: end,
				action: cachetest.ScriptActions[r.IntN(len(cachetest.ScriptActions))], diagLine: -1, truth: truth,
				imported: usedFromImports(fset, info, pkg, c.file, start, end, decls)}
			out = append(out, st)
		}
		now = now.Add(3 * time.Minute)
	}
	return out, nil
}

// usedElsewhere returns the definitions that src[start:end] of file uses
// and that are declared in another file of pkg.
func usedElsewhere(fset *token.FileSet, info *types.Info, pkg *types.Package, file *ast.File, start, end int,
	fileOf map[*token.File]*ast.File, srcs map[*ast.File][]byte) []truthDef {
	tf := fset.File(file.Pos())
	seen := map[types.Object]bool{}
	var out []truthDef
	for id, obj := range info.Uses {
		if fset.File(id.Pos()) != tf {
			continue
		}
		o := tf.Offset(id.Pos())
		if o < start || o >= end || obj == nil || obj.Pkg() != pkg || seen[obj] {
			continue
		}
		declFile := fset.File(obj.Pos())
		if declFile == nil || declFile == tf {
			continue
		}
		df := fileOf[declFile]
		if df == nil {
			continue
		}
		switch x := obj.(type) {
		case *types.Func:
		case *types.Var:
			if !x.IsField() && x.Parent() != pkg.Scope() {
				continue
			}
		case *types.TypeName, *types.Const:
			if obj.Parent() != pkg.Scope() {
				continue
			}
		default:
			continue
		}
		seen[obj] = true
		if d, ok := declText(fset, df, srcs[df], obj.Pos()); ok {
			d.name = obj.Name()
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b truthDef) int { return strings.Compare(a.name, b.name) })
	return out
}

// usedFromImports returns the definitions that src[start:end] of file
// uses and that other packages of the tree declare (not the builtins, not
// unsafe's).
func usedFromImports(fset *token.FileSet, info *types.Info, pkg *types.Package, file *ast.File, start, end int, decls declCache) []truthDef {
	tf := fset.File(file.Pos())
	seen := map[types.Object]bool{}
	var out []truthDef
	for id, obj := range info.Uses {
		if fset.File(id.Pos()) != tf {
			continue
		}
		o := tf.Offset(id.Pos())
		if o < start || o >= end || obj == nil || obj.Pkg() == nil || obj.Pkg() == pkg || seen[obj] || !obj.Pos().IsValid() {
			continue
		}
		switch x := obj.(type) {
		case *types.Func:
		case *types.Var:
			if !x.IsField() && x.Parent() != x.Pkg().Scope() {
				continue
			}
		case *types.TypeName, *types.Const:
			if obj.Parent() != obj.Pkg().Scope() {
				continue
			}
		default:
			continue
		}
		seen[obj] = true
		pos := fset.Position(obj.Pos())
		if d, ok := decls.at(pos.Filename, pos.Offset); ok {
			d.name = obj.Pkg().Name() + "." + obj.Name()
			out = append(out, d)
		}
	}
	slices.SortFunc(out, func(a, b truthDef) int { return strings.Compare(a.name, b.name) })
	return out
}

// declCache parses the files of other packages, once each.
type declCache map[string]*parsedFile

type parsedFile struct {
	fset *token.FileSet
	file *ast.File
	src  []byte
}

// at returns the text of the top-level declaration at offset of filename.
func (c declCache) at(filename string, offset int) (truthDef, bool) {
	pf, ok := c[filename]
	if !ok {
		if b, err := os.ReadFile(filename); err == nil {
			fs := token.NewFileSet()
			if f, err := parser.ParseFile(fs, filename, b, parser.ParseComments|parser.SkipObjectResolution); err == nil {
				pf = &parsedFile{fs, f, b}
			}
		}
		c[filename] = pf
	}
	if pf == nil {
		return truthDef{}, false
	}
	return declText(pf.fset, pf.file, pf.src, pf.fset.File(pf.file.Pos()).Pos(offset))
}

// declText returns the text of the top-level declaration of f holding pos:
// a function's signature (and whole text), a spec's text.
func declText(fset *token.FileSet, f *ast.File, src []byte, pos token.Pos) (truthDef, bool) {
	off := func(p token.Pos) int { return fset.Position(p).Offset }
	for _, d := range f.Decls {
		if pos < d.Pos() || pos >= d.End() {
			continue
		}
		switch x := d.(type) {
		case *ast.FuncDecl:
			full := string(src[off(x.Pos()):off(x.End())])
			if x.Body == nil {
				return truthDef{sig: full, full: full}, true
			}
			return truthDef{sig: string(src[off(x.Pos()):off(x.Body.Lbrace)]), full: full}, true
		case *ast.GenDecl:
			for _, s := range x.Specs {
				if pos >= s.Pos() && pos < s.End() {
					text := string(src[off(s.Pos()):off(s.End())])
					return truthDef{sig: text, full: text}, true
				}
			}
		}
	}
	return truthDef{}, false
}

// wave1 is the context selection of wave 1, kept here to measure against:
// open buffers (most recently edited first), then the files of the active
// file's package (tests last; imports within its module, which for Go's
// own tree, module "std", were never resolved), each whole, while they fit
// 64,000 tokens at 3.2 bytes per token; files on disk first by path, then
// open buffers least recently edited first.
func wave1(f *workspace.Folders, active *workspace.Snapshot, open []*workspace.Snapshot) []cache.Document {
	budget := 64000
	cost := func(path, text string) int {
		return int(math.Ceil(float64(len(text))/3.2)) + int(math.Ceil(float64(len(path))/3.2)) + 8
	}
	taken := map[workspace.URI]bool{active.URI: true}
	var disk, bufs []cache.Document
	sorted := slices.Clone(open)
	slices.SortStableFunc(sorted, func(a, b *workspace.Snapshot) int { return int(int64(b.Seq) - int64(a.Seq)) })
	for _, s := range sorted {
		if taken[s.URI] {
			continue
		}
		p, _ := s.URI.Path()
		rel, ok := f.RelPath(p)
		if !ok {
			continue
		}
		if c := cost(rel, s.Text()); c <= budget {
			budget -= c
			taken[s.URI] = true
			bufs = append(bufs, cache.Document{Path: rel, Language: "go", Text: s.Text(), Version: s.Version, LastEdited: int64(s.Seq)})
		}
	}
	ap, _ := active.URI.Path()
	dir := filepath.Dir(ap)
	ents, _ := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
			names = append(names, e.Name())
		}
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), "_test.go") {
			names = append(names, e.Name())
		}
	}
	if len(names) > 24 {
		names = names[:24]
	}
	for _, n := range names {
		full := filepath.Join(dir, n)
		uri := workspace.FileURI(full)
		if taken[uri] {
			continue
		}
		file, err := f.ReadFile(full)
		if err != nil {
			continue
		}
		if c := cost(file.Path, file.Text); c <= budget {
			budget -= c
			taken[uri] = true
			disk = append(disk, cache.Document{Path: file.Path, Language: "go", Text: file.Text})
		}
	}
	slices.SortFunc(disk, func(a, b cache.Document) int { return strings.Compare(a.Path, b.Path) })
	slices.SortStableFunc(bufs, func(a, b cache.Document) int { return int(a.LastEdited - b.LastEdited) })
	return append(disk, bufs...)
}
