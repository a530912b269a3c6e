package main

import (
	"os"
	"strings"
	"syscall"
	"testing"
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
