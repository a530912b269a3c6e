package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// ErrEditUnconfirmed is returned when an earlier edit that the editor said
// it applied has not shown up in the editor's didChange within the wait:
// the document's current text is unknown, so nothing may land on it.
var ErrEditUnconfirmed = errors.New("the editor has not reported the earlier edit yet")

// DefaultConfirmWait is how long a new edit waits for the editor's
// didChange of an earlier applied edit to the same document.
const DefaultConfirmWait = 3 * time.Second

// historyLen is how many landed edits per document are kept to explain a
// refusal; historyDocs bounds the documents with a history, and
// historyMaxText the size of an edit kept (both texts).
const (
	historyLen     = 4
	historyDocs    = 32
	historyMaxText = 2 << 20
)

// EditQueue orders the edits the server sends to documents: one edit at a
// time per document, each computed against the document as it is when the
// edit lands — the open buffer as the editor last reported it, else the
// file on disk — including the server's own earlier edits. After the
// editor applies an edit, its didChange may arrive before or after its
// answer to the edit; the next edit of that document waits (at most the
// confirm wait) until the buffer shows the earlier edit, and a document not
// open in the editor is taken to hold the edit the editor applied to it
// until the disk says otherwise. It is safe for concurrent use.
type EditQueue struct {
	docs    *Documents
	folders *Folders
	wait    time.Duration

	// mu guards the fields below.
	mu      sync.Mutex
	turns   map[URI]*turn        // per document with an edit landing or waiting
	holders map[URI]string       // the label of the edit holding each taken turn
	pending map[URI]*landed      // an applied edit not yet seen in the document
	history map[URI][]LandedEdit // the last edits landed per document, oldest first
	order   []URI                // documents of history, least recently edited first
}

// landed is an applied edit awaiting confirmation.
type landed struct {
	open   bool   // the document was open when the edit was computed
	seq    uint64 // the open document's Seq then
	before string // the text the edit was computed against
	after  string // the text the edit leaves
}

// LandedEdit is an edit the server landed on a document.
type LandedEdit struct {
	// Label names the edit for the user ("Kimi: Fix").
	Label string
	// Before and After are the document's text before and after it.
	Before, After string
}

// NewEditQueue returns the edit queue of docs, reading files that are not
// open through folders. confirmWait bounds the wait for an applied edit to
// show in the editor's didChange (0: DefaultConfirmWait).
func NewEditQueue(docs *Documents, folders *Folders, confirmWait time.Duration) *EditQueue {
	if confirmWait <= 0 {
		confirmWait = DefaultConfirmWait
	}
	return &EditQueue{
		docs: docs, folders: folders, wait: confirmWait,
		turns:   map[URI]*turn{},
		holders: map[URI]string{},
		pending: map[URI]*landed{},
		history: map[URI][]LandedEdit{},
	}
}

// Base is a document's text as an edit lands on it.
type Base struct {
	// Snapshot holds the text; map the edit's offsets with it.
	Snapshot *Snapshot
	// Version is the editor's version of the text, or nil for a file that
	// is not open (the edit then goes out unversioned).
	Version *int32
}

// EditTurn is the right to edit a set of documents: no other edit lands on
// them until End.
type EditTurn struct {
	q    *EditQueue
	uris []URI
	ends sync.Once
}

// turn is one document's right to edit: a 1-buffered token, and the number
// of edits holding it or waiting for it. It is dropped when that number
// falls to zero, so the map holds only documents being edited.
type turn struct {
	token chan struct{}
	users int
}

// acquire returns uri's token and counts one more user of it; each
// acquire is matched by one release.
func (q *EditQueue) acquire(uri URI) chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	t, ok := q.turns[uri]
	if !ok {
		t = &turn{token: make(chan struct{}, 1)}
		q.turns[uri] = t
	}
	t.users++
	return t.token
}

// release counts one user of uri's token fewer.
func (q *EditQueue) release(uri URI) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if t, ok := q.turns[uri]; ok {
		if t.users--; t.users <= 0 {
			delete(q.turns, uri)
		}
	}
}

// Begin waits for the turn of every document in uris (in a fixed order, so
// two edits of the same documents cannot deadlock) and returns it, or
// ctx's cause if ctx ends first. label names the edit (shown to those who
// wait for it); waiting, if set, is called before each wait with the
// document and the label of the edit holding its turn. End the turn when
// the edit has landed or failed.
func (q *EditQueue) Begin(ctx context.Context, uris []URI, label string, waiting func(uri URI, holder string)) (*EditTurn, error) {
	uris = slices.Clone(uris)
	slices.Sort(uris)
	uris = slices.Compact(uris)
	t := &EditTurn{q: q}
	for _, u := range uris {
		ch := q.acquire(u)
		select {
		case ch <- struct{}{}:
		default:
			if waiting != nil {
				q.mu.Lock()
				holder := q.holders[u]
				q.mu.Unlock()
				waiting(u, holder)
			}
			select {
			case ch <- struct{}{}:
			case <-ctx.Done():
				q.release(u)
				t.End()
				return nil, context.Cause(ctx)
			}
		}
		q.mu.Lock()
		q.holders[u] = label
		q.mu.Unlock()
		t.uris = append(t.uris, u)
	}
	return t, nil
}

