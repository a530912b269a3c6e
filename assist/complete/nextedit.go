package complete

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// NextSystem is the system message of every next-edit request: a
// constant, so that it is the start of every cached prefix, and it holds
// the instruction, so that the request block stays small.
const NextSystem = `You are the next-edit engine of the kimi-lsp language server.
The first user message shows the project and the file being edited (sometimes only a part of it, as the project block says).
A large file is shown in pages: each <file> block with part="page N" line="L" holds the file's lines from line L on as they were when the page was first shown, the pages in the order they were first shown; an <edit> block naming the page changes it, its line numbers counting from the page's first line. Lines in no page are not shown.
The second shows the edits the user just made to that file, as unified diff hunks (and the pages first shown after some of them, each where it was first shown), then the request, with <|cursor|> marking where the user stopped typing.
Predict the one edit the user will make next because of what they just changed, elsewhere in this file: the uses of a renamed name, a new field in a constructor or a String method, the other calls of a function whose parameters changed.
Answer with a unified diff of that file only (--- a/PATH, +++ b/PATH, then @@ hunks with 3 lines of context exactly as the file has them now) and nothing else: no explanation, no Markdown fences.
Never change or undo the lines the user just edited. Change as few lines as the edit needs.
If no edit clearly follows from what the user just did, answer with nothing.
`

// nextAnswerTokens bounds thinking and the diff of one next-edit answer.
const nextAnswerTokens = config.DefaultNextEditTokens

// nextTailLines is how many lines around the cursor the request block of a
// next-edit prompt repeats.
const nextTailLines = 2

// nextAbove is the share of a next-edit prompt's window of the file above
// the cursor: what follows an edit (the uses of a renamed name, the
// constructor of a new field) is mostly below it, and a user working down
// a file stays in a window placed so for longer (D81).
const nextAbove = 1.0 / 3

// NextOptions configure NextEdits.
type NextOptions struct {
	// Config returns the current configuration, read at every edit.
	Config func() config.Config
	// Services are the model client, key and rate-limit state, budget
	// gate, stream slots and stream context next edits share with the
	// other surfaces (completion): a refused key or a rate limit stops
	// them all. Nil: their own, with the default client.
	Services *Services
	// Logger receives debug records; nil: the Services'.
	Logger *slog.Logger
	// Changed is called, outside every lock of the package, when a
	// document's suggestion appears, moves or goes. It must not block.
	Changed func(key string)
	// Busy reports that an edit of ours to the document is in flight (a
	// job's applyEdit): no next edit is asked for then.
	Busy func(key string) bool
	// Allow is the budget's say before each provider request: false
	// means none now (a background surface stops at the budget cap).
	// Nil allows every request.
	Allow func() bool
	// Landed returns the texts before and after the last edits of ours
	// that landed on the document (the edit queue's history): a change
	// leaving one of them is their undo or redo, however many didChanges
	// the editor split the edit into. It must not block. Nil: none.
	Landed func(key string) []string
	// SameAsDisk reports whether text is the document's file on disk (a
	// reload, nextgate.go); asked when a pause ends, off the read loop.
	// Nil: never.
	SameAsDisk func(key, text string) bool
	// Check has the helper language server check a suggestion before it
	// is shown: the document's text before and after it. nil: no new
	// error; an error wrapping ErrBreaks: it adds one, and it is dropped;
	// ErrUnchecked or another error: shown unchecked. Nil: never checked.
	// It is called between the answer and show, within checkWait; ctx
	// ends when a newer edit comes.
	Check func(ctx context.Context, key, before, after string) error
	// Warm is called when a pause ends, before the request goes out: the
	// helper that checks the suggestion loads while the model writes.
	// Nil: nothing.
	Warm func(key string)
}

// NextRequest is one edit of a document, as the editor reported it.
type NextRequest struct {
	// Key identifies the document (its URI).
	Key string
	// Path is the workspace-relative path the model sees; Language the
	// document's language id; Project names the workspace.
	Path, Language, Project string
	// Doc is the text after the edit; Prev the text before it.
	Doc, Prev *workspace.Snapshot
	// Folders and Open give the prompt the related snippets (as
	// completion's). Nil Folders: the active file only.
	Folders *workspace.Folders
	Open    []*workspace.Snapshot
	// Eligible is asked when the pause ends, off the editor's read loop:
	// false (a secrets file, by the one secret check) means no request.
	Eligible func() bool
	// Changes are the didChange's changes, in order, each on the text the
	// ones before it left; Whole reports one ranged change replacing the
	// whole text (a reload). The gate reads them (nextgate.go).
	Changes []workspace.Edit
	Whole   bool
}

