package workspace

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// editQueueFixture is a folder with one file, a document store that backs
// the folder's buffers, and the edit queue over both.
func editQueueFixture(t *testing.T, wait time.Duration) (*EditQueue, *Documents, URI, string) {
	t.Helper()
	root, _ := filepath.EvalSymlinks(t.TempDir())
	path := writeFile(t, root, "a.go", "package a\n")
	docs := NewDocuments()
	f := newFolders(t, DefaultOptions(), Hooks{Buffers: storeBuffers{docs}}, root)
	return NewEditQueue(docs, f, wait), docs, FileURI(path), path
}

// storeBuffers adapts Documents to Buffers, as the server does.
type storeBuffers struct{ docs *Documents }

func (b storeBuffers) Buffer(uri URI) (string, bool) {
	s, ok := b.docs.Snapshot(uri)
	if !ok {
		return "", false
	}
	return s.Text(), true
}

// TestEditQueueWaitsForDidChange: after an applied edit to an open
// document, the next edit's base waits until the editor's didChange shows
// it, and fails with ErrEditUnconfirmed if it never comes.
func TestEditQueueWaitsForDidChange(t *testing.T) {
	q, docs, uri, _ := editQueueFixture(t, 5*time.Second)
	docs.Open(uri, "go", 1, "package a\n")
	ctx := context.Background()
	turn, err := q.Begin(ctx, []URI{uri}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	base, err := turn.Base(ctx, uri)
	if err != nil || *base.Version != 1 {
		t.Fatalf("base %+v, %v", base, err)
	}
	turn.Landed(uri, base, "package a // edited\n", "Kimi: Fix")
	turn.End()

	next, err := q.Begin(ctx, []URI{uri}, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer next.End()
	got := make(chan Base, 1)
	go func() {
		b, err := next.Base(ctx, uri)
		if err != nil {
			t.Error(err)
		}
		got <- b
	}()
	select {
	case b := <-got:
		t.Fatalf("base returned before the didChange: version %d", *b.Version)
	case <-time.After(50 * time.Millisecond):
	}
	docs.Change(uri, 2, []Change{{Text: "package a // edited\n"}}, UTF16)
	select {
	case b := <-got:
		if *b.Version != 2 || b.Snapshot.Text() != "package a // edited\n" {
			t.Errorf("base version %d text %q", *b.Version, b.Snapshot.Text())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("base did not return after the didChange")
	}
	if h := next.History(uri); len(h) != 1 || h[0].Label != "Kimi: Fix" {
		t.Errorf("history %+v", h)
	}

	// No didChange ever: a short wait ends with ErrEditUnconfirmed.
	q.wait = 20 * time.Millisecond
	next.Landed(uri, Base{Snapshot: func() *Snapshot { s, _ := docs.Snapshot(uri); return s }(), Version: new(int32)}, "x", "Kimi: Fix")
	if _, err := next.Base(ctx, uri); !errors.Is(err, ErrEditUnconfirmed) {
		t.Errorf("no didChange: %v, want ErrEditUnconfirmed", err)
	}
}

// TestEditQueueClosedFile: a file not open is read from disk; after our
// edit to it lands, its base is the edited text while the disk still shows
// the old one (the editor holds it unsaved), and the disk's once it changes.
func TestEditQueueClosedFile(t *testing.T) {
	q, _, uri, path := editQueueFixture(t, 0)
	ctx := context.Background()
	turn, _ := q.Begin(ctx, []URI{uri}, "", nil)
	base, err := turn.Base(ctx, uri)
	if err != nil || base.Version != nil || base.Snapshot.Text() != "package a\n" {
		t.Fatalf("base %+v %v", base, err)
	}
	turn.Landed(uri, base, "package a\n\nvar X = 1\n", "Kimi: Fix")
	if b, _ := turn.Base(ctx, uri); b.Snapshot.Text() != "package a\n\nvar X = 1\n" {
		t.Errorf("base while unsaved %q, want our edit", b.Snapshot.Text())
	}
	writeFile(t, filepath.Dir(path), "a.go", "package a // saved elsewhere\n")
	waitUntil(t, "the new disk text", func() bool {
		b, _ := turn.Base(ctx, uri)
		return b.Snapshot.Text() == "package a // saved elsewhere\n"
	})
	turn.End()
}

// TestEditQueueTurns: one edit at a time per document; a wait for the turn
// ends with its context.
func TestEditQueueTurns(t *testing.T) {
	q, _, uri, _ := editQueueFixture(t, 0)
	other := FileURI("/elsewhere/b.go")
	first, err := q.Begin(context.Background(), []URI{uri, other}, "Kimi: Fix", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), 20*time.Millisecond, errors.New("gave up"))
	defer cancel()
	var waited []string
	waiting := func(u URI, holder string) { waited = append(waited, string(u)+" held by "+holder) }
	if _, err := q.Begin(ctx, []URI{other}, "", waiting); err == nil || err.Error() != "gave up" {
		t.Errorf("second Begin while the first holds the turn: %v", err)
	}
	if want := string(other) + " held by Kimi: Fix"; len(waited) != 1 || waited[0] != want {
		t.Errorf("waiting heard %q, want [%q]", waited, want)
	}
	got := make(chan *EditTurn)
	go func() {
		t2, _ := q.Begin(context.Background(), []URI{other, uri}, "", nil)
		got <- t2
	}()
	first.End()
	first.End() // twice is harmless
	select {
	case t2 := <-got:
		t2.End()
	case <-time.After(10 * time.Second):
		t.Fatal("the turn was not handed on")
	}
	if n := turnsHeld(q); n != 0 {
		t.Errorf("%d documents still have a turn after every edit ended", n)
	}
}

func turnsHeld(q *EditQueue) int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.turns)
}

