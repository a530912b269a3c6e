package cache

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Defaults used where a Config field is zero.
const (
	DefaultModel         = "kimi-k3.1-pro"
	DefaultTTL           = 5 * time.Minute
	DefaultBudgetTokens  = 128_000
	DefaultCharsPerToken = 3.2
	// DefaultBlockTokens and DefaultMinCacheTokens are what the tracker
	// assumes of the provider's cache: 256-token blocks, no caching below
	// 1024 tokens (the provider does not publish them; predictions are
	// conservative with these).
	DefaultBlockTokens    = 256
	DefaultMinCacheTokens = 1024
	// DefaultMaxLogTokens is the edit log size (estimated tokens) past which
	// the edited files are re-snapshotted; chosen by the replay benchmark
	// (see the package comment and bench/README.md).
	DefaultMaxLogTokens = 4096
	// DefaultWindowLines is how many lines around the selection the tail
	// repeats: enough to place the markers, the code around being shown
	// above (the file, or the declaration around the selection). 5 rather
	// than 20 saves about 400 uncached tokens a request (bench/README.md).
	DefaultWindowLines = 5
	// DefaultWindowBytes bounds the window on each side of the selection,
	// in bytes: lines longer than that (a minified file, a one-line JSON
	// document) are cut there, so that the tail never repeats a huge line.
	DefaultWindowBytes = 2048
	// maxWindowSelectionLines and maxWindowSelectionBytes: a longer
	// selection is not repeated in the tail, only named by its lines (the
	// text is in the prefix already).
	maxWindowSelectionLines = 400
	maxWindowSelectionBytes = 64 << 10
	// trimTarget is the share of the budget a trim brings the estimate down
	// to, so that trimming happens in large steps and rarely.
	trimTarget = 0.75
	// maxPending bounds the prompts awaiting Record.
	maxPending = 256
)

// Config configures a Session. The zero value is usable.
type Config struct {
	// System is the system message; empty means DefaultSystem. It must be
	// the same in every request of the session (it is the first thing the
	// cache keys on): no dates, paths or ids.
	System string
	// Tools is the tool definitions exactly as the caller sends them (say,
	// the JSON of the request's "tools" array), constant for the session.
	// Providers render them before the messages, so the Session counts them
	// in estimates and predictions; it does not put them in Messages.
	Tools []byte
	// Model is the default model (for prices); empty means DefaultModel.
	Model string
	// Prices is the price table; nil means DefaultPrices().
	Prices Prices
	// TTL is the cache lifetime requested: 5m (the default) or 1h.
	TTL time.Duration
	// BudgetTokens bounds the estimated prompt size; past it, whole
	// segments are dropped from the end of the stable part.
	BudgetTokens int
	// CharsPerToken is the offline estimate before any usage is recorded;
	// zero means DefaultCharsPerToken.
	CharsPerToken float64
	// BlockTokens and MinCacheTokens describe the provider's cache to the
	// tracker; zero means the defaults.
	BlockTokens, MinCacheTokens int
	// MaxLogTokens is the edit log size that triggers a rebase; zero means
	// DefaultMaxLogTokens, negative means never (rebase only when cold).
	MaxLogTokens int
	// WindowLines is the number of lines around the selection repeated in
	// the tail; zero means DefaultWindowLines, negative means none.
	WindowLines int
	// WindowBytes bounds the window on each side of the selection, in
	// bytes (lines longer than that are cut); zero means
	// DefaultWindowBytes.
	WindowBytes int
	// CountTokens, when set, counts tokens exactly (a test tokenizer); the
	// tracker then predicts with it instead of the estimate. It is slow on
	// large prompts: for tests and benchmarks.
	CountTokens func([]byte) int
	// Logger receives debug logs (layout breaks, unexpected misses); nil
	// means slog.Default().
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// LateInLog places a document that joins the session after its layout
	// in the edit log, after the blocks logged so far, instead of after
	// the stable part's documents: the request then writes that document,
	// its edits and the request block, not the whole log again (a next
	// edit's pages, D106). The next rebase, trim or relayout moves such
	// documents into the stable part.
	LateInLog bool
}

// ErrUnknownHandle is returned by Record for a handle that was never built,
// was already recorded, or was dropped because too many were pending.
var ErrUnknownHandle = errors.New("unknown or already recorded prompt handle")

// fileSeg is one file, or one snippet of a file, of the stable part.
type fileSeg struct {
	path, lang string
	part       string // "" for a whole file
	line       int    // a snippet's first line
	// snap is the text shown in the file block; cur is the text the
	// prompt conveys now (snap with this file's edit blocks applied).
	snap, cur string
	header    string // "<file ...>\n"
	// lastEdited is the document's LastEdited when last seen.
	lastEdited int64
	logged     bool // the edit log has blocks for this file
	logBytes   int  // the size of those blocks
	// prev is the text before the log's block for this file that may be
	// replaced (hasPrev), numbered lastSeq.
	prev    string
	hasPrev bool
	lastSeq int
	gone    bool // no longer among the request's documents
	// inLog: the file block is in the edit log (Config.LateInLog), not in
	// the stable context.
	inLog bool
}

// docKey identifies a document of the stable part: its path and part.
func docKey(path, part string) string {
	if part == "" {
		return path
	}
	return path + "#" + part
}

func (f *fileSeg) key() string { return docKey(f.path, f.part) }

// isActive reports whether f is the whole active file.
func (f *fileSeg) isActive(active string) bool { return f.path == active && f.part == "" }

const fileFooter = "\n</file>\n\n"

// logBlock locates the edit block of a file in the edit log, or the file
// block of a document placed in the log (doc, Config.LateInLog).
type logBlock struct {
	key        string
	start, end int
	doc        bool
}

// mark ends a named segment of the context message at offset end.
type mark struct {
	end  int
	name string
}

// pending is a built prompt awaiting its usage.
type pending struct {
	model     string
	ttl       time.Duration
	predicted int
	raw       float64 // uncorrected token estimate
	diverged  int
	where     string
	near      string
}