// NextSuggestion is the edit proposed for a document, placed on the
// document's text of Version.
type NextSuggestion struct {
	// ID names the suggestion (a newer one has a larger ID).
	ID uint64
	// Version is the document version the offsets are for.
	Version int32
	// Edits are line-level edits of that text, sorted.
	Edits []patch.Edit
	// Start and End are the byte range from the first edit's start to the
	// last edit's end; NewText replaces it (the text between the edits
	// included).
	Start, End int
	NewText    string
	// Summary is one line for the diagnostic's message.
	Summary string
	// Lines counts the lines it changes.
	Lines int
}

// NextEdits proposes, after an edit burst and a pause, the edit that comes
// next in the same file (see the package doc, "Next edits"). It is safe
// for concurrent use.
type NextEdits struct {
	opts NextOptions
	svc  *Services
	log  *slog.Logger

	mu      sync.Mutex
	docs    map[string]*nextDoc
	ids     uint64
	off     bool // nextEdit.enable is false (SetEnabled)
	counts  nextCounts
	retired cache.Stats
	// lastKey and lastAt are the document and time of the latest edit
	// the gate took in that was not Kimi's, lastTyped whether it looked
	// like a keystroke (nextgate.go).
	lastKey   string
	lastAt    time.Time
	lastTyped bool
}

// nextDoc is one document's next-edit state. Precondition for every
// field: NextEdits.mu is held.
type nextDoc struct {
	key     string
	seq     uint64              // the latest edit
	timer   *ownedTimer         // the pause after it (Services.afterFunc)
	cancel  context.CancelFunc  // the running stream's, if any
	pending NextRequest         // the latest edit
	burst   *workspace.Snapshot // the text before the current burst (nil with noBurst); a rope shares all but the edited chunks with the text now, so keeping it copies nothing
	noBurst bool
	sug     *NextSuggestion
	base    string    // the text sug is placed on
	prompt  docPrompt // its session and layout
	log     editLog   // what its prompts show of the edits (editlog.go)
	touched time.Time

	// dismissed are the changes the user said no to (changeOf), newest
	// last, at most maxDismissed: the model proposing one again is not
	// shown.
	dismissed []string
	// editor is what an editor's own next-edit UI asked and said
	// (nexteditor.go).
	editor editorState

	// The gate's (nextgate.go): the texts before and after Kimi's edits
	// (at most maxLanded), when the latest edit came and whether it
	// looked like a keystroke, the last willSave without its didSave, the
	// edit a didSave followed; checking hangs the helper's check up.
	landed   []textMark
	edited   time.Time
	typed    bool
	willSave time.Time
	savedSeq uint64
	checking context.CancelFunc
}

type nextCounts struct {
	requested, shown, accepted, dismissed, stale, refused, empty, failed, cancelled int64
	// displayed counts the suggestions an editor said it displayed.
	displayed int64
	// judged counts the answers checked; server is the time they took in
	// the server, the provider's excluded (prompt, placing, checks).
	judged int64
	server time.Duration
	// notTyped counts the edits the gate took as no typing; checked the
	// suggestions a helper checked, broken those it found adding an
	// error, checkTime the time the checks took.
	notTyped, checked, broken int64
	checkTime                 time.Duration
}

// NewNextEdits returns the next-edit surface, on opts.Services.
func NewNextEdits(opts NextOptions) *NextEdits {
	if opts.Config == nil {
		opts.Config = config.Default
	}
	svc := opts.Services
	if svc == nil {
		svc = NewServices(ServicesOptions{Logger: opts.Logger})
	}
	log := opts.Logger
	if log == nil {
		log = svc.logger()
	}
	return &NextEdits{opts: opts, svc: svc, log: log, docs: map[string]*nextDoc{}}
}

func (n *NextEdits) changed(key string) {
	if n.opts.Changed != nil {
		n.opts.Changed(key)
	}
}

// docLocked returns key's state. Precondition: n.mu is held.
func (n *NextEdits) docLocked(key string) *nextDoc {
	d := n.docs[key]
	if d == nil {
		if len(n.docs) >= maxDocs {
			var oldest *nextDoc
			for _, o := range n.docs {
				if o.cancel == nil && o.sug == nil && (oldest == nil || o.touched.Before(oldest.touched)) {
					oldest = o
				}
			}
			if oldest != nil {
				n.dropLocked(oldest)
			}
		}
		d = &nextDoc{key: key, noBurst: true}
		n.docs[key] = d
	}
	d.touched = time.Now()
	return d
}

