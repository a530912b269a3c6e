package jobs

import (
	"context"
	"sync"
)

// waiter is a job waiting for a stream slot.
type waiter struct {
	ready   chan struct{} // closed when the slot is granted
	granted bool          // guarded by Engine.mu
	place   func(ahead int)

	// mu orders place reports: one with an older version is dropped, and
	// none is made once Acquire has returned (left).
	mu      sync.Mutex
	version uint64
	left    bool
}

func (w *waiter) report(ahead int, version uint64) {
	if w.place == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if version < w.version || w.left {
		return
	}
	w.version = version
	w.place(ahead)
}

// placeReport is one pending call of a waiter's place callback.
type placeReport struct {
	w       *waiter
	ahead   int
	version uint64
}

func deliver(reports []placeReport) {
	for _, r := range reports {
		r.w.report(r.ahead, r.version)
	}
}

// Acquire takes a model-stream slot, waiting in line while all Limit slots
// are taken. While it waits, place (if not nil) is called with the number
// of jobs ahead of it, at once and whenever that number changes (never
// after Acquire has returned). It
// returns a function that gives the slot back (safe to call more than
// once), or the cause of ctx's cancellation if ctx ends first; a job
// cancelled while queued leaves the line at once.
func (e *Engine) Acquire(ctx context.Context, place func(ahead int)) (release func(), err error) {
	e.mu.Lock()
	if e.active < e.limit && len(e.queue) == 0 {
		e.active++
		e.mu.Unlock()
		return e.releaseFunc(), nil
	}
	w := &waiter{ready: make(chan struct{}), place: place}
	e.queue = append(e.queue, w)
	e.version++
	first := placeReport{w, len(e.queue) - 1, e.version}
	e.mu.Unlock()
	deliver([]placeReport{first})

	defer func() {
		w.mu.Lock()
		w.left = true
		w.mu.Unlock()
	}()
	select {
	case <-w.ready:
		return e.releaseFunc(), nil
	case <-ctx.Done():
	}
	e.mu.Lock()
	if w.granted {
		// Granted while we were giving up: hand the slot on.
		e.mu.Unlock()
		e.releaseFunc()()
		return nil, context.Cause(ctx)
	}
	for i, x := range e.queue {
		if x == w {
			e.queue = append(e.queue[:i:i], e.queue[i+1:]...)
			break
		}
	}
	reports := e.placesLocked()
	e.mu.Unlock()
	deliver(reports)
	return nil, context.Cause(ctx)
}

func (e *Engine) releaseFunc() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			e.mu.Lock()
			e.active--
			reports := e.grantLocked()
			e.mu.Unlock()
			deliver(reports)
		})
	}
}

// grantLocked hands free slots to the first waiters and returns the new
// places of the others. Precondition: e.mu is held.
func (e *Engine) grantLocked() []placeReport {
	n := 0
	for e.active < e.limit && n < len(e.queue) {
		w := e.queue[n]
		w.granted = true
		close(w.ready)
		e.active++
		n++
	}
	if n == 0 {
		return nil
	}
	e.queue = append(e.queue[:0:0], e.queue[n:]...)
	return e.placesLocked()
}

// placesLocked returns every waiter's place after a change of the queue.
// Precondition: e.mu is held.
func (e *Engine) placesLocked() []placeReport {
	e.version++
	out := make([]placeReport, len(e.queue))
	for i, w := range e.queue {
		out[i] = placeReport{w, i, e.version}
	}
	return out
}

// SetLimit changes the number of model streams open at once (n ≤ 0 means
// DefaultLimit). Raising it lets waiting jobs start at once; lowering it
// lets running streams finish and holds new ones back until fewer than n
// are open.
func (e *Engine) SetLimit(n int) {
	e.mu.Lock()
	e.limit = normLimit(n)
	reports := e.grantLocked()
	e.mu.Unlock()
	deliver(reports)
}

// Limit returns the number of model streams open at once.
func (e *Engine) Limit() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.limit
}

// Streams returns how many slots are taken and how many jobs wait for one.
func (e *Engine) Streams() (active, queued int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.active, len(e.queue)
}
