package lsp

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
)

// serial runs the session's slow state changes — workspace folders added or
// removed, .kimi-lsp.toml read, configuration applied — one at a time, in
// the order the read loop queued them, on a goroutine of its own: the read
// loop queues and goes on (Do never blocks), so it never waits on the disk.
//
// A request sees the effect of every notification that arrived before it:
// the read loop notes Mark when the request arrives, and the request's
// goroutine waits for that mark (Wait) before it runs. Operations must not
// wait on requests or on the editor (ask the editor from another goroutine
// and queue what it answered).
type serial struct {
	log *slog.Logger
	// cancel ends the context operations run with (Close).
	cancel  context.CancelFunc
	stopped chan struct{} // closed when the goroutine has ended

	// mu guards the fields below.
	mu      sync.Mutex
	queue   []serialOp
	queued  uint64        // operations queued so far
	done    uint64        // operations finished (or dropped) so far
	changed chan struct{} // closed and replaced when done grows or on Close
	wake    chan struct{} // one pending wake-up for the goroutine
	closed  bool
}

type serialOp struct {
	name string
	fn   func(ctx context.Context)
}

func newSerial(log *slog.Logger) *serial {
	ctx, cancel := context.WithCancel(context.Background())
	q := &serial{
		log:     log,
		cancel:  cancel,
		stopped: make(chan struct{}),
		changed: make(chan struct{}),
		wake:    make(chan struct{}, 1),
	}
	go q.run(ctx)
	return q
}

// Do queues fn and returns at once; fn runs after every operation queued
// before it, with a context that Close cancels. After Close, fn is dropped.
func (q *serial) Do(name string, fn func(ctx context.Context)) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		q.log.Debug("session ending; dropped", "operation", name)
		return
	}
	q.queue = append(q.queue, serialOp{name, fn})
	q.queued++
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Mark returns the number of operations queued so far: Wait(ctx, Mark())
// returns once all of them are done.
func (q *serial) Mark() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.queued
}

// Wait waits until the first mark operations are done, ctx is done (its
// error is returned) or the queue is closed.
func (q *serial) Wait(ctx context.Context, mark uint64) error {
	for {
		q.mu.Lock()
		done, closed, changed := q.done, q.closed, q.changed
		q.mu.Unlock()
		if done >= mark || closed {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (q *serial) run(ctx context.Context) {
	defer close(q.stopped)
	for {
		q.mu.Lock()
		if q.closed {
			q.mu.Unlock()
			return
		}
		if len(q.queue) == 0 {
			q.mu.Unlock()
			select {
			case <-q.wake:
				continue
			case <-ctx.Done():
				return
			}
		}
		op := q.queue[0]
		q.queue[0] = serialOp{}
		q.queue = q.queue[1:]
		q.mu.Unlock()

		q.runOp(ctx, op)

		q.mu.Lock()
		q.done++
		close(q.changed)
		q.changed = make(chan struct{})
		q.mu.Unlock()
	}
}

// runOp runs one operation; a panic is logged and the queue goes on.
func (q *serial) runOp(ctx context.Context, op serialOp) {
	defer func() {
		if r := recover(); r != nil {
			q.log.Error("panic in a queued operation", "operation", op.name, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	op.fn(ctx)
}

// Close cancels the operation in progress, drops the queued ones, and waits
// for the goroutine to end. Waiters are released. It is safe to call more
// than once.
func (q *serial) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		q.queue = nil
		close(q.changed)
		q.changed = make(chan struct{})
	}
	q.mu.Unlock()
	q.cancel()
	<-q.stopped
}
