// Package jobs runs the server's long work — one job per user command — and
// owns each job's whole life: its start, its place in the queue for a model
// stream, its supersession by a newer job on the same range, its cancel, its
// failure when it panics, and its end when the server closes.
//
// Slots. At most Limit model streams are open at once. A job takes one slot
// when its first model call starts (Engine.Acquire) and keeps it through its
// tool rounds, which run between calls in milliseconds, until its model work
// ends; it gives the slot back before it applies an edit or shows a result,
// so a slow editor never holds a stream. A job therefore holds at most one
// slot and has at most one stream open: the limit counts streams. Waiting
// jobs are served first come, first served and are told their place.
//
// Fault isolation. Every job runs under recover, and so does every goroutine
// or callback it starts through Job.Go and Job.Guard: a panic fails that job
// with a *PanicError (logged with its stack) and nothing else.
//
// Package jobs knows nothing about LSP or models: the lsp package starts
// jobs and maps their ends to progress messages; assist takes slots through
// its Gate interface.
package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Cancellation causes (context.Cause of a job's context) and errors.
var (
	// ErrCancelled: the user cancelled the job.
	ErrCancelled = errors.New("cancelled")
	// ErrSuperseded: a newer job with the same Key replaced this one.
	ErrSuperseded = errors.New("cancelled: superseded by a newer request for the same range")
	// ErrShutdown: the engine was closed.
	ErrShutdown = errors.New("cancelled: the server is shutting down")
	// ErrInternal is matched by every *PanicError.
	ErrInternal = errors.New("internal error — please report")
	// ErrClosed is returned by Start after Close.
	ErrClosed = errors.New("the job engine is closed")
)

// DefaultLimit is the number of model streams open at once when Options
// gives none (the jobs.maxConcurrent setting's default).
const DefaultLimit = 4

// DefaultCloseTimeout bounds how long Close waits for jobs to end.
const DefaultCloseTimeout = 2 * time.Second

// PanicError is how a panic in a job, or in a goroutine the job started,
// ends it. Its text is what the user sees; Stack goes to the log.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("%v: %v", ErrInternal, e.Value) }

// Is makes errors.Is(err, ErrInternal) true for every panic.
func (e *PanicError) Is(target error) bool { return target == ErrInternal }

// Key identifies what a job works on, for supersession: a new job with the
// same Key cancels the older ones (running or queued). The zero Key
// supersedes nothing.
type Key struct {
	// Command names the job's kind ("kimi.fix", "kimi.action:review"), so
	// Explain and Fix on one range coexist.
	Command string
	// Document is the document's URI.
	Document string
	// Start and End delimit the range, in any consistent unit.
	Start, End int
}

// Spec describes a job to start.
type Spec struct {
	// Key identifies the job's work for supersession (zero: none).
	Key Key
	// Title is shown in job lists ("Kimi: Fix").
	Title string
	// Request is the id of the request that started the job, for
	// $/cancelRequest.
	Request string
	// OnPanic, if set, is called in the job's goroutine after a panic of
	// the job's function has been recovered and logged, with the
	// *PanicError; it reports the failure. It runs under recover too.
	OnPanic func(err error)
}

// Job is one running (or queued) job.
type Job struct {
	// ID is the job's id, unique within its Engine ("1", "2", …).
	ID string
	// Spec is what the job was started with.
	Spec Spec

	e      *Engine
	seq    int
	ctx    context.Context
	cancel context.CancelCauseFunc
	done   chan struct{}

	// mu guards tag.
	mu  sync.Mutex
	tag any
}

// Context returns the job's context, cancelled when the job is cancelled;
// context.Cause says why (ErrCancelled, ErrSuperseded, ErrShutdown, a
// *PanicError).
func (j *Job) Context() context.Context { return j.ctx }

// Done is closed when the job's function has returned.
func (j *Job) Done() <-chan struct{} { return j.done }

// Cancel cancels the job with cause (ErrCancelled if nil).
func (j *Job) Cancel(cause error) {
	if cause == nil {
		cause = ErrCancelled
	}
	j.cancel(cause)
}

// SetTag attaches a value the starter matches jobs by (a progress token).
func (j *Job) SetTag(v any) {
	j.mu.Lock()
	j.tag = v
	j.mu.Unlock()
}

// Tag returns the value set with SetTag, or nil.
func (j *Job) Tag() any {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.tag
}

// Go runs fn in a new goroutine that belongs to the job: Close waits for
// it, and a panic in it fails the job (its context is cancelled with a
// *PanicError) instead of the process.
func (j *Job) Go(fn func()) {
	j.e.wg.Add(1)
	go func() {
		defer j.e.wg.Done()
		defer j.recoverTo("goroutine")
		fn()
	}()
}

// Guard wraps fn, a callback the job hands to someone else (a timer), so
// that a panic in it fails the job instead of the process.
func (j *Job) Guard(fn func()) func() {
	return func() {
		defer j.recoverTo("callback")
		fn()
	}
}

// recoverTo turns a panic into the job's failure. It must be deferred
// directly.
func (j *Job) recoverTo(where string) {
	r := recover()
	if r == nil {
		return
	}
	perr := &PanicError{Value: r, Stack: debug.Stack()}
	j.e.log.Error("panic in a job "+where, "job", j.ID, "title", j.Spec.Title, "panic", fmt.Sprint(r), "stack", string(perr.Stack))
	j.cancel(perr)
}

// Options configure an Engine.
type Options struct {
	// Limit is the number of model streams open at once; 0 means
	// DefaultLimit.
	Limit int
	// Logger receives panics and slow closes; nil means slog.Default().
	Logger *slog.Logger
	// CloseTimeout bounds Close's wait; 0 means DefaultCloseTimeout.
	CloseTimeout time.Duration
}

// Engine runs jobs. It is safe for concurrent use.
type Engine struct {
	log          *slog.Logger
	closeTimeout time.Duration
	wg           sync.WaitGroup // job goroutines and the goroutines they start

	// mu guards the fields below.
	mu     sync.Mutex
	seq    int
	byID   map[string]*Job
	closed bool
	// limit, active and queue are the stream slots: active slots are
	// taken, queue holds the waiting jobs in arrival order.
	limit   int
	active  int
	queue   []*waiter
	version uint64 // counts queue changes, so stale place reports are dropped
}

// New returns an engine.
func New(opts Options) *Engine {
	log := opts.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Engine{
		log:          log,
		closeTimeout: cmp.Or(opts.CloseTimeout, DefaultCloseTimeout),
		byID:         make(map[string]*Job),
		limit:        normLimit(opts.Limit),
	}
}

func normLimit(n int) int {
	if n <= 0 {
		return DefaultLimit
	}
	return n
}

// Start registers a job and runs fn in its own goroutine with the job's
// context, a child of parent (which should outlive the request that asked
// for the job). Jobs with the same non-zero Key are cancelled with
// ErrSuperseded. A panic in fn is recovered: it is logged with its stack,
// cancels the job with a *PanicError and is reported through
// Spec.OnPanic. After Close, Start returns ErrClosed.
func (e *Engine) Start(parent context.Context, spec Spec, fn func(ctx context.Context, j *Job)) (*Job, error) {
	ctx, cancel := context.WithCancelCause(parent)
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		cancel(ErrClosed)
		return nil, ErrClosed
	}
	e.seq++
	j := &Job{ID: strconv.Itoa(e.seq), Spec: spec, e: e, seq: e.seq, ctx: ctx, cancel: cancel, done: make(chan struct{})}
	var superseded []*Job
	if spec.Key != (Key{}) {
		for _, old := range e.byID {
			if old.Spec.Key == spec.Key {
				superseded = append(superseded, old)
			}
		}
	}
	e.byID[j.ID] = j
	e.wg.Add(1)
	e.mu.Unlock()
	for _, old := range superseded {
		old.cancel(ErrSuperseded)
	}
	go e.run(j, fn)
	return j, nil
}

