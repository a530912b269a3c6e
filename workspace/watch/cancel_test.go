package watch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

// bigTree writes dirs directories of files empty files each under root.
func bigTree(t testing.TB, root string, dirs, files int) {
	t.Helper()
	for d := 0; d < dirs; d++ {
		dir := fmt.Sprintf("%s/d%03d", root, d)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := 0; f < files; f++ {
			if err := os.WriteFile(fmt.Sprintf("%s/f%03d.go", dir, f), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestNewStopsWhenCancelled: cancelling New's context mid-walk stops the
// walk at the next directory, returns the context's error and releases the
// inotify descriptor.
func TestNewStopsWhenCancelled(t *testing.T) {
	root := t.TempDir()
	bigTree(t, root, 60, 20)
	before := openFDs(t)
	ctx, cancel := context.WithCancel(context.Background())
	var seen, afterCancel atomic.Int32
	tr, err := New(ctx, root, Options{onDir: func(ctx context.Context, rel string) {
		if ctx.Err() != nil {
			afterCancel.Add(1)
		}
		if seen.Add(1) == 10 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || tr != nil {
		t.Fatalf("New = %v, %v; want context.Canceled", tr, err)
	}
	if n := afterCancel.Load(); n > 0 {
		t.Errorf("%d directories were read after the cancel", n)
	}
	if n := seen.Load(); n != 10 {
		t.Errorf("walk visited %d directories, want it to stop after the 10th of 61", n)
	}
	if after := openFDs(t); after > before {
		t.Errorf("%d descriptors open after a cancelled New, %d before: the watcher leaked", after, before)
	}
}

// TestNewAlreadyCancelled: a cancelled context reads nothing.
func TestNewAlreadyCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var seen atomic.Int32
	if _, err := New(ctx, t.TempDir(), Options{onDir: func(context.Context, string) { seen.Add(1) }}); !errors.Is(err, context.Canceled) {
		t.Fatalf("New = %v, want context.Canceled", err)
	}
	if seen.Load() != 0 {
		t.Errorf("a cancelled New read %d directories", seen.Load())
	}
}

// TestCloseStopsRescan: Close during a full rescan stops the walk instead
// of waiting for it to finish. The hook blocks the rescan until the
// rescan's context is cancelled, so without cancellation Close would wait
// forever.
func TestCloseStopsRescan(t *testing.T) {
	root := t.TempDir()
	bigTree(t, root, 40, 5)
	var rescanning atomic.Bool
	var afterCancel atomic.Int32
	mid := make(chan struct{})
	release := make(chan struct{}) // lets a failing test end
	var midOnce atomic.Bool
	tr := start(t, root, Options{onDir: func(ctx context.Context, rel string) {
		if !rescanning.Load() {
			return
		}
		if ctx.Err() != nil {
			afterCancel.Add(1)
			return
		}
		if rel == "d005" && midOnce.CompareAndSwap(false, true) {
			close(mid)
			select { // held here until Close cancels the walk
			case <-ctx.Done():
			case <-release:
			}
		}
	}})
	rescanning.Store(true)
	tr.Rescan()
	select {
	case <-mid:
	case <-time.After(10 * time.Second):
		t.Fatal("the rescan did not start")
	}
	closed := make(chan struct{})
	go func() {
		tr.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		close(release)
		t.Fatal("Close waited for the rescan to finish")
	}
	if n := afterCancel.Load(); n > 0 {
		t.Errorf("%d directories were read after Close", n)
	}
	if tr.Stats().Rescans != 0 {
		t.Errorf("a cancelled rescan was counted as applied: %+v", tr.Stats())
	}
}

// TestFallBackToPolling: a Tree that relied on the editor's events rescans
// periodically once the editor turned out not to watch.
func TestFallBackToPolling(t *testing.T) {
	root := t.TempDir()
	tr := start(t, root, Options{startMode: ModeClient, PollInterval: 20 * time.Millisecond})
	tr.FallBackToPolling()
	if tr.Mode() != ModePoll {
		t.Fatalf("Mode = %v, want poll", tr.Mode())
	}
	write(t, root, "late.go", "package late")
	waitFor(t, "a file written after the fallback is found by polling", func() bool {
		_, ok := tr.Lookup("late.go")
		return ok
	})
}
