package main

import (
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSignalEndsSession: SIGTERM or SIGINT after initialize ends the
// session through its context (exit code 1, "exit without shutdown"), not
// with the signal's default action, which would leave no exit code. The
// server starts catching them once its initialize reply is written
// (signals, lsp.Options.Replied); the request answered after initialize
// makes sure the read loop has passed that point.
func TestSignalEndsSession(t *testing.T) {
	for _, sig := range []os.Signal{syscall.SIGTERM, os.Interrupt} {
		t.Run(sig.String(), func(t *testing.T) {
			p := start(t, testEnv(t), "--stdio")
			if _, err := p.ed.Initialize(ctxT(t), nil); err != nil {
				t.Fatal(err)
			}
			if err := p.ed.Call(ctxT(t), "kimi/noSuchMethod", nil, nil); err == nil || !strings.Contains(err.Error(), "noSuchMethod") {
				t.Fatalf("unknown method answered with %v", err)
			}
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			if got := p.wait(t); got != 1 {
				t.Errorf("exit code %d after %v, want 1; stderr:\n%s", got, sig, p.stderr)
			}
		})
	}
}

// TestSignalsStartStop: nothing is caught before start (a nil *signals,
// as tests calling run have, does nothing); after start a SIGINT to the
// process cancels the context instead of ending the process; stop waits
// for the goroutine start began.
func TestSignalsStartStop(t *testing.T) {
	var none *signals
	none.start()
	none.stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := newSignals(cancel)
	s.start()
	s.start() // once
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("SIGINT did not cancel the context")
	}
	s.stop()
	s.stop()
}