func (e *Engine) run(j *Job, fn func(context.Context, *Job)) {
	defer e.wg.Done()
	defer func() {
		e.mu.Lock()
		delete(e.byID, j.ID)
		e.mu.Unlock()
		j.cancel(context.Canceled)
		close(j.done)
	}()
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		perr := &PanicError{Value: r, Stack: debug.Stack()}
		e.log.Error("panic in a job", "job", j.ID, "title", j.Spec.Title, "panic", fmt.Sprint(r), "stack", string(perr.Stack))
		j.cancel(perr)
		if j.Spec.OnPanic != nil {
			func() {
				defer func() {
					if r := recover(); r != nil {
						e.log.Error("panic while reporting a job's panic", "job", j.ID, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
					}
				}()
				j.Spec.OnPanic(perr)
			}()
		}
	}()
	fn(j.ctx, j)
}

// Cancel cancels the job with the given id, or every job when id is "",
// with cause (ErrCancelled if nil). It returns how many jobs it cancelled.
func (e *Engine) Cancel(id string, cause error) int {
	return e.CancelWhere(func(j *Job) bool { return id == "" || j.ID == id }, cause)
}

// CancelWhere cancels the jobs for which pred holds, with cause
// (ErrCancelled if nil), and returns how many. pred is called without any
// lock of the engine held.
func (e *Engine) CancelWhere(pred func(*Job) bool, cause error) int {
	n := 0
	for _, j := range e.Jobs() {
		if pred(j) {
			j.Cancel(cause)
			n++
		}
	}
	return n
}

// Jobs returns the jobs not yet ended, oldest first.
func (e *Engine) Jobs() []*Job {
	e.mu.Lock()
	out := make([]*Job, 0, len(e.byID))
	for _, j := range e.byID {
		out = append(out, j)
	}
	e.mu.Unlock()
	slices.SortFunc(out, func(a, b *Job) int { return cmp.Compare(a.seq, b.seq) })
	return out
}

// Close cancels every job with ErrShutdown and waits for the jobs, and the
// goroutines they started, to end — at most Options.CloseTimeout. It
// returns an error naming the jobs still running when the wait ends. Start
// fails after Close.
func (e *Engine) Close() error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.Cancel("", ErrShutdown)
	done := make(chan struct{})
	go func() {
		e.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(e.closeTimeout)
	defer t.Stop()
	select {
	case <-done:
		return nil
	case <-t.C:
	}
	var left []string
	for _, j := range e.Jobs() {
		left = append(left, j.ID+" ("+j.Spec.Title+")")
	}
	err := fmt.Errorf("jobs still running after %v: %v", e.closeTimeout, left)
	e.log.Warn("closing the job engine", "error", err)
	return err
}
