package complete

import (
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/relevance"
)

// This file is the prompt layout every as-you-type surface shares (the
// package doc's "Prompts the provider's cache serves"): a cache.Session per
// document with the surface's constant system message, the window of the
// active file around the cursor, the related snippets chosen with it, the
// session's append-only edit log, and the request block. A surface passes
// what its prompt differs in as a promptSpec.

// layout is what a document's prompts show while it lasts: the window of
// the active file, or its pages (pages.go), and the related snippets.
type layout struct {
	win     window
	pages   *paged // nil: the window
	related []cache.Document
	project cache.Project
}

// fits reports whether l suits a prompt at in (else one is laid out
// afresh): its window still suits the cursor, or its pages can show what
// the cursor needs within the window's bytes.
func (l *layout) fits(in promptInput, spec promptSpec) bool {
	size := splitBudget(spec.budgetTokens).windowBytes(l.relatedBytes())
	if l.pages != nil {
		return l.pages.fits(in.doc, in.changeStart(), in.cursor, size, spec.above)
	}
	return l.win.fits(in.doc, in.cursor, size)
}

// newLayout lays in's file out with the related snippets: in pages when
// the spec asks for them and the file is larger than the window, else in
// a window around the cursor.
func newLayout(in promptInput, spec promptSpec, related []cache.Document, reset bool) *layout {
	rb := 0
	for _, r := range related {
		rb += len(r.Text)
	}
	size := splitBudget(spec.budgetTokens).windowBytes(rb)
	if spec.paged && in.doc.Len() > size {
		if pg := choosePages(in.doc, in.changeStart(), in.cursor, size, spec.above, reset); pg != nil {
			return &layout{pages: pg, related: related, project: pagedProject(spec.lead, in.project, in.path)}
		}
	}
	w := chooseWindow(in.doc, in.cursor, size, spec.above)
	return &layout{win: w, related: related, project: projectFor(spec.lead, in.project, in.path, w)}
}

// relatedBytes returns the size of l's related snippets (0 for no layout).
func (l *layout) relatedBytes() int {
	n := 0
	if l != nil {
		for _, r := range l.related {
			n += len(r.Text)
		}
	}
	return n
}

// promptSpec is what one surface's prompts differ in.
type promptSpec struct {
	// surface names it: its system message, its request block's action,
	// its budget and record names.
	surface Surface
	// session names the settings a session is made with: when it changes,
	// a document's next prompt starts a new session and layout.
	session string
	// model and effort are the request's; budgetTokens bounds the prompt
	// (the surface's maxContextTokens), answerTokens the answer.
	model        string
	effort       config.Effort
	budgetTokens int
	answerTokens int
	// windowLines is how many lines around the cursor the request block
	// repeats (cache.Config.WindowLines); above is the share of the
	// file's window above the cursor (chooseWindow).
	windowLines int
	above       float64
	// paged shows a file larger than the window in pages (pages.go,
	// next edits) instead of a window.
	paged bool
	// lead starts the project block ("Inline completion in"); what names
	// the prompt in an error ("completion").
	lead, what string
}

// promptInput is where a prompt is asked for.
type promptInput struct {
	path, language, project string
	doc                     *workspace.Snapshot
	cursor                  int
	// base, when hasBase is set, is an earlier text of doc whose part the
	// window shows is the active document's cache.Document.Base (next
	// edits' edit log, editlog.go).
	base    string
	hasBase bool
	// from, when hasFrom is set, is where the change of the burst that
	// asks begins in doc (at most cursor): a paged layout shows it all.
	from    int
	hasFrom bool
}

// changeStart is where in's burst's change begins: from, or the cursor.
func (in promptInput) changeStart() int {
	if in.hasFrom {
		return min(in.from, in.cursor)
	}
	return in.cursor
}

// docPrompt is one document's prompt state in one surface: its cache
// session, the settings it was made with, and its layout. Precondition
// for every field and method: the owning surface's lock is held.
type docPrompt struct {
	sess   *cache.Session
	sessID string
	layout *layout
}

// needsLayout reports whether p's next prompt at in lays the file out
// afresh with new related snippets (chooseRelated): no layout yet, new
// settings, or a window that no longer suits the cursor. A reset of pages
// keeps its layout's snippets (D103).
func (p *docPrompt) needsLayout(in promptInput, spec promptSpec) bool {
	return p.layout == nil || p.sessID != spec.session || p.layout.pages == nil && !p.layout.fits(in, spec)
}

// retire drops p's session and layout, adding the session's figures to
// retired.
func (p *docPrompt) retire(retired *cache.Stats) {
	if p.sess != nil {
		addStats(retired, p.sess.Stats())
	}
	p.sess, p.sessID, p.layout = nil, "", nil
}

// relatedFor returns the related snippets in's prompt needs: those of a
// new layout when p's next prompt lays the file out afresh (needsLayout),
// else nil (the layout keeps its own). mu is the owning surface's lock,
// held to read p only: the ranking runs outside it.
func relatedFor(mu *sync.Mutex, p *docPrompt, folders *workspace.Folders, open []*workspace.Snapshot, in promptInput, spec promptSpec) []cache.Document {
	mu.Lock()
	relayout := p.needsLayout(in, spec)
	mu.Unlock()
	if !relayout {
		return nil
	}
	return chooseRelated(folders, open, in, spec)
}

