package complete

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

// This file is the surface contract: what the package's model surfaces
// (completion.go's Completer, nextedit.go's NextEdits, and any surface
// added next) share, and the one way each gets it. A surface is its own
// unit — its type, its state and lock, its prompt's differences
// (promptSpec), its delivery — and reaches the shared services through a
// *Services only, never through another surface's fields or lock.

// Surface names one model surface for the shared services.
type Surface struct {
	// Budget names it for the budgets and the ledger's notices ("inline
	// completion", "next edits"): provider.Ledger.Background and
	// ReserveBackground.
	Budget string
	// Record is its name in the request record (spend.SurfaceCompletion,
	// spend.SurfaceNextEdit, …).
	Record string
	// System is its constant system message: the start of every cached
	// prefix of its sessions.
	System string
	// Action names its request block ("complete", "next-edit").
	Action string
}

// ServicesOptions configure the shared services.
type ServicesOptions struct {
	// HTTPClient, if set, sends the model requests (tests).
	HTTPClient *http.Client
	// Logger receives debug records; nil means slog.Default().
	Logger *slog.Logger
	// Ledger, if set, records every request and applies the budgets:
	// while one is spent no request is sent (an error wrapping
	// provider.ErrBudget; the ledger tells the user once).
	Ledger *provider.Ledger
	// Context ends every stream of every surface (the session's end);
	// nil: Background. Close ends them too, and waits for them.
	Context context.Context
}

// Services are what the model surfaces of the package share: the model
// client made from the configuration (provider.NewClient, one attempt),
// the pause after a rate limit and the refused key (a failure of one
// surface stops them all), the budget gate (the ledger's Background and
// ReserveBackground, whose cap notice the ledger gives once), the
// MaxStreams stream slots, the stream's context (StreamTimeout under the
// session's end), the goroutines the streams run on (goStream; Close ends
// and waits for them) and the sending, recording and accounting of a
// request. A surface keeps its own cache sessions (docPrompt) and names
// itself with a Surface. It is safe for concurrent use.
//
// Lock order: a surface may call Services with its own lock held;
// Services never calls a surface.
type Services struct {
	opts    ServicesOptions
	log     *slog.Logger
	ctx     context.Context    // every stream's parent: Options.Context, ended by Close
	stop    context.CancelFunc // ends ctx
	slots   chan struct{}
	noUsage sync.Once // the log says once that replies carry no usage

	// streams are the goroutines started by goStream and by the pauses
	// of afterFunc; Close waits for them. streamsMu guards closed and
	// pauses (the pending ones, which Close stops), and orders the Adds
	// before Close's Wait.
	streams   sync.WaitGroup
	streamsMu sync.Mutex
	closed    bool
	pauses    map[*ownedTimer]struct{}

	// mu guards the fields below.
	mu         sync.Mutex
	clientID   string
	client     *model.Client
	badKey     error // the provider refused the key of clientID
	pauseUntil time.Time
}

// NewServices returns the services the surfaces of one session share.
func NewServices(opts ServicesOptions) *Services {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	parent := opts.Context
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := context.WithCancel(parent)
	opts.Ledger.Backgrounds(completionSurface.Budget, nextSurface.Budget)
	return &Services{opts: opts, log: log, ctx: ctx, stop: stop, slots: make(chan struct{}, MaxStreams)}
}

// goStream runs fn, a surface's stream, on a goroutine the services own:
// Close waits for it. After Close it runs nothing and returns false.
func (s *Services) goStream(fn func()) bool {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if s.closed {
		return false
	}
	s.streams.Add(1)
	go func() {
		defer s.streams.Done()
		fn()
	}()
	return true
}

// ownedTimer is a surface's pause (afterFunc): its function runs on a
// goroutine the services own, and Close stops it or waits for it.
type ownedTimer struct {
	s *Services
	t *time.Timer
}

// afterFunc runs fn after wait on a goroutine the services own, as
// goStream does: Close stops the pause if it is still pending, else waits
// for fn to end; fn recovers its own panics. After Close it schedules
// nothing and returns nil.
func (s *Services) afterFunc(wait time.Duration, fn func()) *ownedTimer {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if s.closed {
		return nil
	}
	t := &ownedTimer{s: s}
	s.streams.Add(1)
	if s.pauses == nil {
		s.pauses = map[*ownedTimer]struct{}{}
	}
	s.pauses[t] = struct{}{}
	t.t = time.AfterFunc(wait, func() {
		defer s.streams.Done()
		s.streamsMu.Lock()
		delete(s.pauses, t)
		s.streamsMu.Unlock()
		fn()
	})
	return t
}

// Stop stops the pause: false when its function has started (it runs to
// its end, and Close waits for it) or it was stopped before. A nil pause
// is none.
func (t *ownedTimer) Stop() bool {
	if t == nil {
		return false
	}
	t.s.streamsMu.Lock()
	defer t.s.streamsMu.Unlock()
	return t.stopLocked()
}

// stopLocked is Stop. Precondition: t.s.streamsMu is held.
func (t *ownedTimer) stopLocked() bool {
	if _, pending := t.s.pauses[t]; !pending || !t.t.Stop() {
		return false
	}
	delete(t.s.pauses, t)
	t.s.streams.Done()
	return true
}

