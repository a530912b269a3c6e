package complete

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Limits of the completer.
const (
	// MaxStreams bounds the provider streams of all documents together
	// (each document has at most one).
	MaxStreams = 4
	// StreamTimeout bounds one provider stream: a suggestion later than
	// this is of no use, and Helix gives up on a request after 20 s.
	StreamTimeout = 15 * time.Second
	// maxDocs bounds the documents whose state (last suggestion, prompt
	// layout) is kept; the least recently completed go first.
	maxDocs = 16
	// maxTyped bounds how far type-ahead follows a suggestion.
	maxTyped = 4 << 10
	// matchBytes bounds the text around a suggestion's place that must be
	// unchanged for type-ahead and for a later request to use a stream.
	matchBytes = 2 << 10
	// defaultPause is how long completion pauses after a rate limit that
	// gave no Retry-After.
	defaultPause = 10 * time.Second
)

// Errors of Complete.
var (
	// ErrPaused: the provider rate-limited completion a moment ago; no
	// request is sent until the pause ends.
	ErrPaused = errors.New("completion paused after a rate limit")
	// ErrKeyRefused: the provider refused the API key; no request is sent
	// with that key again.
	ErrKeyRefused = errors.New("the provider refused the API key")
)

// Trigger says how a completion was asked for.
type Trigger int

const (
	// Automatic: as the user types; the request waits for a pause.
	Automatic Trigger = iota
	// Invoked: asked for explicitly; no wait.
	Invoked
)

// Request is one completion request.
type Request struct {
	// Key identifies the document (its URI): one stream per key.
	Key string
	// Path is the workspace-relative path the model sees.
	Path string
	// Language is the document's language id.
	Language string
	// Doc is the document's text as of the request.
	Doc *workspace.Snapshot
	// Offset is the cursor's byte offset in Doc.
	Offset int
	// Trigger says whether the user is typing or asked.
	Trigger Trigger
	// Order numbers the requests in the order the editor sent them, when
	// they may reach Complete in another (each runs in its own goroutine);
	// a request older than one already seen on its document is superseded
	// at once. Zero: the order of the calls.
	Order uint64
	// Project names the workspace.
	Project string
	// Folders and Open give the prompt the definitions the code around the
	// cursor uses (relevance.Choose, the ranking actions use too), chosen
	// when the prompt's layout is made and kept while it lasts. Nil
	// Folders: the active file only.
	Folders *workspace.Folders
	Open    []*workspace.Snapshot
}

// Suggestion is a completion: Text replaces the document's bytes
// [Start, Offset) — what the user typed of an earlier suggestion, or
// nothing — so that inserting Insert at the cursor gives the same result.
type Suggestion struct {
	Start  int
	Text   string
	Insert string
	// Reused is set when the suggestion came from an earlier one the user
	// is typing, without a provider request.
	Reused bool
}

// completionSurface names inline completion for the shared services.
var completionSurface = Surface{Budget: "inline completion", Record: spend.SurfaceCompletion, System: System, Action: "complete"}

// Options configure a Completer.
type Options struct {
	// Config returns the current configuration; it is read per request, so
	// every completion setting applies to the next request.
	Config func() config.Config
	// Services are the client, pause, budget gate and stream slots the
	// Completer shares with the other surfaces (next edits). Nil: its own,
	// made from HTTPClient, Logger and Ledger.
	Services *Services
	// HTTPClient, if set, sends the model requests (tests); used only
	// when Services is nil.
	HTTPClient *http.Client
	// Logger receives debug records; nil means the Services' logger.
	Logger *slog.Logger
	// Ledger, if set, records every request and applies the budgets: while
	// one is spent no request is sent (an error wrapping
	// provider.ErrBudget; the ledger tells the user once). Used only when
	// Services is nil.
	Ledger *provider.Ledger
}

// Completer answers completion requests: one provider stream per document
// at a time, debounced, with type-ahead reuse. It is one surface of the
// package: what it shares with the others it gets through its Services.
// It is safe for concurrent use.
type Completer struct {
	opts Options
	svc  *Services
	log  *slog.Logger

	// mu guards everything below and every docState.
	mu      sync.Mutex
	docs    map[string]*docState
	counts  counts
	retired cache.Stats // totals of dropped sessions
}