// dropLocked forgets d. Precondition: n.mu is held.
func (n *NextEdits) dropLocked(d *nextDoc) {
	n.stopLocked(d)
	d.prompt.retire(&n.retired)
	delete(n.docs, d.key)
}

// stopLocked stops d's timer and hangs its stream up. Precondition: n.mu
// is held.
func (n *NextEdits) stopLocked(d *nextDoc) {
	n.wakeLocked(d)
	if d.timer != nil {
		d.timer.Stop()
		d.timer = nil
	}
	if d.cancel != nil {
		d.cancel()
		d.cancel = nil
		n.counts.cancelled++
	}
	if d.checking != nil {
		d.checking()
		d.checking = nil
	}
}

// Forget drops a document's state (it was closed), its stream and its
// suggestion.
func (n *NextEdits) Forget(key string) {
	n.mu.Lock()
	d := n.docs[key]
	had := d != nil && d.sug != nil
	if d != nil {
		n.dropLocked(d)
	}
	n.mu.Unlock()
	if had {
		n.changed(key)
	}
}

// SetEnabled follows nextEdit.enable as the configuration changes: off
// hangs up every stream, stops every pause and drops every suggestion
// shown (an answer still on its way is not shown); on lets the next edit
// ask again.
func (n *NextEdits) SetEnabled(on bool) {
	var gone []string
	n.mu.Lock()
	n.off = !on
	if n.off {
		for key, d := range n.docs {
			n.stopLocked(d)
			d.burst, d.noBurst = nil, true
			if d.sug != nil {
				d.sug = nil
				gone = append(gone, key)
			}
		}
	}
	n.mu.Unlock()
	for _, key := range gone {
		n.changed(key)
	}
}

// Edited takes in an edit of a document: it hangs up the document's
// stream (a newer edit makes it useless), re-places or drops the
// suggestion, and asks again after nextEdit.debounceMs without a newer
// edit. It does no I/O and never waits: the editor's read loop calls it.
func (n *NextEdits) Edited(req NextRequest) {
	cfg := n.opts.Config()
	// An edit made while one of ours to the document is in flight is that
	// edit (a job's, landing): the model's own, like an accepted suggestion.
	ours := n.opts.Busy != nil && n.opts.Busy(req.Key)
	var landed []string
	if n.opts.Landed != nil {
		landed = n.opts.Landed(req.Key)
	}
	now := time.Now()
	n.mu.Lock()
	d := n.docLocked(req.Key)
	d.seq++
	seq := d.seq
	n.stopLocked(d)
	accepted, prev, base := n.counts.accepted, sugID(d.sug), d.base
	moved := n.replaceLocked(d, req.Doc)
	n.goneLocked(d, prev, accepted)
	why := n.gateLocked(d, req, now, ours, n.counts.accepted != accepted, base, landed)
	d.edited = now
	if why != "" {
		// The edit is not the user's typing (the suggestion itself, a
		// job's edit, its undo, a reload, a format on save, another
		// server's edit): no burst of the user's to ask about (at most one
		// request per burst).
		d.burst, d.noBurst = nil, true
		n.counts.notTyped++
		n.mu.Unlock()
		n.log.Debug("next edit not asked", "path", req.Path, "why", why)
		if moved {
			n.changed(req.Key)
		}
		return
	}
	if !d.log.set {
		// Never opened here (Opened): the log begins before this edit.
		d.log = editLog{base: textOf(req.Prev), set: true}
	}
	// A keystroke copies no text: the text before the burst is kept (a
	// snapshot) at its first keystroke and flattened, with the cursor,
	// when the pause ends (fire).
	if d.noBurst {
		d.burst, d.noBurst = req.Prev, false
	}
	d.pending = req
	if cfg.NextEdit.Enable && int64(req.Doc.Len()) <= cfg.Context.MaxFileSize {
		wait := time.Duration(cfg.NextEdit.DebounceMS) * time.Millisecond
		// The services own the pause and the stream after it: their
		// Close stops the one and waits for the other.
		d.timer = n.svc.afterFunc(wait, func() { n.fire(d, seq) })
	}
	n.mu.Unlock()
	if moved {
		n.changed(req.Key)
	}
}

