package verify

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// deafHelper, set in the environment, makes the test binary a helper that
// answers initialize and nothing else: it ignores shutdown, exit and
// SIGTERM, so only a kill ends it (runDeafHelper).
const deafHelper = "VERIFY_TEST_DEAF_HELPER"

// runDeafHelper answers initialize with no capabilities and then reads
// its input, answering nothing, until it is killed.
func runDeafHelper() int {
	signal.Ignore(syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP, syscall.SIGPIPE)
	r := bufio.NewReader(os.Stdin)
	for {
		body, err := readFrame(r)
		if err != nil {
			break
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "initialize" {
			out := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"capabilities":{}}}`, m.ID)
			fmt.Fprintf(os.Stdout, "Content-Length: %d\r\n\r\n%s", len(out), out)
		}
	}
	// Input closed (the exit after a shutdown it ignored): stay until killed.
	select {}
}

// deafVerifier returns a Verifier whose Go helper is the deaf helper,
// trusted as trusted says, and the helper it started.
func deafVerifier(t *testing.T, trusted *atomic.Bool, logs *syncBuffer) (*Verifier, *helper) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := goModule(t, map[string]string{"a.go": goValid})
	v := newVerifier(t, dir, Options{
		Servers: map[string]Command{"go": {self}},
		Env:     []string{deafHelper + "=1"},
		Trusted: func([]workspace.URI) bool { return trusted.Load() },
		Logger:  slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	h, err := v.helperFor(context.Background(), Command{self}, self)
	if err != nil {
		t.Fatalf("the deaf helper did not start: %v", err)
	}
	return v, h
}

// goroutinesBack waits, at most 10 s, for the number of goroutines to be
// at most n again, and returns the last count.
func goroutinesBack(n int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := runtime.NumGoroutine()
		if got <= n || time.Now().After(deadline) {
			return got
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCloseEndsRetiringHelper: a helper that gave way (the folders' trust
// changed) while an operation holds it is retired in the background; Close
// ends that wait, the helper ignores its shutdown and is killed, and when
// Close returns its process has exited and been reaped and no goroutine
// of the Verifier is left.
func TestCloseEndsRetiringHelper(t *testing.T) {
	before := runtime.NumGoroutine()
	var trusted atomic.Bool
	var logs syncBuffer
	v, h := deafVerifier(t, &trusted, &logs)
	pid := h.cmd.Process.Pid
	if err := h.acquire(context.Background()); err != nil { // an operation under way
		t.Fatal(err)
	}
	trusted.Store(true)
	v.TrustChanged() // the restricted helper gives way: retired once the operation ends
	v.Close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the retiring helper (pid %d) still runs after Close returned (kill 0: %v)", pid, err)
	}
	if got := goroutinesBack(before); got > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Close, %d before:\n%s", got, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestCloseKillsDeafHelper: Close of a running helper that ignores the
// shutdown request, the exit notification and SIGTERM returns with its
// process gone.
func TestCloseKillsDeafHelper(t *testing.T) {
	var trusted atomic.Bool
	var logs syncBuffer
	v, h := deafVerifier(t, &trusted, &logs)
	pid := h.cmd.Process.Pid
	v.Close()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the deaf helper (pid %d) still runs after Close returned (kill 0: %v)", pid, err)
	}
}

// TestPanicInVerifierGoroutine: a panic in a goroutine of the Verifier (a
// retirement) is logged with its stack and ends that goroutine only: the
// process goes on, Close still kills and waits for the helper.
func TestPanicInVerifierGoroutine(t *testing.T) {
	var trusted atomic.Bool
	var logs syncBuffer
	v, h := deafVerifier(t, &trusted, &logs)
	pid := h.cmd.Process.Pid
	v.goHook = func(what string) {
		if what == "retire a helper" {
			panic("test hook: " + what)
		}
	}
	trusted.Store(true)
	v.TrustChanged()
	v.Close()
	if !strings.Contains(logs.String(), "panic in the verifier") || !strings.Contains(logs.String(), "test hook: retire a helper") {
		t.Errorf("the panic is not in the log:\n%s", logs.String())
	}
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("the helper (pid %d) still runs after Close returned (kill 0: %v)", pid, err)
	}
}