// Session builds the prompts of one editing session and accounts for them.
// It is safe for concurrent use; Build calls are serialised.
type Session struct {
	system   string
	tools    []byte
	model    string
	prices   Prices
	ttl      time.Duration
	budget   int
	maxLog   int
	window   int
	winBytes int // the window's bound on each side of the selection
	count    func([]byte) int
	log      *slog.Logger
	now      func() time.Time
	overhead int // bytes of system message and tools, rendered

	mu sync.Mutex
	// layout
	projectBlock string
	order        []*fileSeg
	byPath       map[string]*fileSeg // by docKey
	excluded     map[string]bool     // docKeys trimmed out until the next relayout
	editLog      []byte
	logBlocks    []logBlock // where each file's blocks are in editLog
	lateInLog    bool
	lateBytes    int // bytes of the file blocks in editLog (not edits)
	editSeq      int
	context      string // the stable user message, rendered from the above
	marks        []mark
	dirty        bool
	last         time.Time     // time of the previous Build
	lastTTL      time.Duration // the cache lifetime that Build asked for
	prev         []Message
	prevGen      int
	volLen       int // bytes of the volatile context in the last message
	// estimation and tracking
	est   Estimator
	track tracker
	// accounting
	nextHandle Handle
	pend       map[Handle]pending
	pendOrder  []Handle
	stats      Stats
}