// End gives the turn back. It is safe to call more than once.
func (t *EditTurn) End() {
	t.ends.Do(func() {
		for _, u := range t.uris {
			t.q.mu.Lock()
			delete(t.q.holders, u)
			token := t.q.turns[u].token // held by this turn, so present
			t.q.mu.Unlock()
			<-token
			t.q.release(u)
		}
	})
}

// Base returns the document's text as the edit lands: the open buffer
// (after waiting, at most the confirm wait, for an earlier applied edit to
// show in it; else ErrEditUnconfirmed), or for a file not open the text on
// disk — or the text our earlier edit left, while the disk still shows the
// text before it (the editor holds the edit in an unsaved buffer). The
// caller must hold the document's turn.
func (t *EditTurn) Base(ctx context.Context, uri URI) (Base, error) {
	q := t.q
	q.mu.Lock()
	rec := q.pending[uri]
	q.mu.Unlock()
	var timer <-chan time.Time
	for {
		changed := q.docs.Changed()
		snap, open := q.docs.Snapshot(uri)
		if open && (rec == nil || !rec.open || snap.Seq > rec.seq) {
			q.forget(uri, rec)
			v := snap.Version
			return Base{Snapshot: snap, Version: &v}, nil
		}
		if !open {
			break
		}
		// The editor said it applied our edit; its didChange is on the way.
		if timer == nil {
			tm := time.NewTimer(q.wait)
			defer tm.Stop()
			timer = tm.C
		}
		select {
		case <-changed:
		case <-timer:
			return Base{}, fmt.Errorf("%s: %w (no didChange within %v)", uri, ErrEditUnconfirmed, q.wait)
		case <-ctx.Done():
			return Base{}, context.Cause(ctx)
		}
	}
	path, err := uri.Path()
	if err != nil {
		return Base{}, err
	}
	if q.folders == nil {
		return Base{}, fmt.Errorf("%s: %w", path, ErrOutsideWorkspace)
	}
	f, err := q.folders.ReadFile(path)
	if err != nil {
		return Base{}, err
	}
	text := f.Text
	switch {
	case rec == nil:
	case !rec.open && text == rec.before && rec.after != rec.before:
		// Not saved yet: the editor's copy holds our edit.
		text = rec.after
	default:
		q.forget(uri, rec)
	}
	return Base{Snapshot: NewSnapshot(uri, f.Language, 0, text)}, nil
}

// forget drops rec, the pending edit of uri, if it is still the pending
// one.
func (q *EditQueue) forget(uri URI, rec *landed) {
	if rec == nil {
		return
	}
	q.mu.Lock()
	if q.pending[uri] == rec {
		delete(q.pending, uri)
	}
	q.mu.Unlock()
}

// Landed records that the editor applied an edit turning base into after,
// so that the next edit of the document is computed against after. The
// caller must hold the document's turn.
func (t *EditTurn) Landed(uri URI, base Base, after, label string) {
	q := t.q
	before := base.Snapshot.Text()
	rec := &landed{open: base.Version != nil, seq: base.Snapshot.Seq, before: before, after: after}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending[uri] = rec
	if len(before)+len(after) > historyMaxText {
		// Too big to keep for a better message: a refusal then names no
		// edit, and the older history no longer applies.
		delete(q.history, uri)
		return
	}
	h := append(q.history[uri], LandedEdit{Label: label, Before: before, After: after})
	if len(h) > historyLen {
		h = slices.Clone(h[len(h)-historyLen:])
	}
	q.history[uri] = h
	q.order = append(slices.DeleteFunc(q.order, func(u URI) bool { return u == uri }), uri)
	for len(q.order) > historyDocs {
		delete(q.history, q.order[0])
		q.order = q.order[1:]
	}
}

// History returns the last edits landed on uri, oldest first, without a
// turn (next edits compare an editor's change with their texts: the undo
// or redo of one of them).
func (q *EditQueue) History(uri URI) []LandedEdit {
	q.mu.Lock()
	defer q.mu.Unlock()
	return slices.Clone(q.history[uri])
}

// History returns the last edits landed on uri, oldest first.
func (t *EditTurn) History(uri URI) []LandedEdit {
	t.q.mu.Lock()
	defer t.q.mu.Unlock()
	return slices.Clone(t.q.history[uri])
}

// Busy reports whether an edit of ours to uri is in flight: one holds or
// waits for the document's turn, or the editor applied one whose didChange
// has not shown it yet.
func (q *EditQueue) Busy(uri URI) bool {
	q.mu.Lock()
	_, held := q.turns[uri]
	rec := q.pending[uri]
	q.mu.Unlock()
	if held {
		return true
	}
	if rec == nil || !rec.open {
		return false
	}
	snap, open := q.docs.Snapshot(uri)
	return open && snap.Seq <= rec.seq
}