// docState is one document's completion state.
// Precondition for every field: Completer.mu is held.
type docState struct {
	key     string
	seq     uint64        // Order of the latest request
	newer   chan struct{} // closed when a newer request arrives
	flight  *flight       // the provider stream, if one runs
	last    *memo         // the latest suggestion
	prompt  docPrompt     // its session and layout
	touched time.Time
}

// place is where a suggestion was asked for: the cursor offset and the
// text around it, which a later request must still have to use it.
type place struct {
	off           int
	before, after string
	bof, eof      bool // before starts at the beginning of the text, after ends at its end
}

// placeOf records the place of req's cursor.
func placeOf(doc *workspace.Snapshot, off int) place {
	p := place{off: off}
	lo, hi := max(0, off-matchBytes), min(doc.Len(), off+matchBytes)
	p.before, p.after = doc.Slice(lo, off), doc.Slice(off, hi)
	p.bof, p.eof = lo == 0, hi == doc.Len()
	return p
}

// extends reports whether doc with the cursor at off is p's text with
// something typed at p's cursor, and returns what.
func (p place) extends(doc *workspace.Snapshot, off int) (string, bool) {
	n := doc.Len()
	switch {
	case off < p.off || off-p.off > maxTyped || off+len(p.after) > n:
		return "", false
	case p.eof && n-off != len(p.after):
		return "", false
	case doc.Slice(p.off-len(p.before), p.off) != p.before || doc.Slice(off, off+len(p.after)) != p.after:
		return "", false
	}
	return doc.Slice(p.off, off), true
}

// memo is a suggestion of a finished stream.
type memo struct {
	place
	text string // to insert at place.off
}

// flight is a provider stream of one document.
type flight struct {
	place
	cancel  context.CancelFunc
	done    chan struct{}
	waiters int  // requests waiting for it
	ended   bool // done is closed, or about to be
	// Set before done is closed:
	text string
	err  error
}

// New returns a Completer.
func New(opts Options) *Completer {
	if opts.Config == nil {
		opts.Config = config.Default
	}
	svc := opts.Services
	if svc == nil {
		svc = NewServices(ServicesOptions{HTTPClient: opts.HTTPClient, Logger: opts.Logger, Ledger: opts.Ledger})
	}
	log := opts.Logger
	if log == nil {
		log = svc.logger()
	}
	return &Completer{opts: opts, svc: svc, log: log, docs: make(map[string]*docState)}
}

// Forget drops a document's state (it was closed) and stops its stream.
func (c *Completer) Forget(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.docs[key]; d != nil {
		c.dropLocked(d)
	}
}

// dropLocked forgets d. Precondition: c.mu is held.
func (c *Completer) dropLocked(d *docState) {
	if d.flight != nil {
		c.hangUpLocked(d, d.flight)
	}
	d.prompt.retire(&c.retired)
	delete(c.docs, d.key)
}

// docLocked returns key's state, making room for it.
// Precondition: c.mu is held.
func (c *Completer) docLocked(key string) *docState {
	d := c.docs[key]
	if d == nil {
		if len(c.docs) >= maxDocs {
			var oldest *docState
			for _, o := range c.docs {
				if o.flight == nil && (oldest == nil || o.touched.Before(oldest.touched)) {
					oldest = o
				}
			}
			if oldest != nil {
				c.dropLocked(oldest)
			}
		}
		d = &docState{key: key, newer: make(chan struct{})}
		c.docs[key] = d
	}
	d.touched = time.Now()
	return d
}

// hangUpLocked stops f and forgets it. Precondition: c.mu is held.
func (c *Completer) hangUpLocked(d *docState, f *flight) {
	if !f.ended {
		f.cancel()
		c.counts.cancelled++
	}
	if d.flight == f {
		d.flight = nil
	}
}

// leave detaches a waiting request from f; the last one to leave a stream
// that has not ended hangs it up (no newer request can use it: a newer
// request that could would have joined it).
func (c *Completer) leave(d *docState, f *flight) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f.waiters--
	if f.waiters == 0 && !f.ended {
		c.hangUpLocked(d, f)
	}
}