// replaceLocked follows d's suggestion to the document's new text doc: it
// is accepted when cur is its result, dropped when the user's change
// touches its lines or the line before or after them, otherwise rebased.
// It reports whether the suggestion changed. Precondition: n.mu is held.
func (n *NextEdits) replaceLocked(d *nextDoc, doc *workspace.Snapshot) bool {
	s := d.sug
	if s == nil {
		return false
	}
	cur := doc.Text()
	if cur == d.base {
		s.Version = doc.Version
		return false
	}
	if after, err := patch.ApplyEdits(d.base, s.Edits); err == nil && after == cur {
		n.counts.accepted++
		d.sug = nil
		return true
	}
	user := patch.LineEdits(d.base, cur)
	if rest, ok := partly(s.Edits, user); ok {
		// The editor applies the suggestion one edit at a time (a
		// didChange each): keep what is left of it.
		edits, err := patch.Rebase(d.base, cur, rest)
		if err == nil {
			d.sug = placed(s.ID, doc.Version, cur, edits, s.Summary, s.Lines)
			d.base = cur
			return true
		}
	}
	lo, hi := widen(d.base, s.Start, s.End)
	for _, u := range user {
		if u.Start < hi && lo < u.End || u.Start == u.End && lo < u.Start && u.Start < hi {
			n.counts.stale++
			d.sug = nil
			return true
		}
	}
	edits, err := patch.Rebase(d.base, cur, s.Edits)
	if err != nil {
		n.counts.stale++
		d.sug = nil
		return true
	}
	d.sug = placed(s.ID, doc.Version, cur, edits, s.Summary, s.Lines)
	d.base = cur
	return true
}

// partly reports whether the user's changes are some of the suggestion's
// edits exactly, and returns the others.
func partly(edits, user []patch.Edit) ([]patch.Edit, bool) {
	if len(user) == 0 || len(user) >= len(edits) {
		return nil, false
	}
	var rest []patch.Edit
	i := 0
	for _, e := range edits {
		if i < len(user) && user[i] == e {
			i++
			continue
		}
		rest = append(rest, e)
	}
	return rest, i == len(user)
}

// widen returns the byte range from the start of the line before the one
// holding start to the end of the line after the one holding end: a change
// there is "next to" the suggestion.
func widen(text string, start, end int) (lo, hi int) {
	lo = strings.LastIndexByte(text[:start], '\n') // end of the line before
	if lo >= 0 {
		lo = strings.LastIndexByte(text[:lo], '\n') + 1
	} else {
		lo = 0
	}
	hi = end
	steps := 2 // to the end of end's line, then of the next
	if end > 0 && text[end-1] == '\n' {
		steps = 1 // end is the start of the line after
	}
	for range steps {
		i := strings.IndexByte(text[min(hi, len(text)):], '\n')
		if i < 0 {
			return lo, len(text)
		}
		hi += i + 1
	}
	return lo, hi
}

// textOf is s's text, "" for no snapshot.
func textOf(s *workspace.Snapshot) string {
	if s == nil {
		return ""
	}
	return s.Text()
}

// commonPrefix returns the length of the common prefix of a and b: where
// the change from a to b begins.
func commonPrefix(a, b string) int {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	return p
}

// changeEnd returns where the change from prev to cur ends in cur: after
// their common prefix and before their common suffix.
func changeEnd(prev, cur string) int {
	p := 0
	for p < len(prev) && p < len(cur) && prev[p] == cur[p] {
		p++
	}
	s := 0
	for s < len(prev)-p && s < len(cur)-p && prev[len(prev)-1-s] == cur[len(cur)-1-s] {
		s++
	}
	return len(cur) - s
}

// placed builds a suggestion from edits of text.
func placed(id uint64, version int32, text string, edits []patch.Edit, summary string, lines int) *NextSuggestion {
	start, end := edits[0].Start, edits[len(edits)-1].End
	var b strings.Builder
	last := start
	for _, e := range edits {
		b.WriteString(text[last:e.Start])
		b.WriteString(e.NewText)
		last = e.End
	}
	return &NextSuggestion{ID: id, Version: version, Edits: edits, Start: start, End: end, NewText: b.String(), Summary: summary, Lines: lines}
}

// Current returns a copy of key's suggestion, or nil.
func (n *NextEdits) Current(key string) *NextSuggestion {
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.docs[key]
	if d == nil || d.sug == nil {
		return nil
	}
	s := *d.sug
	s.Edits = slices.Clone(s.Edits)
	return &s
}

// shownLocked counts a suggestion offered. Precondition: n.mu is held.
func (n *NextEdits) shownLocked() { n.counts.shown++ }

// maxDismissed bounds the dismissed changes a document remembers.
const maxDismissed = 8

// changeOf names the change edits make to text: the lines each replaces
// and the lines it writes, wherever they are.
func changeOf(text string, edits []patch.Edit) string {
	var b strings.Builder
	for _, e := range edits {
		b.WriteString(text[e.Start:e.End])
		b.WriteByte(0)
		b.WriteString(e.NewText)
		b.WriteByte(1)
	}
	return b.String()
}

