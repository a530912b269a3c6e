package workspace

import (
	"sync"
	"time"
)

// Snapshot is one version of an open document: its text and metadata,
// frozen. It is immutable and safe for concurrent use; later edits make new
// Snapshots that share most of its memory, so taking one costs O(1) and
// holding one never blocks anybody. Its exported fields must not be
// modified.
//
// Offsets are byte offsets into the text; positions go through the mapper
// methods (PositionOffset, OffsetPosition, RangeOffsets, OffsetRange).
type Snapshot struct {
	// URI identifies the document.
	URI URI
	// LanguageID is the language identifier the client sent on open.
	LanguageID string
	// Version is the client's version number of this text.
	Version int32
	// Seq is the store-wide edit sequence number of the last open or change
	// of this document: a later edit anywhere has a larger Seq, so sorting
	// by Seq orders buffers from least to most recently edited.
	Seq uint64
	// Edited is the wall-clock time of that open or change.
	Edited time.Time
	// Saved reports that a didSave arrived after the last change. A freshly
	// opened document is not known to match the disk and starts unsaved.
	Saved bool

	text rope

	once sync.Once
	flat string
}

// Text returns the whole text. It is built on the first call, in O(n), and
// kept for later calls on the same Snapshot.
func (s *Snapshot) Text() string {
	s.once.Do(func() { s.flat = s.text.slice(0, s.text.len()) })
	return s.flat
}

// withText returns s made of the whole text, whose rope's leaves share
// text's memory: text is then also its flat text, so Text costs no copy
// (an opened document is otherwise held twice, as the string the client
// sent and as its flattened copy).
func (s *Snapshot) withText(text string, sh *shape) *Snapshot {
	s.text = newRope(text, sh)
	s.once.Do(func() { s.flat = text })
	return s
}

// Len returns the length of the text in bytes.
func (s *Snapshot) Len() int { return s.text.len() }

// LineCount returns the number of lines: one more than the number of line
// terminators, so an empty text and a text ending in a newline both count
// their last, empty line.
func (s *Snapshot) LineCount() int { return s.text.breaks() + 1 }

// Slice returns bytes [start, end) of the text, both clamped to [0, Len()];
// an empty string when end ≤ start. It costs O(log n + end-start).
func (s *Snapshot) Slice(start, end int) string { return s.text.slice(start, end) }
