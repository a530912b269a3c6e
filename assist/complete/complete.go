package complete

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
	"github.com/kimi-lsp/kimi-lsp/workspace/relevance"
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

// Options configure a Completer.
type Options struct {
	// Config returns the current configuration; it is read per request, so
	// every completion setting applies to the next request.
	Config func() config.Config
	// HTTPClient, if set, sends the model requests (tests).
	HTTPClient *http.Client
	// Logger receives debug records; nil means slog.Default().
	Logger *slog.Logger
	// Ledger, if set, records every request and applies the budgets: while
	// one is spent no request is sent (an error wrapping
	// provider.ErrBudget; the ledger tells the user once).
	Ledger *provider.Ledger
}

// Completer answers completion requests: one provider stream per document
// at a time, debounced, with type-ahead reuse. It is safe for concurrent
// use.
type Completer struct {
	opts    Options
	log     *slog.Logger
	slots   chan struct{}
	noUsage sync.Once // the log says once that replies carry no usage

	// mu guards everything below and every docState.
	mu         sync.Mutex
	docs       map[string]*docState
	clientID   string
	client     *model.Client
	badKey     error  // the provider refused the key of clientID
	sessionID  string // settings the sessions were made with
	pauseUntil time.Time
	counts     counts
	retired    cache.Stats // totals of dropped sessions
}

// docState is one document's completion state.
// Precondition for every field: Completer.mu is held.
type docState struct {
	key     string
	seq     uint64        // Order of the latest request
	newer   chan struct{} // closed when a newer request arrives
	flight  *flight       // the provider stream, if one runs
	last    *memo         // the latest suggestion
	sess    *cache.Session
	layout  *layout
	touched time.Time
}