// TestEditQueueTurnsExclusiveAndDropped: edits of overlapping documents
// from many goroutines, some giving up while they wait, never hold one
// document's turn at once, and no turn outlives the edits.
func TestEditQueueTurnsExclusiveAndDropped(t *testing.T) {
	q, _, _, _ := editQueueFixture(t, 0)
	uris := []URI{FileURI("/ws/a.go"), FileURI("/ws/b.go"), FileURI("/ws/c.go")}
	var mu sync.Mutex
	holding := map[URI]bool{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				set := []URI{uris[(g+i)%3], uris[(g+2*i)%3]}
				ctx, cancel := context.WithCancel(context.Background())
				if i%5 == 0 {
					cancel() // gives up at once if the turn is taken
				}
				turn, err := q.Begin(ctx, set, "", nil)
				cancel()
				if err != nil {
					continue
				}
				mu.Lock()
				for _, u := range turn.uris {
					if holding[u] {
						t.Errorf("%s held by two edits", u)
					}
					holding[u] = true
				}
				mu.Unlock()
				mu.Lock()
				for _, u := range turn.uris {
					holding[u] = false
				}
				mu.Unlock()
				turn.End()
			}
		}()
	}
	wg.Wait()
	if n := turnsHeld(q); n != 0 {
		t.Errorf("%d documents still have a turn after every edit ended", n)
	}
}

// TestEditQueueBusy: a document is busy while an edit holds its turn.
func TestEditQueueBusy(t *testing.T) {
	docs := NewDocuments()
	uri := FileURI("/ws/a.go")
	if err := docs.Open(uri, "go", 1, "package a\n"); err != nil {
		t.Fatal(err)
	}
	q := NewEditQueue(docs, nil, 0)
	if q.Busy(uri) {
		t.Fatal("busy before any edit")
	}
	turn, err := q.Begin(context.Background(), []URI{uri}, "Kimi: Fix", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !q.Busy(uri) {
		t.Error("not busy while an edit holds the turn")
	}
	turn.End()
	if q.Busy(uri) {
		t.Error("busy after the turn ended")
	}
}
