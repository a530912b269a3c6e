//go:build linux

package watch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace/watch/watchtest"
)

const enospcChildEnv = "KIMI_WATCH_ENOSPC_CHILD"

// TestWatchLimitDegrades hits the real inotify watch limit: it runs
// TestENOSPCChild in a child process inside a new user namespace, where the
// child may lower its own limit to 8 without touching the machine's.
func TestWatchLimitDegrades(t *testing.T) {
	for _, mode := range []string{"poll", "client"} {
		t.Run(mode, func(t *testing.T) {
			t.Logf("child:\n%s", watchtest.RunChild(t, "TestENOSPCChild", enospcChildEnv, mode))
		})
	}
}

func TestENOSPCChild(t *testing.T) {
	mode := os.Getenv(enospcChildEnv)
	if mode == "" {
		t.Skip("runs only as TestWatchLimitDegrades's child process")
	}
	watchtest.LowerWatchLimit(t, 8)
	root := t.TempDir()
	for i := 0; i < 20; i++ {
		write(t, root, fmt.Sprintf("d%02d/f.go", i), "package d")
	}
	var calls atomic.Int32
	var cause atomic.Value
	tr := start(t, root, Options{
		PollInterval: 20 * time.Millisecond,
		OnDegraded: func(err error) bool {
			calls.Add(1)
			cause.Store(err)
			return mode == "client"
		},
	})
	if calls.Load() != 1 {
		t.Fatalf("OnDegraded called %d times, want 1", calls.Load())
	}
	if err, _ := cause.Load().(error); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("degraded because of %v, want ENOSPC", err)
	}
	if tr.Len() != 20 {
		t.Errorf("Len = %d, want all 20 files indexed despite the limit", tr.Len())
	}
	write(t, root, "d03/new.go", "package d")
	if mode == "client" {
		if tr.Mode() != ModeClient {
			t.Fatalf("Mode = %v, want client", tr.Mode())
		}
		tr.Notify(filepath.Join(root, "d03/new.go"))
	} else if tr.Mode() != ModePoll {
		t.Fatalf("Mode = %v, want poll", tr.Mode())
	}
	waitFor(t, "change seen in degraded mode", func() bool { _, ok := tr.Lookup("d03/new.go"); return ok })
	if calls.Load() != 1 {
		t.Errorf("OnDegraded called %d times, want 1", calls.Load())
	}
}