// Close ends every stream of every surface (their context is cancelled)
// and every pending pause (afterFunc), and returns once the goroutines
// started for them (goStream, the pauses that had fired) have ended; no
// stream or pause starts after it. The session calls it at its end. A
// stream ends at its next step once cancelled: its request is hung up.
func (s *Services) Close() {
	s.streamsMu.Lock()
	s.closed = true
	for t := range s.pauses {
		t.stopLocked()
	}
	s.streamsMu.Unlock()
	s.stop()
	s.streams.Wait()
}

// logger is the services' logger, a surface's default.
func (s *Services) logger() *slog.Logger { return s.log }

// background is the budget's say before a surface's request: an error
// wrapping provider.ErrBudget while a budget is spent (the ledger has told
// the user once).
func (s *Services) background(sf Surface) error {
	return s.opts.Ledger.Background(sf.Budget)
}

// clientFor returns the model client for cfg's endpoint and key, or
// ErrPaused while a rate limit's pause lasts, or the error that the key is
// missing or was refused.
func (s *Services) clientFor(cfg config.Config) (*model.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := time.Now(); now.Before(s.pauseUntil) {
		return nil, fmt.Errorf("%w for %s", ErrPaused, s.pauseUntil.Sub(now).Round(time.Second))
	}
	if _, err := provider.Key(cfg); err != nil {
		return nil, err
	}
	id := provider.Identity(cfg)
	if s.client == nil || id != s.clientID {
		// A suggestion is no use after a retry's wait: one attempt.
		s.client = provider.NewClient(cfg, provider.ClientOptions{HTTPClient: s.opts.HTTPClient, Logger: s.log, MaxAttempts: 1})
		s.clientID, s.badKey = id, nil
	}
	if s.badKey != nil {
		return nil, s.badKey
	}
	return s.client, nil
}

// streamContext is the context of one stream: StreamTimeout, ended by the
// session's end. The stream's owner calls cancel when it ends or hangs up.
func (s *Services) streamContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(s.ctx, StreamTimeout)
}

// failed takes in a failed stream's error (any surface's): a rate limit
// pauses every surface, a refused key stops them until it changes. It
// returns the error to report.
func (s *Services) failed(err error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var apiErr *model.APIError
	switch {
	case errors.Is(err, model.ErrRateLimited):
		wait := defaultPause
		if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
			wait = apiErr.RetryAfter
		}
		s.pauseUntil = time.Now().Add(wait)
	case errors.Is(err, model.ErrUnauthorized):
		err = fmt.Errorf("%w: %w", ErrKeyRefused, err)
		s.badKey = err
	}
	return err
}

// job is a built prompt and what is needed to send it and read its answer.
type job struct {
	sess   *cache.Session
	prompt *cache.Prompt
	req    *model.Request
	around Around // completion's: what its answer is normalised against
	key    string // the API key: a suggestion holding it is dropped
	call   *provider.Call
	// surface names the request for the budgets; usd is its estimate,
	// reserved when it is sent.
	surface Surface
	usd     float64
}

// send takes a stream slot, sends j's request through the ledger (which
// records it), collects the reply and accounts for its usage. It returns
// no response with the error of a request that failed or was hung up, and
// the response with model.ErrNoAnswer when thinking used the whole budget.
// Every surface sends through it.
func (s *Services) send(ctx context.Context, client *model.Client, j *job) (*model.Response, error) {
	select {
	case s.slots <- struct{}{}:
		defer func() { <-s.slots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	// The estimate is held against the budgets from here to the end: a
	// request that does not fit what is left is not sent (no question).
	lg := s.opts.Ledger
	res, err := lg.ReserveBackground(j.surface.Budget, j.usd)
	if err != nil {
		return nil, err
	}
	defer res.Release() // a panic never leaks it
	sent := false
	st, err := lg.Stream(ctx, client, j.req, &model.Trace{Sent: func([]byte) { sent = true }}, j.call)
	if err != nil {
		a := cache.Accounting{}
		if sent && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			// Hung up before the reply's headers came: the provider may
			// have read the prompt already (and bill it).
			a = s.lost(j, &model.Response{})
		}
		lg.Settle(res, j.call, j.req.Model, a, err)
		return nil, err
	}
	resp, err := model.Collect(st)
	if err != nil && !errors.Is(err, model.ErrNoAnswer) {
		lg.Settle(res, j.call, j.req.Model, s.lost(j, resp), err)
		return nil, err
	}
	lg.Settle(res, j.call, j.req.Model, s.record(j, resp), err)
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
func (s *Services) lost(j *job, resp *model.Response) cache.Accounting {
	cu, _ := usageOf(j, resp)
	return s.account(j, cu)
}

// record accounts for resp's usage; a reply without usage (servers that
// send it only when asked) is counted from kimi-lsp's own estimate, as the
// actions' replies are (provider.EstimateUsage), and the log says so once.
func (s *Services) record(j *job, resp *model.Response) cache.Accounting {
	cu, estimated := usageOf(j, resp)
	if estimated {
		s.noUsage.Do(func() {
			s.log.Info("the provider sends no usage with its completions: kimi.stats counts kimi-lsp's own token estimates for them (completion.estimatedUsage)", "model", j.req.Model)
		})
	}
	return s.account(j, cu)
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
func (s *Services) account(j *job, cu cache.Usage) cache.Accounting {
	a, err := j.sess.Record(j.prompt.Handle, cu)
	if err != nil {
		s.log.Debug("completion usage not recorded", "error", err)
	}
	return a
}
