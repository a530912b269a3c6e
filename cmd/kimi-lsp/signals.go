package main

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signals cancels the running command's context on SIGINT or SIGTERM, as
// signal.NotifyContext does, from the moment its start is called: at once
// for the commands, once the initialize reply is written for the server
// (lsp.Options.Replied). Registering the handlers starts the runtime's
// signal-mask goroutine, locked to a thread of its own, and with it two or
// three more threads (6 or 7 at the reply instead of 4 or 5): before the reply that
// cost about 0.2 ms of its start-up (bench/README.md). Until then a signal
// ends the server with the default action, which loses nothing: no job,
// helper, edit or request has started before initialize is answered.
type signals struct {
	cancel context.CancelFunc

	once sync.Once
	mu   sync.Mutex
	ch   chan os.Signal
	done chan struct{}
	wg   sync.WaitGroup // the goroutine start began
}

// newSignals returns the signals of a context whose cancel is cancel.
func newSignals(cancel context.CancelFunc) *signals {
	return &signals{cancel: cancel}
}

// start begins catching the signals; later calls do nothing. A nil
// *signals (tests calling run) catches none.
func (s *signals) start() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.ch = make(chan os.Signal, 1)
		s.done = make(chan struct{})
		signal.Notify(s.ch, os.Interrupt, syscall.SIGTERM)
		ch, done := s.ch, s.done
		s.wg.Go(func() {
			select {
			case <-ch:
				s.cancel()
			case <-done:
			}
		})
	})
}

// stop stops catching them (a signal then has its default action again),
// ends the goroutine start began and waits for it.
func (s *signals) stop() {
	if s == nil {
		return
	}
	s.once.Do(func() {}) // no start after stop
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch != nil {
		signal.Stop(s.ch)
		close(s.done)
		s.ch = nil
	}
	s.wg.Wait()
}
