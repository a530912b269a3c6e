package workspace

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// ErrNotOpen is returned for a change, save or close of a document that is
// not open.
var ErrNotOpen = errors.New("document is not open")

// ErrBadRange is returned for a content change whose range ends before it
// starts.
var ErrBadRange = errors.New("change range ends before it starts")

// Change is one content change of a didChange notification.
type Change struct {
	// Range is the replaced range; nil means the whole text is replaced.
	Range *Range
	// Text is the new text of the range.
	Text string
}

// Documents is the store of open documents, safe for concurrent use. Make
// one with NewDocuments; the zero value is not usable.
//
// Writes (Open, Change, Save, Close) are serialised among themselves; each
// computes the document's next Snapshot without holding the readers' lock
// and then publishes it with one pointer store, so Snapshot and All never
// wait for an edit to be computed, and an edit costs O(log n) whatever the
// document's size.
//
// Versions: LSP says a document's version increases with every change. A
// change whose version does not increase is still applied (the client has
// applied it; refusing it would leave our text out of step with the
// editor's and corrupt every later incremental change) and logged as a
// warning; the Snapshot records the version the client sent.
type Documents struct {
	// wmu serialises writers; held while an edit is computed.
	wmu    sync.Mutex
	seq    uint64
	logger *slog.Logger
	sh     *shape

	// mu guards docs and changed; held only to read or publish a Snapshot
	// pointer.
	mu   sync.RWMutex
	docs map[URI]*Snapshot
	// changed is closed and replaced whenever a document is published or
	// closed (see Changed).
	changed chan struct{}
}

// NewDocuments returns an empty store that logs with slog.Default().
func NewDocuments() *Documents {
	return &Documents{docs: make(map[URI]*Snapshot), sh: defaultShape, changed: make(chan struct{})}
}

// SetLogger sets the logger for warnings (version not increasing, reopened
// document, saved text differing from the buffer). Nil means slog.Default().
func (d *Documents) SetLogger(l *slog.Logger) {
	d.wmu.Lock()
	d.logger = l
	d.wmu.Unlock()
}

// Precondition: d.wmu is held.
func (d *Documents) logLocked() *slog.Logger {
	if d.logger != nil {
		return d.logger
	}
	return slog.Default()
}

// Precondition: d.wmu is held.
func (d *Documents) currentLocked(uri URI) *Snapshot {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.docs[uri]
}

// Precondition: d.wmu is held.
func (d *Documents) publishLocked(s *Snapshot) {
	d.mu.Lock()
	d.docs[s.URI] = s
	d.signalLocked()
	d.mu.Unlock()
}

// signalLocked wakes the waiters of Changed. Precondition: d.mu is held
// for writing.
func (d *Documents) signalLocked() {
	close(d.changed)
	d.changed = make(chan struct{})
}

// Changed returns a channel that is closed at the next open, change, save
// or close of any document. Take it before looking at the documents, then
// wait on it, so that no change is missed.
func (d *Documents) Changed() <-chan struct{} {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.changed
}

// Precondition: d.wmu is held.
func (d *Documents) nextSeqLocked() uint64 {
	d.seq++
	return d.seq
}

// Open records a document opened by the client with its full text. Opening
// a document that is already open replaces it (the client's latest word
// wins) and logs a warning.
func (d *Documents) Open(uri URI, languageID string, version int32, text string) error {
	if uri == "" {
		return errors.New("open: empty document URI")
	}
	d.wmu.Lock()
	defer d.wmu.Unlock()
	if old := d.currentLocked(uri); old != nil {
		d.logLocked().Warn("document opened again; replacing it", "uri", string(uri), "version", version, "previous", old.Version)
	}
	d.publishLocked((&Snapshot{
		URI:        uri,
		LanguageID: languageID,
		Version:    version,
		Seq:        d.nextSeqLocked(),
		Edited:     time.Now(),
	}).withText(text, d.sh))
	return nil
}

// Change applies the content changes of one didChange notification, in
// order, each range given in the current text after the previous changes
// and its columns counted in enc. Either all changes apply or none: on an
// error (ErrNotOpen, ErrBadRange) the document is left as it was.
// Positions out of range are clamped as the mapper does (see
// Snapshot.PositionOffset); only a range whose end comes before its start
// is refused.
func (d *Documents) Change(uri URI, version int32, changes []Change, enc Encoding) error {
	_, err := d.ChangeEdits(uri, version, changes, enc)
	return err
}