// Dismiss drops key's suggestion id (the user said no); false when it is
// no longer the current one. The same change proposed again for the
// document is not shown.
func (n *NextEdits) Dismiss(key string, id uint64) bool {
	n.mu.Lock()
	d := n.docs[key]
	ok := d != nil && d.sug != nil && (id == 0 || d.sug.ID == id)
	if ok {
		if len(d.dismissed) == maxDismissed {
			d.dismissed = d.dismissed[1:]
		}
		d.dismissed = append(d.dismissed, changeOf(d.base, d.sug.Edits))
		d.sug = nil
		n.counts.dismissed++
	}
	n.mu.Unlock()
	if ok {
		n.changed(key)
	}
	return ok
}

// nextSurface names next edits for the shared services.
var nextSurface = Surface{Budget: "next edits", Record: spend.SurfaceNextEdit, System: NextSystem, Action: "next-edit"}

// spec is next edits' prompt: what it differs in from the other surfaces'
// (promptSpec).
func (n *NextEdits) spec(cfg config.Config) promptSpec {
	ne := cfg.NextEdit
	name := cfg.NextEditModel()
	return promptSpec{
		surface: nextSurface,
		session: fmt.Sprintf("%d/%s/%s", ne.MaxContextTokens, cfg.CacheTTL, name),
		model:   name, effort: ne.ReasoningEffort,
		budgetTokens: ne.MaxContextTokens, answerTokens: nextAnswerTokens,
		windowLines: nextTailLines, above: nextAbove, lead: "Next-edit suggestions in", what: "next-edit",
		paged: true,
	}
}

// fire asks for d's next edit when the pause after edit seq ended without
// a newer edit. It runs in the timer's goroutine; a panic fails this
// suggestion only.
func (n *NextEdits) fire(d *nextDoc, seq uint64) {
	defer func() {
		if r := recover(); r != nil {
			_ = provider.Recovered(n.log, "a next-edit stream", r)
		}
	}()
	began := time.Now()
	cfg := n.opts.Config()
	n.mu.Lock()
	if d.seq != seq || n.docs[d.key] != d {
		n.mu.Unlock()
		return
	}
	d.timer = nil
	d.editor.firing++
	req := d.pending
	n.mu.Unlock()
	defer n.fired(d)
	cursor := changeEnd(textOf(req.Prev), req.Doc.Text())

	if !cfg.NextEdit.Enable || int64(req.Doc.Len()) > cfg.Context.MaxFileSize ||
		req.Eligible != nil && !req.Eligible() ||
		n.opts.Busy != nil && n.opts.Busy(req.Key) ||
		n.opts.Allow != nil && !n.opts.Allow() || n.fromDisk(d, seq, req) {
		return
	}
	if err := n.svc.background(nextSurface); err != nil {
		// A budget is spent: the ledger has told the user once.
		n.log.Debug("next edit not asked", "error", err)
		return
	}
	client, err := n.svc.clientFor(cfg)
	if err != nil {
		n.log.Debug("next edit not asked", "paused", errors.Is(err, ErrPaused), "error", err)
		return
	}
	if n.opts.Warm != nil {
		n.opts.Warm(req.Key)
	}
	spec := n.spec(cfg)
	in := promptInput{path: req.Path, language: req.Language, project: req.Project, doc: req.Doc, cursor: cursor}
	related := relatedFor(&n.mu, &d.prompt, req.Folders, req.Open, in, spec)
	a, ok := n.ask(d, seq, req, in, cfg, client, related)
	if !ok {
		return
	}
	sug, why := nextFromAnswer(a.answer, req.Path, a.text, a.typed, cfg, a.key)
	ok, took := n.check(d, seq, req, a.text, sug)
	if !ok {
		return
	}
	a.answered = a.answered.Add(took) // the helper's time is not the server's own
	n.show(d, seq, req, a, sug, why, a.sent.Sub(began))
}

// asked is a next-edit answer and what it was asked about.
type asked struct {
	answer, text, key string
	typed             [][2]int
	// sent is when the request went out, answered when the answer was
	// in: the server's time excludes what lies between.
	sent, answered time.Time
}