// layout is what a document's prompts show while it lasts: the window of
// the active file and the related snippets.
type layout struct {
	win     window
	related []cache.Document
	project cache.Project
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
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Completer{opts: opts, log: log, slots: make(chan struct{}, MaxStreams), docs: make(map[string]*docState)}
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
	if d.sess != nil {
		addStats(&c.retired, d.sess.Stats())
	}
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

// start starts d's stream for req, unless a newer request came, and joins
// it.
func (c *Completer) start(d *docState, seq uint64, req Request, cfg config.Config) (*flight, error) {
	if err := c.opts.Ledger.Background("inline completion"); err != nil {
		return nil, err
	}
	b := splitBudget(cfg.Completion.MaxContextTokens)
	c.mu.Lock()
	relayout := d.layout == nil || !d.layout.win.fits(req.Doc, req.Offset, b.windowBytes(d.layout.relatedBytes()))
	c.mu.Unlock()
	var related []cache.Document
	if relayout && req.Folders != nil {
		// Outside the lock: the ranking takes milliseconds. It leaves out
		// what the window shows, asked with the widest window.
		w := chooseWindow(req.Doc, req.Offset, b.windowBytes(0))
		start, end := w.bounds(req.Doc)
		related = fitRelated(relevance.Choose(relevance.Workspace(req.Folders), relevance.Request{
			Active: req.Doc, SelStart: req.Offset, SelEnd: req.Offset, Snippets: true, ShownStart: start, ShownEnd: end,
			Open: req.Open, MaxTokens: b.relatedTokens, Bytes: cache.Estimator{}.Bytes,
		}).Stable, req.Path, b.relatedTokens)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d.seq != seq {
		c.counts.superseded++
		return nil, nil
	}
	if now := time.Now(); now.Before(c.pauseUntil) {
		return nil, fmt.Errorf("%w for %s", ErrPaused, c.pauseUntil.Sub(now).Round(time.Second))
	}
	client, err := c.clientLocked(cfg)
	if err != nil {
		return nil, err
	}
	if d.flight != nil { // not one this request can use
		c.hangUpLocked(d, d.flight)
	}
	// A stream outlives the request that started it while a later one
	// waits for it, and ends when the last waiting request leaves (see
	// leave): the session's end cancels every request, so every stream.
	ctx, cancel := context.WithTimeout(context.Background(), StreamTimeout)
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
	go c.fly(ctx, d, f, client, job)
	return f, nil
}

// clientLocked returns the model client for cfg's endpoint and key, or
// the error that the key is missing or was refused.
// Precondition: c.mu is held.
func (c *Completer) clientLocked(cfg config.Config) (*model.Client, error) {
	if _, err := provider.Key(cfg); err != nil {
		return nil, err
	}
	id := provider.Identity(cfg)
	if c.client == nil || id != c.clientID {
		// A suggestion is no use after a retry's wait: one attempt.
		c.client = provider.NewClient(cfg, provider.ClientOptions{HTTPClient: c.opts.HTTPClient, Logger: c.log, MaxAttempts: 1})
		c.clientID, c.badKey = id, nil
	}
	if c.badKey != nil {
		return nil, c.badKey
	}
	return c.client, nil
}

// job is a built prompt and what is needed to read its answer.
type job struct {
	sess   *cache.Session
	prompt *cache.Prompt
	req    *model.Request
	around Around
	key    string // the API key: a suggestion holding it is dropped
	call   *provider.Call
	// what names the surface for the budgets ("inline completion", "next
	// edits"); usd is the request's estimate, reserved when it is sent.
	what string
	usd  float64
}

// promptLocked lays out req's prompt in d's session.
// Precondition: c.mu is held.
func (c *Completer) promptLocked(d *docState, req Request, cfg config.Config, related []cache.Document) (*job, error) {
	cc := cfg.Completion
	b := splitBudget(cc.MaxContextTokens)
	sid := fmt.Sprintf("%d/%s", cc.MaxContextTokens, cfg.CacheTTL)
	if sid != c.sessionID {
		// The budget or the TTL changed: new sessions from now on.
		for _, o := range c.docs {
			if o.sess != nil {
				addStats(&c.retired, o.sess.Stats())
				o.sess, o.layout = nil, nil
			}
		}
		c.sessionID = sid
	}
	if d.sess == nil {
		s, err := cache.NewSession(cache.Config{
			System:       System,
			Model:        cfg.CompletionModel(),
			Prices:       provider.Prices(cfg),
			TTL:          cfg.CacheTTLDuration(),
			BudgetTokens: cc.MaxContextTokens,
			MaxLogTokens: b.logTokens,
			WindowLines:  tailLines,
			WindowBytes:  tailBytes,
			Logger:       c.log,
		})
		if err != nil {
			return nil, err
		}
		d.sess = s
	}
	if d.layout == nil || !d.layout.win.fits(req.Doc, req.Offset, b.windowBytes(d.layout.relatedBytes())) {
		rb := 0
		for _, r := range related {
			rb += len(r.Text)
		}
		w := chooseWindow(req.Doc, req.Offset, b.windowBytes(rb))
		d.layout = &layout{win: w, related: related, project: projectFor(req.Project, req.Path, w)}
	}
	l := d.layout
	start, end := l.win.bounds(req.Doc)
	docs := append(slices.Clip(l.related), cache.Document{
		Path: req.Path, Language: req.Language, Text: req.Doc.Slice(start, end),
		Version: req.Doc.Version, LastEdited: int64(len(l.related)),
	})
	at := req.Offset - start
	name := cfg.CompletionModel()
	p, err := d.sess.Build(cache.Request{
		Project: l.project, Documents: docs, Active: req.Path,
		Selection: cache.Selection{Start: at, End: at},
		Action:    "complete", Model: name,
	})
	if err != nil {
		return nil, fmt.Errorf("building the completion prompt: %w", err)
	}
	effort, _ := config.EffortFor(name, cc.ReasoningEffort) // kimi-k3: max only
	key, _ := cfg.Key()
	return &job{
		what: "inline completion", usd: provider.Estimate(cfg, name, p, cc.MaxCompletionTokens),
		call:   &provider.Call{Surface: spend.SurfaceCompletion, Files: provider.Held(p), Key: key},
		key:    key,
		sess:   d.sess,
		prompt: p,
		req: &model.Request{
			Model: name, Messages: provider.Messages(p.Messages),
			ReasoningEffort:     string(effort),
			MaxCompletionTokens: cc.MaxCompletionTokens,
			PromptCache:         model.ImplicitCache(cfg.CacheTTL),
		},
		around: Around{
			Before:   req.Doc.Slice(req.Offset-aroundBefore, req.Offset),
			After:    req.Doc.Slice(req.Offset, req.Offset+aroundAfter),
			Language: req.Language, MaxLines: cc.MaxLines,
		},
	}, nil
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
		err = c.failedLocked(err)
	}
	f.text, f.err = text, err
	c.mu.Unlock()
	close(f.done)
}

// failedLocked takes in a failed stream's error (completion's or a next
// edit's): a rate limit pauses both, a refused key stops both until it
// changes. It returns the error to report. Precondition: c.mu is held.
func (c *Completer) failedLocked(err error) error {
	var apiErr *model.APIError
	switch {
	case errors.Is(err, model.ErrRateLimited):
		wait := defaultPause
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			wait = apiErr.RetryAfter
		}
		c.pauseUntil = time.Now().Add(wait)
	case errors.Is(err, model.ErrUnauthorized):
		err = fmt.Errorf("%w: %w", ErrKeyRefused, err)
		c.badKey = err
	}
	return err
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
	resp, err := c.send(ctx, client, j)
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

// send takes a stream slot, sends j's request through the ledger (which
// records it), collects the reply and accounts for its usage. It returns
// no response with the error of a request that failed or was hung up, and
// the response with model.ErrNoAnswer when thinking used the whole budget.
// Completion and next edits both send through it.
func (c *Completer) send(ctx context.Context, client *model.Client, j *job) (*model.Response, error) {
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The estimate is held against the budgets from here to the end: a
	// request that does not fit what is left is not sent (no question).
	res, err := c.opts.Ledger.ReserveBackground(j.what, j.usd)
	if err != nil {
		return nil, err
	}
	defer res.Release() // a panic never leaks it
	sent := false
	s, err := c.opts.Ledger.Stream(ctx, client, j.req, &model.Trace{Sent: func([]byte) { sent = true }}, j.call)
	if err != nil {
		a := cache.Accounting{}
		if sent && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			// Hung up before the reply's headers came: the provider may
			// have read the prompt already (and bill it).
			a = c.lost(j, &model.Response{})
		}
		c.opts.Ledger.Settle(res, j.call, j.req.Model, a, err)
		return nil, err
	}
	resp, err := model.Collect(s)
	if err != nil && !errors.Is(err, model.ErrNoAnswer) {
		c.opts.Ledger.Settle(res, j.call, j.req.Model, c.lost(j, resp), err)
		return nil, err
	}
	c.opts.Ledger.Settle(res, j.call, j.req.Model, c.record(j, resp), err)
	return resp, err
}