// NewSession returns a Session for cfg, or an error for a bad setting.
func NewSession(cfg Config) (*Session, error) {
	s := &Session{
		system:    cmp.Or(cfg.System, DefaultSystem),
		tools:     slices.Clone(cfg.Tools),
		model:     cmp.Or(cfg.Model, DefaultModel),
		prices:    cfg.Prices,
		ttl:       cmp.Or(cfg.TTL, DefaultTTL),
		budget:    cmp.Or(cfg.BudgetTokens, DefaultBudgetTokens),
		maxLog:    cmp.Or(cfg.MaxLogTokens, DefaultMaxLogTokens),
		window:    cmp.Or(cfg.WindowLines, DefaultWindowLines),
		winBytes:  cmp.Or(max(cfg.WindowBytes, 0), DefaultWindowBytes),
		lateInLog: cfg.LateInLog,
		count:     cfg.CountTokens,
		log:       cfg.Logger,
		now:       cfg.Now,
		byPath:    make(map[string]*fileSeg),
		excluded:  make(map[string]bool),
		pend:      make(map[Handle]pending),
		est:       Estimator{charsPerToken: cmp.Or(cfg.CharsPerToken, DefaultCharsPerToken), ratio: 1, budgetRatio: 1},
		track: tracker{
			block: cmp.Or(cfg.BlockTokens, DefaultBlockTokens),
			min:   cmp.Or(cfg.MinCacheTokens, DefaultMinCacheTokens),
		},
	}
	if s.prices == nil {
		s.prices = DefaultPrices()
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	switch {
	case s.ttl != 5*time.Minute && s.ttl != time.Hour:
		return nil, fmt.Errorf("cache: ttl %v not supported: use 5m or 1h", s.ttl)
	case s.budget < 0:
		return nil, fmt.Errorf("cache: negative token budget %d", s.budget)
	case s.est.charsPerToken < 0.5 || s.est.charsPerToken > 16:
		return nil, fmt.Errorf("cache: chars per token %v out of range [0.5, 16]", s.est.charsPerToken)
	case s.track.block < 0 || s.track.min < 0:
		return nil, fmt.Errorf("cache: negative block size or minimum")
	}
	s.overhead = renderedLen(s.tools, []Message{{Role: "system", Content: s.system}})
	return s, nil
}

// TTL returns the cache lifetime the session's requests should ask for.
func (s *Session) TTL() time.Duration { return s.ttl }

// Prompt is a built prompt.
type Prompt struct {
	// Messages are the system message, the stable context, and the edit
	// log with the request, in this order.
	Messages []Message
	// Model is the request's model.
	Model string
	// TTL is the cache lifetime to ask for (prompt_cache_options.ttl):
	// Request.TTL, else Config.TTL.
	TTL time.Duration
	// EstimatedTokens estimates the prompt tokens, tools included.
	EstimatedTokens int
	// PredictedCachedTokens is how many of them the provider should serve
	// from its cache, given what this session sent before.
	PredictedCachedTokens int
	// Diverged is the offset in the rendering (see Render) of the first
	// byte that differs from the session's previous prompt, or -1 for the
	// first prompt; DivergedIn names the segment it falls in ("system",
	// "project", "file a/b.go", "context", "edits", "request").
	Diverged   int
	DivergedIn string
	// Layout says why the stable part was rewritten in this build, or is
	// empty: "start", "cold" (idle past the TTL), "project", "rebase"
	// (edit log past its limit), "trim" (over budget), "open" (new file
	// appended), "close" (closed files dropped).
	Layout string
	// Trimmed lists the paths the budget dropped in this build.
	Trimmed []string
	// OverBudget is set when the active file and the request alone exceed
	// the budget (they are never dropped).
	OverBudget bool
	// Handle identifies the prompt to Record.
	Handle Handle
	// Files are the documents whose text the prompt holds, in the order
	// it shows them: every file block of the stable part — those an
	// earlier request placed there and this one no longer asks for
	// included, as they are sent again (served from the cache) — then the
	// volatile documents the request block shows. Bytes is the document's
	// text there: its block and its edit-log blocks. What left the
	// machine (the request record) is listed from it.
	Files []Shown
}

// Shown is one document a prompt holds, and the bytes of its text there.
type Shown struct {
	Path, Part string
	Bytes      int
}

// Build lays out the prompt for req, updating the session's layout: new
// documents are appended, edits to documents already shown are appended to
// the edit log, and the log is folded back into fresh snapshots when it
// grows past its limit or when the cache has gone cold anyway.
func (s *Session) Build(req Request) (*Prompt, error) {
	active, err := validate(req)
	if err != nil {
		return nil, err
	}
	now := req.Now
	if now.IsZero() {
		now = s.now()
	}
	model := cmp.Or(req.Model, s.model)
	ttl := cmp.Or(req.TTL, s.ttl)
	if ttl != 5*time.Minute && ttl != time.Hour {
		return nil, fmt.Errorf("cache: ttl %v not supported: use 5m or 1h", ttl)
	}

	s.mu.Lock()
	defer s.mu.Unlock()

	reasons, relaid := s.layoutLocked(req, now)
	volDocs := s.volatileLocked(req.Volatile, len(reasons) > 0)
	vol := renderVolatile(volDocs)
	tail := s.renderTail(req, active)
	trimmed, over, reasons := s.fitBudgetLocked(req, len(active.Text), len(vol), len(tail), relaid, reasons)
	if s.dirty {
		s.renderContextLocked()
	}

	msgs := make([]Message, 0, 3)
	msgs = append(msgs, Message{Role: "system", Content: s.system}, Message{Role: "user", Content: s.context})
	// The volatile context comes before the edit log: it changes with
	// the selection's area, the log with every edit, and requests on one
	// area keep it cached up to the log's new blocks.
	last := vol + string(s.editLog) + tail
	s.volLen = len(vol)
	msgs = append(msgs, Message{Role: "user", Content: last})

	p := &Prompt{
		Messages:   slices.Clone(msgs), // the caller may modify its copy
		Model:      model,
		TTL:        ttl,
		Diverged:   -1,
		Layout:     strings.Join(reasons, ","),
		Trimmed:    trimmed,
		OverBudget: over,
	}
	for _, f := range s.order {
		p.Files = append(p.Files, Shown{Path: f.path, Part: f.part, Bytes: len(f.snap) + f.logBytes})
	}
	for _, d := range volDocs {
		p.Files = append(p.Files, Shown{Path: d.Path, Part: d.Part, Bytes: len(d.Text)})
	}
	total := renderedLen(s.tools, msgs)
	raw := s.est.raw(total)
	p.EstimatedTokens = s.est.tokens(total)

	s.predictLocked(p, now, msgs)
	where, near := s.divergenceLocked(p, msgs)
	s.prev, s.prevGen = msgs, s.track.gen
	s.last, s.lastTTL = now, ttl
	s.recordLocked(p, pending{model: model, ttl: ttl, raw: raw, where: where, near: near})
	return p, nil
}

// layoutLocked brings the stable part up to date for req, sent at now: it
// is laid out afresh at the session's start, when the cache has gone cold
// or the project block changed (relaid), else the documents are synced
// into it; an edit log grown past its limit is then folded back. It
// returns why the stable prefix was rewritten, if it was.
//
// Precondition: s.mu is held.
func (s *Session) layoutLocked(req Request, now time.Time) (reasons []string, relaid bool) {
	project := renderProject(req.Project)
	switch {
	case s.last.IsZero():
		reasons = append(reasons, "start")
	case now.Sub(s.last) >= s.lastTTL: // what the previous request asked the provider to keep
		reasons = append(reasons, "cold")
	case project != s.projectBlock:
		reasons = append(reasons, "project")
	}
	relaid = len(reasons) > 0
	if relaid {
		// Nothing after the point of change is cached: lay everything
		// out afresh, edits folded in.
		s.relayoutLocked(req, project)
	} else if r := s.syncLocked(req); r != "" {
		reasons = append(reasons, r)
	}
	if edits := len(s.editLog) - s.lateBytes; s.maxLog > 0 && edits > 0 && s.est.tokens(edits) > s.maxLog {
		// Fold until at most half the limit is left, so that rebases are
		// rare, and from the end of the stable part, so that they are cheap.
		s.rebaseLocked(req, int(float64(s.maxLog/2)*s.est.charsPerToken/s.est.ratio))
		reasons = append(reasons, "rebase")
	}
	return reasons, relaid
}

// fitBudgetLocked keeps the prompt inside its budget — the session's, or
// req.ContextBudget tokens beside what the request itself shows (the
// active file's activeLen bytes unless excerpted, the volatile block's
// volLen, the tail's tailLen): it drops documents no longer asked for, then
// trims the others. It returns the paths trimmed, whether the prompt is
// still over budget, and reasons with what it did appended.
//
// Precondition: s.mu is held.
func (s *Session) fitBudgetLocked(req Request, activeLen, volLen, tailLen int, relaid bool, reasons []string) (trimmed []string, over bool, _ []string) {
	budget := s.budget
	if req.ContextBudget > 0 {
		shown := activeLen
		if req.ExcerptActive {
			shown = 0
		}
		budget = req.ContextBudget + s.est.tokens(s.overhead+len(s.projectBlock)+shown+volLen+tailLen)
	}
	extra := volLen + tailLen
	if budget <= 0 || s.estimateLocked(extra) <= budget {
		return nil, false, reasons
	}
	others := slices.ContainsFunc(s.order, func(f *fileSeg) bool { return f.path != req.Active })
	if others && !relaid && req.ContextBudget > 0 && slices.ContainsFunc(s.order, func(f *fileSeg) bool { return f.gone }) {
		// Documents no longer asked for fill the budget: drop them,
		// the last placed first, as few as bring the estimate to
		// trimTarget of the budget (dropping one rewrites what follows
		// it). Their edit blocks go with them: fold the log first.
		if len(s.editLog) > 0 {
			s.rebaseLocked(req, 0)
		}
		s.dropGoneFromEndLocked(int(float64(budget)*trimTarget), extra)
		reasons = append(reasons, "drop")
	}
	if s.estimateLocked(extra) <= budget {
		return nil, false, reasons
	}
	if !others {
		return nil, true, reasons // the active file and the request alone
	}
	// Trimming rewrites the end of the stable part: fold the log first, as
	// the files it edits may go.
	if len(s.editLog) > 0 {
		s.rebaseLocked(req, 0)
	}
	trimmed, over = s.trimLocked(req.Active, budget, extra, relaid)
	return trimmed, over, append(reasons, "trim")
}

// predictLocked sets p.PredictedCachedTokens: the tokens of msgs the
// provider's cache should serve at now, by the prefixes sent before (with
// the session's exact counter when it has one, else the estimate), and
// remembers msgs as sent when the prompt is long enough to be cached.
//
// Precondition: s.mu is held.
func (s *Session) predictLocked(p *Prompt, now time.Time, msgs []Message) {
	shared := s.track.predict(now, p.Model, len(s.tools), msgs)
	var totalTokens, sharedTokens int
	if s.count != nil {
		r := Render(nil, s.tools, msgs)
		totalTokens = s.count(r)
		if shared > 0 {
			sharedTokens = s.count(r[:shared])
			if shared < len(r) {
				sharedTokens-- // the last token may end past the shared bytes
			}
		}
	} else {
		totalTokens = p.EstimatedTokens
		sharedTokens = s.est.tokens(shared)
	}
	if totalTokens >= s.track.min {
		p.PredictedCachedTokens = s.track.blocks(min(sharedTokens, totalTokens))
		s.track.add(now, p.TTL, p.Model, msgs)
	}
}

// divergenceLocked sets p.Diverged and p.DivergedIn: where msgs first
// differ from the previous prompt (none for the first), and logs why the
// stable prefix was rewritten when it was. It returns that place and the
// text near it, for Record.
//
// Precondition: s.mu is held.
func (s *Session) divergenceLocked(p *Prompt, msgs []Message) (where, near string) {
	if s.prev != nil {
		off, i := lcp(len(s.tools), s.prev, msgs, s.track.knownPrefix(s.prevGen, s.context))
		p.Diverged = off
		where, near = s.locate(msgs, i, off)
		p.DivergedIn = where
	}
	if p.Layout != "" {
		s.log.Debug("cache: stable prefix rewritten", "reason", p.Layout, "diverged_at", p.Diverged, "in", where, "trimmed", p.Trimmed)
	}
	return where, near
}

// recordLocked gives p its handle, keeps pend (completed with p's
// prediction and divergence) for Record, the oldest pending prompt
// forgotten past maxPending, and counts p in the session's statistics.
//
// Precondition: s.mu is held.
func (s *Session) recordLocked(p *Prompt, pend pending) {
	s.nextHandle++
	p.Handle = s.nextHandle
	pend.predicted, pend.diverged = p.PredictedCachedTokens, p.Diverged
	s.pend[p.Handle] = pend
	s.pendOrder = append(s.pendOrder, p.Handle)
	if len(s.pendOrder) > maxPending {
		delete(s.pend, s.pendOrder[0])
		s.pendOrder = slices.Delete(s.pendOrder, 0, 1)
	}
	s.stats.Built++
	s.stats.PredictedCachedTokens += int64(p.PredictedCachedTokens)
	s.stats.EstimatedTokens += int64(p.EstimatedTokens)
	if strings.Contains(p.Layout, "rebase") {
		s.stats.Rebases++
	}
	if len(p.Trimmed) > 0 {
		s.stats.Trims++
	}
}

// validate checks req and returns the active document.
func validate(req Request) (*Document, error) {
	var active *Document
	seen := make(map[string]bool, len(req.Documents))
	for i := range req.Documents {
		d := &req.Documents[i]
		if err := checkDoc(d); err != nil {
			return nil, err
		}
		k := docKey(d.Path, d.Part)
		if seen[k] {
			return nil, fmt.Errorf("cache: document %q given twice", k)
		}
		seen[k] = true
		if d.Path == req.Active && d.Part == "" {
			active = d
		}
	}
	for i := range req.Volatile {
		if err := checkDoc(&req.Volatile[i]); err != nil {
			return nil, err
		}
	}
	if active == nil {
		return nil, fmt.Errorf("cache: active document %q is not among the %d documents", req.Active, len(req.Documents))
	}
	sel := req.Selection
	if sel.Start < 0 || sel.Start > sel.End || sel.End > len(active.Text) {
		return nil, fmt.Errorf("cache: selection %d-%d outside the active text of %d bytes", sel.Start, sel.End, len(active.Text))
	}
	for _, off := range []int{sel.Start, sel.End} {
		if off < len(active.Text) && !utf8.RuneStart(active.Text[off]) {
			return nil, fmt.Errorf("cache: selection offset %d is inside a UTF-8 character", off)
		}
	}
	return active, nil
}

// windowsAbs reports whether p names a root or a drive on Windows (\x,
// C:\x, c:/x, c:x). Only there: on other systems a backslash and a colon
// are file-name characters, and a:b.go, x:y, d:/e.go (e.go in a directory
// named "d:") and w:\v.go are workspace files like any other.
func windowsAbs(p string) bool {
	return runtime.GOOS == "windows" && (strings.HasPrefix(p, `\`) || filepath.VolumeName(filepath.FromSlash(p)) != "")
}

// checkDoc refuses a document whose path is bad or whose part has line
// breaks.
func checkDoc(d *Document) error {
	if err := checkPath(d.Path); err != nil {
		return err
	}
	if strings.ContainsAny(d.Part, "\x00\n\r") {
		return fmt.Errorf("cache: document part %q has control characters", d.Part)
	}
	return nil
}

// checkPath refuses a path that is empty, absolute, or leaves the workspace.
func checkPath(p string) error {
	switch {
	case p == "":
		return errors.New("cache: document with an empty path")
	case strings.HasPrefix(p, "/"), windowsAbs(p):
		return fmt.Errorf("cache: document path %q is absolute; pass it relative to the workspace root", p)
	case p == "..", strings.HasPrefix(p, "../"), strings.Contains(p, "/../"), strings.HasSuffix(p, "/.."):
		return fmt.Errorf("cache: document path %q leaves the workspace", p)
	case strings.ContainsAny(p, "\x00\n\r"):
		return fmt.Errorf("cache: document path %q has control characters", p)
	}
	return nil
}

// byEditOrder sorts documents least recently edited first, then by path,
// the whole file before its snippets, snippets by line.
func byEditOrder(a, b *Document) int {
	return cmp.Or(cmp.Compare(a.LastEdited, b.LastEdited), strings.Compare(a.Path, b.Path),
		cmp.Compare(a.Line, b.Line), strings.Compare(a.Part, b.Part))
}

// sortedDocs returns pointers to req's documents in edit order, so that the
// layout never depends on the order the caller listed them.
func sortedDocs(req Request) []*Document {
	docs := make([]*Document, len(req.Documents))
	for i := range req.Documents {
		docs[i] = &req.Documents[i]
	}
	slices.SortFunc(docs, byEditOrder)
	return docs
}

func newFileSeg(d *Document) *fileSeg {
	f := &fileSeg{path: d.Path, lang: d.Language, part: d.Part, line: d.Line, lastEdited: d.LastEdited}
	f.snapshot(d.Text)
	return f
}

// snapshot makes text the file's shown text and renders its header.
func (f *fileSeg) snapshot(text string) {
	f.snap, f.cur, f.logged, f.logBytes = text, text, false, 0
	f.prev, f.hasPrev = "", false
	b := make([]byte, 0, 64+len(f.path))
	b = append(b, "<file path="...)
	b = strconv.AppendQuote(b, f.path)
	b = append(b, " language="...)
	b = strconv.AppendQuote(b, f.lang)
	if f.part != "" {
		b = append(b, " part="...)
		b = strconv.AppendQuote(b, f.part)
		b = append(b, " line=\""...)
		b = strconv.AppendInt(b, int64(max(f.line, 1)), 10)
		b = append(b, '"')
	}
	b = append(b, " bytes=\""...)
	b = strconv.AppendInt(b, int64(len(text)), 10)
	b = append(b, "\">\n"...)
	f.header = string(b)
}

// relayoutLocked lays the stable part out from scratch: every document in
// edit order (the active one last), snapshots of the current texts, no
// edit log, within the budget.
// Precondition: s.mu is held.
func (s *Session) relayoutLocked(req Request, project string) {
	s.projectBlock = project
	clear(s.byPath)
	clear(s.excluded)
	s.order = s.order[:0]
	s.editLog, s.logBlocks, s.lateBytes = nil, nil, 0
	var act *fileSeg
	for _, d := range sortedDocs(req) {
		if req.ExcerptActive && d.Path == req.Active && d.Part == "" {
			continue
		}
		f := newFileSeg(d)
		s.byPath[f.key()] = f
		if f.isActive(req.Active) {
			act = f
			continue
		}
		s.order = append(s.order, f)
	}
	if act != nil {
		s.order = append(s.order, act)
	}
	for _, f := range s.order {
		s.showBaseLocked(f, baseDoc(req, f))
	}
	s.dirty = true
}

// showBaseLocked makes the block f of the active file (or of one of its
// parts), just snapshotted at
// d.Text with no edit block, show d.Base instead, and appends the change
// from d.Base to d.Text to the edit log: when d has a base (HasBase) that
// differs from its text and the change fits in half the log's limit (so
// that the log it starts is not folded again at once).
// Precondition: s.mu is held.
func (s *Session) showBaseLocked(f *fileSeg, d *Document) {
	if !s.showsBaseLocked(f, d) {
		return
	}
	f.snapshot(d.Base)
	s.appendEditLocked(f, d.Text)
}

// showsBaseLocked reports whether f, just snapshotted at d.Text, is to
// show d.Base and the change since (showBaseLocked).
// Precondition: s.mu is held.
func (s *Session) showsBaseLocked(f *fileSeg, d *Document) bool {
	if d == nil || !d.HasBase || d.Base == d.Text || f.logged {
		return false
	}
	if s.maxLog > 0 {
		from := &fileSeg{path: f.path, part: f.part, cur: d.Base}
		if s.est.tokens(len(appendSegEdit(nil, from, s.editSeq+1, d.Text))) > s.maxLog/2 {
			return false
		}
	}
	return true
}

// appendDocLocked places f, a document that joins the session after its
// layout, in the edit log (Config.LateInLog): its file block after the
// log's blocks so far — as of d's base with the change since as an edit
// block after it, where showBaseLocked would show the base.
// Precondition: s.mu is held.
func (s *Session) appendDocLocked(f *fileSeg, d *Document) {
	base := s.showsBaseLocked(f, d)
	if base {
		f.snapshot(d.Base)
	}
	f.inLog = true
	start := len(s.editLog)
	s.editLog = append(s.editLog, f.header...)
	s.editLog = append(s.editLog, f.snap...)
	s.editLog = append(s.editLog, fileFooter...)
	s.logBlocks = append(s.logBlocks, logBlock{key: f.key(), start: start, end: len(s.editLog), doc: true})
	s.lateBytes += len(s.editLog) - start
	if base {
		s.appendEditLocked(f, d.Text)
	}
}

// settleLocked moves the documents placed in the edit log
// (appendDocLocked) into the stable part, where they are in s.order, and
// their file blocks out of the log; their edit blocks stay. Everything
// from the first of them on is rewritten: it precedes whatever reorders
// the stable part (a rebase, a trim), which rewrites that much anyway.
// Precondition: s.mu is held.
func (s *Session) settleLocked() {
	if s.lateBytes == 0 {
		return
	}
	var log []byte
	var blocks []logBlock
	for _, b := range s.logBlocks {
		if b.doc {
			continue
		}
		start := len(log)
		log = append(log, s.editLog[b.start:b.end]...)
		blocks = append(blocks, logBlock{key: b.key, start: start, end: len(log)})
	}
	s.editLog, s.logBlocks, s.lateBytes = log, blocks, 0
	for _, f := range s.order {
		f.inLog = false
	}
	s.dirty = true
}

// baseDoc returns the document of req that f shows when its base counts
// (Document.Base): one of the active file's documents (the whole file,
// unless excerpted, or one of its parts) that has a base; else nil.
func baseDoc(req Request, f *fileSeg) *Document {
	if f.path != req.Active || f.part == "" && req.ExcerptActive {
		return nil
	}
	for i := range req.Documents {
		if d := &req.Documents[i]; d.Path == f.path && d.Part == f.part && d.HasBase {
			return d
		}
	}
	return nil
}

// syncLocked brings the layout up to date with req's documents without
// moving anything already shown: a changed text becomes an edit block, a new
// document is appended, a closed one is only marked (removing it would
// rewrite everything after it; it goes at the next rebase, trim or
// relayout). It returns a layout reason, or "".
// Precondition: s.mu is held.
func (s *Session) syncLocked(req Request) string {
	reason := ""
	var added []*fileSeg
	for _, f := range s.order {
		f.gone = true
	}
	for _, d := range sortedDocs(req) {
		if req.ExcerptActive && d.Path == req.Active && d.Part == "" {
			continue
		}
		k := docKey(d.Path, d.Part)
		f := s.byPath[k]
		if f == nil {
			if s.excluded[k] && !(d.Path == req.Active && d.Part == "") {
				continue
			}
			delete(s.excluded, k)
			f = newFileSeg(d)
			s.byPath[k] = f
			added = append(added, f)
			continue
		}
		f.gone = false
		if d.Text != f.cur {
			s.appendEditLocked(f, d.Text)
			f.lastEdited = d.LastEdited
		}
	}
	if len(added) > 0 {
		// New files go after everything shown (the active one last), so
		// only the edit log and the request follow the change.
		slices.SortStableFunc(added, func(a, b *fileSeg) int {
			return cmp.Compare(b2i(a.isActive(req.Active)), b2i(b.isActive(req.Active)))
		})
		s.order = append(s.order, added...)
		if s.lateInLog {
			// After the log instead (Config.LateInLog): nothing shown
			// before is written again.
			for _, f := range added {
				s.appendDocLocked(f, baseDoc(req, f))
			}
			return ""
		}
		for _, f := range added {
			s.showBaseLocked(f, baseDoc(req, f))
		}
		s.dirty = true
		reason = "open"
	}
	return reason
}

// appendEditLocked logs the change of f's text to text. When the log's
// last block is f's and the block from the text before it to text is no
// longer than a new block would be (typing on, in the lines that block
// changed), that block is replaced: the prompt is rewritten from the same
// place as an appended block would rewrite from less, and the log does not
// grow by a block per keystroke burst, so it reaches its limit (and the
// rebase that rewrites the file) much later.
// Precondition: s.mu is held.
func (s *Session) appendEditLocked(f *fileSeg, text string) {
	if n := len(s.logBlocks); n > 0 && s.logBlocks[n-1].key == f.key() && !s.logBlocks[n-1].doc && s.logBlocks[n-1].end == len(s.editLog) && f.hasPrev {
		last := s.logBlocks[n-1]
		cur := f.cur
		f.cur = f.prev
		merged := appendSegEdit(nil, f, f.lastSeq, text)
		f.cur = cur
		fresh := appendSegEdit(nil, f, s.editSeq+1, text)
		if len(merged) <= len(fresh) {
			s.editLog = append(s.editLog[:last.start], merged...)
			s.logBlocks[n-1].end = len(s.editLog)
			f.logBytes += len(merged) - (last.end - last.start)
			f.cur = text
			if len(merged) == 0 {
				// Back to the text before the block: no block at all.
				s.logBlocks = s.logBlocks[:n-1]
				f.hasPrev = false
				f.logged = f.logBytes > 0
			}
			return
		}
	}
	s.editSeq++
	start := len(s.editLog)
	s.editLog = appendSegEdit(s.editLog, f, s.editSeq, text)
	s.logBlocks = append(s.logBlocks, logBlock{key: f.key(), start: start, end: len(s.editLog)})
	f.logBytes += len(s.editLog) - start
	f.prev, f.hasPrev, f.lastSeq = f.cur, true, s.editSeq
	f.cur = text
	f.logged = true
}

// appendSegEdit appends the edit block that turns f's current text into
// text, naming f's part for a snippet.
func appendSegEdit(dst []byte, f *fileSeg, seq int, text string) []byte {
	start := len(dst)
	dst = appendEdit(dst, f.path, seq, f.cur, text)
	if f.part != "" && len(dst) > start {
		at := start + len("<edit path=") + len(strconv.Quote(f.path))
		dst = slices.Insert(dst, at, []byte(" part="+strconv.Quote(f.part))...)
	}
	return dst
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rebaseLocked folds edit blocks back into fresh snapshots. Moving a file
// rewrites everything after its old place, so it folds the files at the end
// of the stable part first: the files with edit blocks from some place p
// onwards move, re-snapshotted, to the end (in edit order, the active file
// last), with p as late as leaves at most keep bytes of edit blocks in the
// log (keep 0 folds everything). Closed files after p are dropped, as
// everything after p is rewritten anyway. The active file and its parts,
// if moved, show their base again (req's documents: showBaseLocked), so
// that the edits since it stay in the log.
// Precondition: s.mu is held.
func (s *Session) rebaseLocked(req Request, keep int) {
	s.settleLocked()
	active := req.Active
	// Fold from p: the latest place such that the blocks of files before
	// it fit in keep.
	before := len(s.editLog) // log bytes of files before p
	p := len(s.order)
	for p > 0 && before > keep {
		p--
		before -= s.order[p].logBytes
	}
	first := -1
	for i := p; i < len(s.order); i++ {
		if s.order[i].logged {
			first = i
			break
		}
	}
	if first < 0 {
		return
	}
	kept := s.order[:first]
	var moved []*fileSeg
	for _, f := range s.order[first:] {
		switch {
		case f.gone:
			delete(s.byPath, f.key())
		case f.logged:
			moved = append(moved, f)
		default:
			kept = append(kept, f)
		}
	}
	// Keep the blocks of the files that stay, in their order.
	stay := make(map[string]bool)
	for _, f := range s.order[:first] {
		if f.logged {
			stay[f.key()] = true
		}
	}
	var log []byte
	var blocks []logBlock
	for _, b := range s.logBlocks {
		if stay[b.key] {
			start := len(log)
			log = append(log, s.editLog[b.start:b.end]...)
			blocks = append(blocks, logBlock{key: b.key, start: start, end: len(log)})
		}
	}
	s.editLog, s.logBlocks = log, blocks
	slices.SortStableFunc(moved, func(a, b *fileSeg) int {
		return cmp.Or(cmp.Compare(b2i(a.isActive(active)), b2i(b.isActive(active))),
			cmp.Compare(a.lastEdited, b.lastEdited), strings.Compare(a.path, b.path), cmp.Compare(a.line, b.line))
	})
	for _, f := range moved {
		f.snapshot(f.cur)
	}
	s.order = append(kept, moved...)
	for _, f := range moved {
		if d := baseDoc(req, f); d != nil && d.Text == f.cur {
			s.showBaseLocked(f, d)
		}
	}
	s.dirty = true
}

// dropGoneLocked drops the closed files anywhere in the stable part.
// Precondition: s.mu is held.
func (s *Session) dropGoneLocked() {
	s.settleLocked()
	s.order = slices.DeleteFunc(s.order, func(f *fileSeg) bool {
		if f.gone {
			delete(s.byPath, f.key())
		}
		return f.gone
	})
	s.dirty = true
}

// dropGoneFromEndLocked drops documents no longer asked for, from the end
// of the stable part backwards, until the estimate is at most target.
// Precondition: s.mu is held.
func (s *Session) dropGoneFromEndLocked(target, tailBytes int) {
	s.settleLocked()
	for i := len(s.order) - 1; i >= 0 && s.estimateLocked(tailBytes) > target; i-- {
		if f := s.order[i]; f.gone {
			delete(s.byPath, f.key())
			s.order = slices.Delete(s.order, i, i+1)
			s.dirty = true
		}
	}
}

// estimateLocked estimates the prompt's tokens with a tail of tailBytes.
// Precondition: s.mu is held.
func (s *Session) estimateLocked(tailBytes int) int {
	n := s.overhead + len(s.projectBlock) + len(s.editLog) + tailBytes + 2*(msgHeaderLen("user")+len(msgClose))
	for _, f := range s.order {
		if !f.inLog { // else counted in the log
			n += len(f.header) + len(f.snap) + len(fileFooter)
		}
	}
	return s.est.tokens(n)
}

// trimLocked drops whole files and snippets (never the active file or its
// parts) until
// the estimate is at most trimTarget of budget, and reports whether it is
// still over budget. Closed files go first. Then, normally, files go from the end of
// the stable part, which keeps the cached prefix; right after a relayout
// (fromFront), when nothing is cached, the least recently edited go first.
// Precondition: s.mu is held and the edit log holds blocks of the active
// file and its parts only (their bases', showBaseLocked), if any: those
// are never dropped.
func (s *Session) trimLocked(active string, budget, tailBytes int, fromFront bool) (trimmed []string, over bool) {
	s.settleLocked()
	target := int(float64(budget) * trimTarget)
	s.dropGoneLocked()
	for s.estimateLocked(tailBytes) > target {
		i := len(s.order) - 1
		for i >= 0 && s.order[i].path == active {
			i--
		}
		if fromFront {
			i = slices.IndexFunc(s.order, func(f *fileSeg) bool { return f.path != active })
		}
		if i < 0 {
			break
		}
		f := s.order[i]
		s.order = slices.Delete(s.order, i, i+1)
		delete(s.byPath, f.key())
		s.excluded[f.key()] = true
		trimmed = append(trimmed, f.key())
	}
	return trimmed, s.estimateLocked(tailBytes) > budget
}

// renderContextLocked renders the stable user message: the project block
// and every file block, in order.
// Precondition: s.mu is held.
func (s *Session) renderContextLocked() {
	n := len(s.projectBlock)
	for _, f := range s.order {
		n += len(f.header) + len(f.snap) + len(fileFooter)
	}
	var b strings.Builder
	b.Grow(n)
	s.marks = s.marks[:0]
	b.WriteString(s.projectBlock)
	s.marks = append(s.marks, mark{b.Len(), "project"})
	for _, f := range s.order {
		if f.inLog {
			continue
		}
		b.WriteString(f.header)
		b.WriteString(f.snap)
		b.WriteString(fileFooter)
		s.marks = append(s.marks, mark{b.Len(), "file " + f.key()})
	}
	s.context = b.String()
	s.dirty = false
	s.track.newContext(s.context)
}

// locate names the segment holding rendering offset off, which falls in
// message i of msgs, and returns a short excerpt around it.
// Precondition: s.mu is held.
func (s *Session) locate(msgs []Message, i, off int) (where, near string) {
	if i >= len(msgs) {
		return "end", ""
	}
	start := len(s.tools)
	for j := 0; j < i; j++ {
		start += msgHeaderLen(msgs[j].Role) + len(msgs[j].Content) + len(msgClose)
	}
	in := off - start - msgHeaderLen(msgs[i].Role)
	near = excerpt(msgs[i].Content, in)
	switch i {
	case 0:
		return "system", near
	case 1:
		for _, m := range s.marks {
			if in < m.end {
				return m.name, near
			}
		}
		return "context", near
	}
	switch {
	case in < s.volLen:
		return "context", near
	case in < s.volLen+len(s.editLog):
		return "edits", near
	}
	return "request", near
}

// renderProject renders the project block.
func renderProject(p Project) string {
	var b strings.Builder
	b.WriteString("<project name=")
	b.WriteString(strconv.Quote(p.Name))
	b.WriteString(" languages=")
	b.WriteString(strconv.Quote(strings.Join(p.Languages, ",")))
	b.WriteString(">\n")
	if c := strings.TrimRight(p.Conventions, "\n"); c != "" {
		b.WriteString(c)
		b.WriteString("\n")
	}
	b.WriteString("</project>\n\n")
	return b.String()
}

// Markers in the tail's copy of the selection.
const (
	SelectionStart = "<|selection|>"
	SelectionEnd   = "<|/selection|>"
	Cursor         = "<|cursor|>"
)

// renderVolatile renders the documents only this request needs, in order
// of relevance, as a <context> block ("" for none).
func renderVolatile(docs []Document) string {
	if len(docs) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("<context>\n")
	for i := range docs {
		f := newFileSeg(&docs[i])
		b.WriteString(f.header)
		b.WriteString(f.snap)
		b.WriteString(fileFooter)
	}
	b.WriteString("</context>\n\n")
	return b.String()
}

// renderTail renders the request block: the action, the active file, the
// selection window with markers, diagnostics, the instruction.
func (s *Session) renderTail(req Request, d *Document) string {
	text := d.Text
	sel := req.Selection
	startLine := strings.Count(text[:sel.Start], "\n")
	endLine := startLine + strings.Count(text[sel.Start:sel.End], "\n")
	var b strings.Builder
	b.WriteString("<request action=")
	b.WriteString(strconv.Quote(req.Action))
	b.WriteString(">\n<active path=")
	b.WriteString(strconv.Quote(d.Path))
	b.WriteString(" language=")
	b.WriteString(strconv.Quote(d.Language))
	b.WriteString(" lines=\"")
	b.WriteString(strconv.Itoa(strings.Count(text, "\n") + b2i(text != "" && !strings.HasSuffix(text, "\n"))))
	b.WriteString("\"/>\n")
	// Lines are 1-based for the model.
	fmt.Fprintf(&b, "<selection lines=\"%d-%d\"", startLine+1, endLine+1)
	if sel.Start == sel.End {
		fmt.Fprintf(&b, " cursor=\"%d:%d\"", startLine+1, sel.Start-(strings.LastIndexByte(text[:sel.Start], '\n')+1)+1)
	}
	if s.window < 0 || endLine-startLine > maxWindowSelectionLines || sel.End-sel.Start > maxWindowSelectionBytes {
		b.WriteString("/>\n")
	} else {
		// The window: whole lines around the selection, markers inside,
		// cut at winBytes on each side.
		lo, hi := clipAround(text, lineStart(text, sel.Start, s.window), lineEnd(text, sel.End, s.window), sel.Start, sel.End, s.winBytes)
		fmt.Fprintf(&b, " window=\"%d-%d\">\n", strings.Count(text[:lo], "\n")+1, strings.Count(text[:hi], "\n")+b2i(hi > 0 && text[hi-1] != '\n'))
		b.WriteString(text[lo:sel.Start])
		if sel.Start == sel.End {
			b.WriteString(Cursor)
		} else {
			b.WriteString(SelectionStart)
			b.WriteString(text[sel.Start:sel.End])
			b.WriteString(SelectionEnd)
		}
		b.WriteString(text[sel.End:hi])
		if hi == 0 || text[hi-1] != '\n' {
			b.WriteString("\n")
		}
		b.WriteString("</selection>\n")
	}
	if len(req.Diagnostics) > 0 {
		b.WriteString("<diagnostics>\n")
		for _, dg := range req.Diagnostics {
			fmt.Fprintf(&b, "- lines %d-%d %s", dg.StartLine+1, dg.EndLine+1, dg.Severity)
			if dg.Source != "" {
				fmt.Fprintf(&b, " (%s)", dg.Source)
			}
			b.WriteString(": ")
			b.WriteString(strings.TrimSpace(dg.Message))
			b.WriteString("\n")
		}
		b.WriteString("</diagnostics>\n")
	}
	b.WriteString("<instruction>\n")
	if in := strings.TrimSpace(req.Instruction); in != "" {
		b.WriteString(in)
		b.WriteString("\n")
	}
	b.WriteString("</instruction>\n</request>\n")
	return b.String()
}

// clipAround narrows [lo, hi), which holds [start, end), to at most n
// bytes on each side of it, at rune boundaries.
func clipAround(text string, lo, hi, start, end, n int) (int, int) {
	if start-lo > n {
		lo = start - n
		for lo < start && !utf8.RuneStart(text[lo]) {
			lo++
		}
	}
	if hi-end > n {
		hi = end + n
		for hi > end && !utf8.RuneStart(text[hi]) {
			hi--
		}
	}
	return lo, hi
}

// lineStart returns the start of the line n lines above the one holding off.
func lineStart(text string, off, n int) int {
	i := strings.LastIndexByte(text[:off], '\n') + 1
	for ; n > 0 && i > 0; n-- {
		i = strings.LastIndexByte(text[:i-1], '\n') + 1
	}
	return i
}

// lineEnd returns the end (after "\n") of the line n lines below the one
// holding off, or len(text).
func lineEnd(text string, off, n int) int {
	i := off
	for ; n >= 0; n-- {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return len(text)
		}
		i += j + 1
	}
	return i
}

// volatileLocked returns the volatile documents the request block must
// show: those the stable part does not show already with the same text
// (they are served from the cache and count as asked for, so that they
// stay), and, when this build rewrites the stable part anyway (rewritten),
// none: the new ones join it, at its end in the order given, where the next
// request that needs them finds them cached (the ledger).
// Precondition: s.mu is held.
func (s *Session) volatileLocked(docs []Document, rewritten bool) []Document {
	var out []Document
	for i := range docs {
		d := &docs[i]
		k := docKey(d.Path, d.Part)
		if f := s.byPath[k]; f != nil {
			if f.cur == d.Text {
				f.gone = false
				continue
			}
		} else if rewritten && !s.excluded[k] {
			f := newFileSeg(d)
			s.byPath[k] = f
			s.order = append(s.order, f)
			s.dirty = true
			continue
		}
		out = append(out, *d)
	}
	return out
}

// Shown reports whether the stable part holds the document (path, part),
// the active file's parts included: what a context selection can take
// from the cache.
func (s *Session) Shown() func(path, part string) bool {
	s.mu.Lock()
	keys := make(map[string]bool, len(s.byPath))
	for k := range s.byPath {
		keys[k] = true
	}
	s.mu.Unlock()
	return func(path, part string) bool { return keys[docKey(path, part)] }
}