// Complete answers req: from the latest suggestion when the user has typed
// its beginning (no provider request), from the document's running stream
// when req only adds typed text to where it was asked, or from a new stream
// after the debounce (Automatic). It returns nil without error when there
// is nothing to suggest, when a newer request on the same document
// supersedes req, or when ctx ends ($/cancelRequest; the error is then
// ctx's).
func (c *Completer) Complete(ctx context.Context, req Request) (*Suggestion, error) {
	cfg := c.opts.Config()
	if req.Offset < 0 || req.Offset > req.Doc.Len() {
		return nil, fmt.Errorf("completion: cursor offset %d outside the text of %d bytes", req.Offset, req.Doc.Len())
	}
	c.mu.Lock()
	c.counts.requested++
	d := c.docLocked(req.Key)
	seq := req.Order
	if seq == 0 {
		seq = d.seq + 1
	}
	if seq <= d.seq {
		// A newer request on the document came first.
		c.counts.superseded++
		c.mu.Unlock()
		return nil, nil
	}
	d.seq = seq
	close(d.newer)
	d.newer = make(chan struct{})
	newer := d.newer

	if m := d.last; m != nil {
		if typed, ok := m.extends(req.Doc, req.Offset); ok && len(typed) < len(m.text) && strings.HasPrefix(m.text, typed) {
			c.counts.reused++
			c.counts.shown++
			c.mu.Unlock()
			return &Suggestion{Start: m.off, Text: m.text, Insert: m.text[len(typed):], Reused: true}, nil
		}
	}
	var typed string
	f := d.flight
	if f != nil {
		if t, ok := f.extends(req.Doc, req.Offset); ok {
			typed = t
			f.waiters++
		} else {
			// Older requests are superseded: nobody can use it.
			c.hangUpLocked(d, f)
			f = nil
		}
	}
	c.mu.Unlock()

	wait := req.Trigger == Automatic
	for {
		if f == nil {
			if wait && cfg.Completion.DebounceMS > 0 {
				t := time.NewTimer(time.Duration(cfg.Completion.DebounceMS) * time.Millisecond)
				select {
				case <-t.C:
				case <-ctx.Done():
					t.Stop()
					return nil, ctx.Err()
				case <-newer:
					t.Stop()
					c.superseded()
					return nil, nil
				}
			}
			var err error
			if f, err = c.start(d, seq, req, cfg); err != nil || f == nil {
				return nil, err
			}
			typed = ""
		}
		select {
		case <-f.done:
		case <-ctx.Done():
			c.leave(d, f)
			return nil, ctx.Err()
		case <-newer:
			c.leave(d, f)
			c.superseded()
			return nil, nil
		}
		c.leave(d, f)
		if f.err != nil {
			return nil, f.err
		}
		if len(typed) < len(f.text) && strings.HasPrefix(f.text, typed) {
			c.mu.Lock()
			c.counts.shown++
			c.mu.Unlock()
			return &Suggestion{Start: f.off, Text: f.text, Insert: f.text[len(typed):]}, nil
		}
		if typed == "" {
			return nil, nil
		}
		// The user typed past or away from the stream's suggestion while it
		// ran: ask again for where the cursor is now, without a second wait.
		f, wait = nil, false
	}
}

func (c *Completer) superseded() {
	c.mu.Lock()
	c.counts.superseded++
	c.mu.Unlock()
}

// spec is completion's prompt: what it differs in from the other
// surfaces' (promptSpec).
func (c *Completer) spec(cfg config.Config) promptSpec {
	cc := cfg.Completion
	return promptSpec{
		surface: completionSurface,
		session: fmt.Sprintf("%d/%s", cc.MaxContextTokens, cfg.CacheTTL),
		model:   cfg.CompletionModel(), effort: cc.ReasoningEffort,
		budgetTokens: cc.MaxContextTokens, answerTokens: cc.MaxCompletionTokens,
		windowLines: tailLines, above: completionAbove, lead: "Inline completion in", what: "completion",
	}
}