// ChangeEdits is Change that also returns the changes as byte-offset
// edits, in order, each in the text after the previous ones (for Marks).
// A whole-text change is reported as the one edit that replaces what
// differs between the texts (their common prefix and suffix kept).
func (d *Documents) ChangeEdits(uri URI, version int32, changes []Change, enc Encoding) ([]Edit, error) {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	cur := d.currentLocked(uri)
	if cur == nil {
		return nil, fmt.Errorf("change %s: %w", uri, ErrNotOpen)
	}
	var edits []Edit
	text, err := applyChanges(cur.text, changes, enc, &edits)
	if err != nil {
		return nil, fmt.Errorf("change %s to version %d: %w", uri, version, err)
	}
	if version <= cur.Version {
		d.logLocked().Warn("document version did not increase; applying the change anyway",
			"uri", string(uri), "version", version, "previous", cur.Version)
	}
	d.publishLocked(&Snapshot{
		URI:        uri,
		LanguageID: cur.LanguageID,
		Version:    version,
		Seq:        d.nextSeqLocked(),
		Edited:     time.Now(),
		text:       text,
	})
	return edits, nil
}

// applyChanges returns t with changes applied in order, or an error naming
// the first bad change; t itself is never modified. Each change is
// appended to edits as a byte-offset edit.
func applyChanges(t rope, changes []Change, enc Encoding, edits *[]Edit) (rope, error) {
	for i, c := range changes {
		if c.Range == nil {
			old := t.slice(0, t.len())
			t = newRope(c.Text, t.sh)
			*edits = append(*edits, DiffEdit(old, c.Text))
			continue
		}
		if posLess(c.Range.End, c.Range.Start) {
			return t, fmt.Errorf("content change %d of %d, range %s: %w", i+1, len(changes), c.Range, ErrBadRange)
		}
		start := t.positionOffset(c.Range.Start, enc)
		end := start
		if c.Range.End != c.Range.Start {
			end = t.positionOffset(c.Range.End, enc)
		}
		t = t.replace(start, end, c.Text)
		*edits = append(*edits, Edit{Start: start, End: end, Text: c.Text})
	}
	return t, nil
}

// Close forgets a document the client closed.
func (d *Documents) Close(uri URI) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.docs[uri]; !ok {
		return fmt.Errorf("close %s: %w", uri, ErrNotOpen)
	}
	delete(d.docs, uri)
	d.signalLocked()
	return nil
}

// Save records that the client saved the document: its Snapshot is marked
// Saved until the next change. text is the saved content when the client
// sends it (includeText); if it differs from our buffer we were out of step
// with the editor, so the saved text replaces ours (keeping the version,
// with a new Seq) and a warning is logged.
func (d *Documents) Save(uri URI, text *string) error {
	d.wmu.Lock()
	defer d.wmu.Unlock()
	cur := d.currentLocked(uri)
	if cur == nil {
		return fmt.Errorf("save %s: %w", uri, ErrNotOpen)
	}
	next := &Snapshot{
		URI:        uri,
		LanguageID: cur.LanguageID,
		Version:    cur.Version,
		Seq:        cur.Seq,
		Edited:     cur.Edited,
		Saved:      true,
		text:       cur.text,
	}
	if text != nil && !cur.text.equalString(*text) {
		d.logLocked().Warn("saved text differs from the open buffer; taking the saved text",
			"uri", string(uri), "version", cur.Version, "bufferBytes", cur.text.len(), "savedBytes", len(*text))
		next = (&Snapshot{URI: uri, LanguageID: cur.LanguageID, Version: cur.Version, Saved: true}).withText(*text, d.sh)
		next.Seq = d.nextSeqLocked()
		next.Edited = time.Now()
	}
	d.publishLocked(next)
	return nil
}

// Snapshot returns the current Snapshot of an open document, in O(1).
func (d *Documents) Snapshot(uri URI) (*Snapshot, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	s, ok := d.docs[uri]
	return s, ok
}

// All returns the current Snapshots of all open documents, sorted by URI.
// Sort a copy by Seq to order them by recency of editing.
func (d *Documents) All() []*Snapshot {
	d.mu.RLock()
	out := make([]*Snapshot, 0, len(d.docs))
	for _, s := range d.docs {
		out = append(out, s)
	}
	d.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Snapshot) int { return cmp.Compare(a.URI, b.URI) })
	return out
}
