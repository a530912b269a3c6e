package lsp

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"
)

// goroutines owns the session's goroutines besides the read loop: the
// long-lived ones (forwarding logs, sending review diagnostics, watching
// the editor's process), the requests' and the short ones that ask the
// editor something. Each runs under recover — a panic is logged with its
// stack and ends that goroutine alone — and Run waits for all of them at
// the session's end, at most closeWait.
type goroutines struct {
	wg sync.WaitGroup

	// mu guards the fields below.
	mu      sync.Mutex
	closed  bool
	running map[int]string // what each goroutine does, by a sequence number
	seq     int
}

// sessionCloseWait bounds Run's wait for the session's goroutines once the
// session context is cancelled and the connection closed: each of them
// ends at its next step then.
const sessionCloseWait = 2 * time.Second

// spawn runs fn on a goroutine of the session (what names it in the log).
// After the session's end it runs nothing and returns false.
func (s *Server) spawn(what string, fn func()) bool {
	if !s.gos.start(s.log, what, fn) {
		s.log.Debug("session ended; not started", "goroutine", what)
		return false
	}
	return true
}

// start runs fn on a goroutine it owns, named what, under guard (a panic
// goes to log); false after close.
func (g *goroutines) start(log *slog.Logger, what string, fn func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	if g.running == nil {
		g.running = map[int]string{}
	}
	g.seq++
	id := g.seq
	g.running[id] = what
	g.wg.Add(1)
	go func() {
		defer func() {
			g.mu.Lock()
			delete(g.running, id)
			g.mu.Unlock()
			g.wg.Done()
		}()
		guard(log, what, fn)
	}()
	return true
}

// guard runs fn; a panic in it is logged with its stack and ends fn alone.
// The long-lived goroutines guard each step, so that a panic fails only
// what that step served (one log message, one batch of diagnostics).
func (s *Server) guard(what string, fn func()) { guard(s.log, what, fn) }

// guard is Server.guard with the log to report a panic to.
func guard(log *slog.Logger, what string, fn func()) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("panic in the session's goroutine", "goroutine", what, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	fn()
}

// waitGoroutines refuses new goroutines and waits for the session's
// goroutines to end, at most bound; it names those left in the log.
func (s *Server) waitGoroutines(bound time.Duration) {
	if left, ended := s.gos.close(bound); !ended {
		s.log.Warn("session goroutines still running at exit", "bound", bound, "goroutines", left)
	}
}

// close refuses new goroutines and waits for those running to end, at
// most bound; past it, it returns what those left do, sorted, and false.
func (g *goroutines) close(bound time.Duration) (left []string, ended bool) {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	done := make(chan struct{})
	go func() {
		g.wg.Wait()
		close(done)
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
		return nil, true
	case <-t.C:
	}
	g.mu.Lock()
	for _, what := range g.running {
		left = append(left, what)
	}
	g.mu.Unlock()
	slices.Sort(left)
	return left, false
}