// ask builds d's prompt for req at in and streams its answer; false when
// there is none to judge (a newer edit hung it up, it failed, or the
// prompt could not be built).
func (n *NextEdits) ask(d *nextDoc, seq uint64, req NextRequest, in promptInput, cfg config.Config, client *model.Client, related []cache.Document) (asked, bool) {
	n.mu.Lock()
	if d.seq != seq {
		n.mu.Unlock()
		return asked{}, false
	}
	spec := n.spec(cfg)
	in.base = d.logBaseLocked(req.Doc.Text(), int(float64(splitBudget(spec.budgetTokens).logTokens)*bytesPerToken*logShare))
	in.hasBase = true
	if d.burst != nil {
		in.from, in.hasFrom = commonPrefix(textOf(d.burst), req.Doc.Text()), true
	}
	j, err := d.prompt.build(in, cfg, spec, related, &n.retired, n.log)
	if err != nil {
		n.mu.Unlock()
		n.log.Debug("next-edit prompt", "error", err)
		return asked{}, false
	}
	text := req.Doc.Text()
	// The burst ends when its answer is in (below): a stream hung up by a
	// newer edit leaves it open, so that the next request still keeps the
	// lines typed before that edit (a suggestion must not undo them).
	typed := typedLines(textOf(d.burst), text)
	ctx, cancel := n.svc.streamContext()
	d.cancel = cancel
	n.counts.requested++
	n.mu.Unlock()

	sent := time.Now()
	answer, err := n.stream(ctx, client, j)
	answered := time.Now()
	// Hung up: a newer edit (stopLocked) or the session's end.
	hungUp := errors.Is(context.Cause(ctx), context.Canceled)
	cancel()
	n.mu.Lock()
	hungUp = hungUp || d.seq != seq
	if d.seq == seq {
		d.cancel = nil
		if !hungUp {
			// Answered (or failed): the next edit begins a new burst.
			d.burst, d.noBurst = nil, true
		}
	}
	if err != nil && !hungUp && !errors.Is(err, provider.ErrBudget) {
		n.counts.failed++ // not one a budget kept from being sent
	}
	n.mu.Unlock()
	if err != nil && !hungUp {
		err = n.svc.failed(err)
		n.log.Debug("next edit failed", "path", req.Path, "error", err)
		return asked{}, false
	}
	if hungUp {
		return asked{}, false
	}
	return asked{answer: answer, text: text, key: j.key, typed: typed, sent: sent, answered: answered}, true
}

// show takes in a's judged answer to edit seq of d: the suggestion sug,
// or why there is none; prep is the server's time before it was sent.
func (n *NextEdits) show(d *nextDoc, seq uint64, req NextRequest, a asked, sug *NextSuggestion, why string, prep time.Duration) {
	text := a.text
	n.mu.Lock()
	n.counts.judged++
	n.counts.server += prep + time.Since(a.answered)
	switch {
	case n.off:
		// nextEdit.enable turned false while it was judged.
		n.mu.Unlock()
		return
	case d.seq != seq:
		// An edit arrived after the answer was complete: not shown.
		n.counts.stale++
		n.mu.Unlock()
		return
	case sug == nil && why == "":
		n.counts.empty++
		n.mu.Unlock()
		return
	case sug == nil:
		n.counts.refused++
		n.mu.Unlock()
		n.log.Debug("next edit not shown", "path", req.Path, "why", why)
		return
	case slices.Contains(d.dismissed, changeOf(text, sug.Edits)):
		n.counts.refused++
		n.mu.Unlock()
		n.log.Debug("next edit not shown", "path", req.Path, "why", "the user dismissed the same change")
		return
	}
	n.ids++
	sug.ID, sug.Version = n.ids, req.Doc.Version
	d.sug, d.base = sug, text
	n.shownLocked()
	n.mu.Unlock()
	n.changed(req.Key)
}

// stream sends j's request and returns the answer: nothing when it was cut
// off (a diff cut off is never applied) or ended for another reason than
// its end.
func (n *NextEdits) stream(ctx context.Context, client *model.Client, j *job) (string, error) {
	resp, err := n.svc.send(ctx, client, j)
	if resp == nil {
		return "", err
	}
	if err != nil || model.CheckFinish(resp.FinishReason, 0) != nil {
		return "", nil
	}
	return resp.Message.Content, nil
}

// typedLines returns the lines of cur (0-based, sorted ranges [from, to])
// that the change from before to cur wrote: the lines a suggestion must
// leave alone.
func typedLines(before, cur string) [][2]int {
	var out [][2]int
	shift := 0
	for _, u := range patch.LineEdits(before, cur) {
		start := u.Start + shift
		shift += len(u.NewText) - (u.End - u.Start)
		from := strings.Count(cur[:start], "\n")
		to := from + max(strings.Count(u.NewText, "\n")-1, 0)
		if u.NewText == "" {
			// A deletion: the lines on both sides of it now meet.
			from, to = max(from-1, 0), from
		}
		out = append(out, [2]int{from, to})
	}
	return out
}