// chooseRelated returns the related snippets of a new layout at in
// (relevance.Choose: the definitions the code around the cursor uses, the
// ranking actions use too), leaving out what the widest window shows; nil
// without folders. Call it outside every lock: it takes milliseconds.
func chooseRelated(folders *workspace.Folders, open []*workspace.Snapshot, in promptInput, spec promptSpec) []cache.Document {
	if folders == nil {
		return nil
	}
	b := splitBudget(spec.budgetTokens)
	w := chooseWindow(in.doc, in.cursor, b.windowBytes(0), spec.above)
	start, end := w.bounds(in.doc)
	return fitRelated(relevance.Choose(relevance.Workspace(folders), relevance.Request{
		Active: in.doc, SelStart: in.cursor, SelEnd: in.cursor, Snippets: true, ShownStart: start, ShownEnd: end,
		Open: open, MaxTokens: b.relatedTokens, Bytes: cache.Estimator{}.Bytes,
	}).Stable, in.path, b.relatedTokens)
}

// fitRelated keeps the related documents, most relevant first, that fit
// in tokens, and gives them LastEdited values that keep that order
// reversed in the prompt (the most relevant nearest the active file).
func fitRelated(docs []relevance.ContextFile, active string, tokens int) []cache.Document {
	var out []cache.Document
	left := float64(tokens) * bytesPerToken
	for _, f := range docs {
		same := func(o cache.Document) bool { return o.Path == f.Path && o.Part == f.Part }
		if f.Path == active && f.Part == "" || float64(len(f.Text)) > left || slices.ContainsFunc(out, same) {
			continue
		}
		left -= float64(len(f.Text))
		out = append(out, cache.Document{Path: f.Path, Part: f.Part, Line: f.Line, Language: f.Language, Text: f.Text,
			Version: f.Version, LastEdited: f.LastEdit})
	}
	for i := range out {
		out[i].LastEdited = int64(len(out) - 1 - i)
	}
	return out
}

// build lays out in's prompt in p's session: a new session when the
// settings changed (the old one's figures go to retired), a new layout
// with related when needsLayout said so, then the window's text, the edit
// log and the request block, and the request to send.
func (p *docPrompt) build(in promptInput, cfg config.Config, spec promptSpec, related []cache.Document, retired *cache.Stats, log *slog.Logger) (*job, error) {
	b := splitBudget(spec.budgetTokens)
	relayout := p.layout == nil || !p.layout.fits(in, spec)
	reset := relayout && p.layout != nil && p.layout.pages != nil
	if reset {
		// A reset of the pages (D103): a new session, so that the pages
		// shown so far go; the related snippets stay, and with them the
		// prefix the provider has cached (the system message, the project
		// block and the snippets are the same bytes).
		if related == nil {
			related = p.layout.related
		}
		p.retire(retired)
	}
	if p.sess == nil || p.sessID != spec.session {
		s, err := cache.NewSession(cache.Config{
			System:       spec.surface.System,
			Model:        spec.model,
			Prices:       provider.Prices(cfg),
			TTL:          cfg.CacheTTLDuration(),
			BudgetTokens: spec.budgetTokens,
			MaxLogTokens: b.logTokens,
			WindowLines:  spec.windowLines,
			WindowBytes:  tailBytes,
			Logger:       log,
			// A page appended goes after the edit log (D106).
			LateInLog: spec.paged,
		})
		if err != nil {
			return nil, err
		}
		p.retire(retired)
		p.sess, p.sessID = s, spec.session
	}
	if relayout || p.layout == nil {
		p.layout = newLayout(in, spec, related, reset)
	}
	pr, err := p.sess.Build(p.request(in, spec))
	if err != nil {
		return nil, fmt.Errorf("building the %s prompt: %w", spec.what, err)
	}
	effort, _ := config.EffortFor(spec.model, spec.effort) // kimi-k3: max only
	key, _ := cfg.Key()
	return &job{
		surface: spec.surface, usd: provider.Estimate(cfg, spec.model, pr, spec.answerTokens),
		call: &provider.Call{Surface: spec.surface.Record, Files: provider.Held(pr), Key: key},
		key:  key, sess: p.sess, prompt: pr,
		req: &model.Request{
			Model: spec.model, Messages: provider.Messages(pr.Messages),
			ReasoningEffort:     string(effort),
			MaxCompletionTokens: spec.answerTokens,
			PromptCache:         model.ImplicitCache(cfg.CacheTTL),
		},
	}, nil
}

// request is the cache request of p's layout at in: the related snippets
// and the window of the active file, or its pages with the whole file
// serving the request block (cache.Request.ExcerptActive).
func (p *docPrompt) request(in promptInput, spec promptSpec) cache.Request {
	l := p.layout
	req := cache.Request{Project: l.project, Active: in.path, Action: spec.surface.Action, Model: spec.model}
	if l.pages != nil {
		size := splitBudget(spec.budgetTokens).windowBytes(l.relatedBytes())
		req.Documents = append(slices.Clip(l.related), l.pages.documents(in, size, spec.above, len(l.related))...)
		req.Documents = append(req.Documents, cache.Document{Path: in.path, Language: in.language, Text: in.doc.Text(), Version: in.doc.Version})
		req.ExcerptActive = true
		req.Selection = cache.Selection{Start: in.cursor, End: in.cursor}
		return req
	}
	start, end := l.win.bounds(in.doc)
	active := cache.Document{
		Path: in.path, Language: in.language, Text: in.doc.Slice(start, end),
		Version: in.doc.Version, LastEdited: int64(len(l.related)),
	}
	if in.hasBase {
		active.Base, active.HasBase = baseWindow(in.base, in.doc.Text(), start, end), true
	}
	req.Documents = append(slices.Clip(l.related), active)
	at := in.cursor - start
	req.Selection = cache.Selection{Start: at, End: at}
	return req
}