// start starts d's stream for req, unless a newer request came, and joins
// it.
func (c *Completer) start(d *docState, seq uint64, req Request, cfg config.Config) (*flight, error) {
	if err := c.svc.background(completionSurface); err != nil {
		return nil, err
	}
	spec := c.spec(cfg)
	in := promptInput{path: req.Path, language: req.Language, project: req.Project, doc: req.Doc, cursor: req.Offset}
	related := relatedFor(&c.mu, &d.prompt, req.Folders, req.Open, in, spec)
	c.mu.Lock()
	defer c.mu.Unlock()
	if d.seq != seq {
		c.counts.superseded++
		return nil, nil
	}
	client, err := c.svc.clientFor(cfg)
	if err != nil {
		return nil, err
	}
	if d.flight != nil { // not one this request can use
		c.hangUpLocked(d, d.flight)
	}
	// A stream outlives the request that started it while a later one
	// waits for it, and ends when the last waiting request leaves (see
	// leave): the session's end cancels every request, so every stream.
	ctx, cancel := c.svc.streamContext()
	f := &flight{place: placeOf(req.Doc, req.Offset), cancel: cancel, done: make(chan struct{}), waiters: 1}
	d.flight = f
	c.counts.provider++
	job, err := c.promptLocked(d, req, cfg, related)
	if err != nil {
		f.ended = true
		d.flight = nil
		cancel()
		return nil, err
	}
	if !c.svc.goStream(func() { c.fly(ctx, d, f, client, job) }) {
		// The services are closed: the session has ended.
		f.ended = true
		d.flight = nil
		cancel()
		return nil, context.Canceled
	}
	return f, nil
}

// promptLocked lays out req's prompt in d's session (layout.go) and adds
// what its answer is normalised against.
// Precondition: c.mu is held.
func (c *Completer) promptLocked(d *docState, req Request, cfg config.Config, related []cache.Document) (*job, error) {
	in := promptInput{path: req.Path, language: req.Language, project: req.Project, doc: req.Doc, cursor: req.Offset}
	j, err := d.prompt.build(in, cfg, c.spec(cfg), related, &c.retired, c.log)
	if err != nil {
		return nil, err
	}
	j.around = Around{
		Before:   req.Doc.Slice(req.Offset-aroundBefore, req.Offset),
		After:    req.Doc.Slice(req.Offset, req.Offset+aroundAfter),
		Language: req.Language, MaxLines: cfg.Completion.MaxLines,
	}
	return j, nil
}

// fly runs f's stream and records its answer.
func (c *Completer) fly(ctx context.Context, d *docState, f *flight, client *model.Client, j *job) {
	defer f.cancel()
	text, err := c.answer(ctx, client, j)
	c.mu.Lock()
	f.ended = true
	if d.flight == f {
		d.flight = nil
	}
	switch {
	case err == nil:
		if text != "" {
			d.last = &memo{place: f.place, text: text}
		}
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled):
		err = context.Canceled // hung up
	case errors.Is(err, provider.ErrBudget):
		// Not sent: its estimate did not fit what is left of a budget.
	default:
		c.counts.failed++
		err = c.svc.failed(err)
	}
	f.text, f.err = text, err
	c.mu.Unlock()
	close(f.done)
}

// answer streams j's answer and normalises it. This goroutine is no
// request's: a panic on the way (a model reply breaking a parser) is
// recovered here, logged with its stack, and fails this completion only.
func (c *Completer) answer(ctx context.Context, client *model.Client, j *job) (text string, err error) {
	defer func() {
		if r := recover(); r != nil {
			text, err = "", provider.Recovered(c.log, "a completion stream", r)
		}
	}()
	text, err = c.stream(ctx, client, j)
	if err != nil {
		return "", err
	}
	text = Normalize(text, j.around)
	if j.key != "" && strings.Contains(text, j.key) {
		// The provider echoed the key: ghost text is one key press from
		// being written into the file (model edits are refused alike).
		c.log.Warn("completion dropped: the suggestion holds the API key")
		return "", nil
	}
	return text, nil
}

// stream sends j's request and returns the answer's text: its complete
// lines when it was cut off at the token budget, nothing when it ended for
// a reason outside the seed's enum (a content filter). Its usage is
// recorded when the answer ends (a stream hung up has none to record).
func (c *Completer) stream(ctx context.Context, client *model.Client, j *job) (string, error) {
	resp, err := c.svc.send(ctx, client, j)
	if resp == nil {
		return "", err
	}
	if err != nil {
		return "", nil // thinking used the whole budget: no suggestion
	}
	text := resp.Message.Content
	switch {
	case resp.FinishReason == model.FinishLength:
		// Cut off at the budget: its last line may stop mid-word.
		text = text[:max(strings.LastIndexByte(text, '\n'), 0)]
	case model.CheckFinish(resp.FinishReason, 0) != nil:
		c.log.Debug("completion dropped", "finish_reason", string(resp.FinishReason))
		return "", nil
	}
	return text, nil
}
