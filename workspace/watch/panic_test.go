package watch

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// lockedBuffer is a log sink the test reads while the Tree writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestOnChangePanicIsReported: a panic in the owner's OnChange is logged
// with its stack and fails that batch's delivery alone: the Tree goes on
// watching and delivers the next batch.
func TestOnChangePanicIsReported(t *testing.T) {
	root := t.TempDir()
	var logs lockedBuffer
	var calls atomic.Int32
	var got sync.Map
	tr := start(t, root, Options{
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		OnChange: func(cs []Change) {
			if calls.Add(1) == 1 {
				panic("test hook: OnChange")
			}
			for _, c := range cs {
				got.Store(c.Path, true)
			}
		},
	})
	write(t, root, "a.go", "package a")
	waitFor(t, "the first batch", func() bool { return calls.Load() >= 1 })
	write(t, root, "b.go", "package b")
	waitFor(t, "b.go delivered after the panic", func() bool { _, ok := got.Load("b.go"); return ok })
	if _, ok := tr.Lookup("b.go"); !ok {
		t.Error("the Tree's index lacks b.go after the panic")
	}
	if l := logs.String(); !strings.Contains(l, "panic in a watcher callback") || !strings.Contains(l, "test hook: OnChange") || !strings.Contains(l, "goroutine") {
		t.Errorf("the panic and its stack are not in the log:\n%s", l)
	}
}