// nextFromAnswer checks a model's answer against the text it was asked
// about and returns the suggestion, or nil with why it is not one ("" for
// an empty answer): the diff must apply cleanly (assist/patch), change
// this file only, leave the typed lines alone (insert no line inside a
// block of them), change at most nextEdit.maxLines lines and not write
// the API key. Hunks without a file header edit the active file; an
// answer mixing them with headed ones is refused.
func nextFromAnswer(answer, name, text string, typed [][2]int, cfg config.Config, key string) (*NextSuggestion, string) {
	if strings.TrimSpace(answer) == "" {
		return nil, ""
	}
	// Hunks before any file header (an answer of "@@" hunks only) are a
	// diff of the active file: a next edit changes no other.
	diffs, err := patch.Parse(answer, name)
	if err != nil {
		return nil, "does not apply: " + err.Error()
	}
	headed, bare := 0, 0
	for _, fd := range diffs {
		if len(fd.Hunks) > 0 && fd.Hunks[0].Pos == fd.Pos {
			bare++ // the file diff Parse opened for a hunk without a header
		} else {
			headed++
		}
	}
	if headed > 0 && bare > 0 {
		return nil, "hunks both with and without a file header"
	}
	set := patch.NewEditSet(activeFile{name: name, text: text}, patch.Options{Document: activePath(name), AllowBrokenGo: cfg.AllowInvalidGo})
	if err := set.ApplyFileDiffs(diffs); err != nil {
		return nil, "does not apply: " + err.Error()
	}
	changes, err := set.Changes()
	if err != nil {
		return nil, "does not apply: " + err.Error()
	}
	if len(changes) != 1 || changes[0].Kind != patch.ModifyFile {
		return nil, "not an edit of the active file"
	}
	after := changes[0].After
	if key != "" && strings.Contains(after, key) && !strings.Contains(text, key) {
		return nil, "writes the API key"
	}
	edits := patch.LineEdits(text, after)
	if len(edits) == 0 {
		return nil, ""
	}
	blocks := typedBlocks(typed)
	lines := 0
	for _, e := range edits {
		old := text[e.Start:e.End]
		lines += max(strings.Count(old, "\n")+boolInt(old != "" && !strings.HasSuffix(old, "\n")),
			strings.Count(e.NewText, "\n")+boolInt(e.NewText != "" && !strings.HasSuffix(e.NewText, "\n")))
		from := strings.Count(text[:e.Start], "\n")
		if e.Start == e.End {
			// Lines inserted before line from: inside a block of typed
			// lines they change it; before or after it they are not in it.
			for _, b := range blocks {
				if b[0] < from && from <= b[1] {
					return nil, fmt.Sprintf("inserts lines inside lines %d-%d, which the user just edited", b[0]+1, b[1]+1)
				}
			}
			continue
		}
		to := strings.Count(text[:e.End-1], "\n")
		for _, t := range typed {
			if from <= t[1] && t[0] <= to {
				return nil, fmt.Sprintf("changes line %d, which the user just edited", t[0]+1)
			}
		}
	}
	if lines > cfg.NextEdit.MaxLines {
		return nil, fmt.Sprintf("changes %d lines (nextEdit.maxLines is %d)", lines, cfg.NextEdit.MaxLines)
	}
	s := placed(0, 0, text, edits, "", lines)
	s.Summary = summarize(text, s)
	return s, ""
}