// lost accounts for a request that ended short of its reply's end: hung
// up after its body left (superseded by typing, cancelled, timed out),
// before its reply began or during it, or broken off. The provider may
// have read its prompt and bill it, and what it wrote, so the budgets
// count it: at the usage the reply carried, if any, else at kimi-lsp's
// estimate of the prompt and of the partial reply, as an action's is
// (streamingCompleter.account). A request refused before its reply began
// (an error status, a connection that failed) is counted as nothing.
func (c *Completer) lost(j *job, resp *model.Response) cache.Accounting {
	cu, _ := usageOf(j, resp)
	return c.account(j, cu)
}

// record accounts for resp's usage; a reply without usage (servers that
// send it only when asked) is counted from kimi-lsp's own estimate, as the
// actions' replies are (provider.EstimateUsage), and the log says so once.
func (c *Completer) record(j *job, resp *model.Response) cache.Accounting {
	cu, estimated := usageOf(j, resp)
	if estimated {
		c.noUsage.Do(func() {
			c.log.Info("the provider sends no usage with its completions: kimi.stats counts kimi-lsp's own token estimates for them (completion.estimatedUsage)", "model", j.req.Model)
		})
	}
	return c.account(j, cu)
}

// usageOf is resp's usage, or, for a reply without one, kimi-lsp's
// estimate of the prompt and of what the reply holds (estimated set).
func usageOf(j *job, resp *model.Response) (cu cache.Usage, estimated bool) {
	if resp.Usage != nil {
		return provider.Usage(resp.Usage), false
	}
	return provider.EstimateUsage(j.sess.EstimateTokens, j.prompt.EstimatedTokens, j.prompt.PredictedCachedTokens, resp.Message), true
}

// account records cu in the request's prompt session.
func (c *Completer) account(j *job, cu cache.Usage) cache.Accounting {
	a, err := j.sess.Record(j.prompt.Handle, cu)
	if err != nil {
		c.log.Debug("completion usage not recorded", "error", err)
	}
	return a
}