// typedBlocks joins typed line ranges (sorted, as typedLines returns them)
// that overlap or touch into blocks: the runs of lines typed together.
func typedBlocks(typed [][2]int) [][2]int {
	var out [][2]int
	for _, t := range typed {
		if n := len(out); n > 0 && t[0] <= out[n-1][1]+1 {
			out[n-1][1] = max(out[n-1][1], t[1])
			continue
		}
		out = append(out, t)
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// summarize returns one line saying what s changes: "`old` → `new`" for
// a change inside one line, else the first new line and the count.
func summarize(text string, s *NextSuggestion) string {
	old := text[s.Start:s.End]
	ol, nl := strings.Split(strings.TrimSuffix(old, "\n"), "\n"), strings.Split(strings.TrimSuffix(s.NewText, "\n"), "\n")
	if len(s.Edits) == 1 && len(ol) == 1 && len(nl) == 1 && old != "" && s.NewText != "" {
		a, b := ol[0], nl[0]
		p := 0
		for p < len(a) && p < len(b) && a[p] == b[p] {
			p++
		}
		q := 0
		for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
			q++
		}
		from, to := strings.TrimSpace(a[p:len(a)-q]), strings.TrimSpace(b[p:len(b)-q])
		switch {
		case from != "" && to != "":
			return clip("`"+from+"` → `"+to+"`", 80)
		case to != "":
			return clip("add `"+to+"`", 80)
		case from != "":
			return clip("remove `"+from+"`", 80)
		}
	}
	if strings.TrimSpace(s.NewText) == "" {
		return fmt.Sprintf("delete %d %s", len(ol), plural(len(ol), "line", "lines"))
	}
	first := ""
	for _, l := range nl {
		if l = strings.TrimSpace(l); l != "" {
			first = l
			break
		}
	}
	return clip(fmt.Sprintf("%s (%d %s)", first, s.Lines, plural(s.Lines, "line", "lines")), 80)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// clip shortens s to at most n runes.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// activeFile is the one file a next-edit diff may change, for the
// applier: every name whose base name is the active file's resolves to it.
type activeFile struct{ name, text string }

func activePath(name string) string { return "/" + path.Clean(strings.TrimPrefix(name, "/")) }

func (f activeFile) Resolve(p string) (string, error) {
	if path.Base(strings.ReplaceAll(p, "\\", "/")) == path.Base(f.name) {
		return activePath(f.name), nil
	}
	return "", fmt.Errorf("%q: %w (a next edit changes the active file only)", p, patch.ErrOutside)
}

func (f activeFile) Read(p string) (string, int32, error) {
	if p != activePath(f.name) {
		return "", 0, fmt.Errorf("%s: not the active file", p)
	}
	return f.text, patch.NoVersion, nil
}

// NextStats are next edits' figures for kimi.stats.
type NextStats struct {
	// Requested counts the provider requests; Shown the suggestions
	// offered; Accepted those the user applied; Dismissed those the user
	// dismissed; Stale those dropped because the user edited inside or
	// next to them (or before their answer was used).
	Requested int64 `json:"requested"`
	Shown     int64 `json:"shown"`
	Accepted  int64 `json:"accepted"`
	Dismissed int64 `json:"dismissed"`
	Stale     int64 `json:"stale"`
	// Refused counts answers never shown (the diff did not apply, changed
	// the lines just typed or too many lines, or made a change the user
	// dismissed); Empty the answers that
	// proposed nothing; Failed the streams that ended in an error;
	// Cancelled those a newer edit hung up.
	Refused   int64 `json:"refused"`
	Empty     int64 `json:"empty"`
	Failed    int64 `json:"failed"`
	Cancelled int64 `json:"cancelled"`
	// Displayed counts the suggestions an editor's own next-edit UI said
	// it displayed (Copilot's didShowInlineEdit), each once; Shown counts
	// every suggestion when it is placed, whoever displays it.
	Displayed int64 `json:"displayed"`
	// NotTyped counts the edits that asked nothing because they were not
	// the user's typing: Kimi's own edits, their undo or redo, reloads,
	// formats on save, edits made for another server (D79).
	NotTyped int64 `json:"notTyped"`
	// Checked counts the suggestions the helper language server checked
	// before they were shown; Broken those dropped because it found they
	// add an error (D79). CheckMsPerSuggestion is a check's mean time, in
	// milliseconds.
	Checked              int64   `json:"checked"`
	Broken               int64   `json:"broken"`
	CheckMsPerSuggestion float64 `json:"checkMsPerSuggestion"`
	// ServerMsPerAnswer is the server's own time per answer judged, in
	// milliseconds: building the prompt (relevance snippets included),
	// placing the diff and its checks; the provider's time is not in it.
	ServerMsPerAnswer float64 `json:"serverMsPerAnswer"`
	// Stats are the prompt accounting: tokens, cache hit ratio and cost.
	cache.Stats
}

// Stats returns the figures so far.
func (n *NextEdits) Stats() NextStats {
	n.mu.Lock()
	defer n.mu.Unlock()
	k := n.counts
	st := NextStats{Requested: k.requested, Shown: k.shown, Accepted: k.accepted, Dismissed: k.dismissed, Stale: k.stale,
		Refused: k.refused, Empty: k.empty, Failed: k.failed, Cancelled: k.cancelled, Displayed: k.displayed, Stats: n.retired,
		NotTyped: k.notTyped, Checked: k.checked, Broken: k.broken}
	if k.checked > 0 {
		st.CheckMsPerSuggestion = float64(k.checkTime.Microseconds()) / 1000 / float64(k.checked)
	}
	if k.judged > 0 {
		st.ServerMsPerAnswer = float64(k.server.Microseconds()) / 1000 / float64(k.judged)
	}
	for _, d := range n.docs {
		d.prompt.addStatsTo(&st.Stats)
	}
	setHitRatio(&st.Stats)
	return st
}
