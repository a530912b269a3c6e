package complete

import (
	"context"
	"errors"
	"time"
)

// This file is next edits' check: where the file's helper language server
// runs, a suggestion is checked there between the answer and being shown
// (NextOptions.Check, which the server makes from the engine's verifier:
// the check an edit gets) and dropped when it adds an error (D79).

// checkWait bounds the helper's check of a suggestion: past it the
// suggestion is shown unchecked, as where no helper runs.
const checkWait = 5 * time.Second

// What NextOptions.Check returns besides nil (checked, no new error):
// ErrBreaks wraps the error of a suggestion that adds an error, ErrUnchecked
// that of one no helper checked (none runs for the file, it did not answer).
var (
	ErrBreaks    = errors.New("the suggestion adds an error")
	ErrUnchecked = errors.New("the suggestion is not checked")
)

// check has the helper check sug, placed on text, before it is shown
// (NextOptions.Check); false when it adds an error (counted Broken) or a
// newer edit hung the check up. took is the time the check took (the
// helper's, not the server's own). It runs in the timer's goroutine.
func (n *NextEdits) check(d *nextDoc, seq uint64, req NextRequest, text string, sug *NextSuggestion) (ok bool, took time.Duration) {
	if n.opts.Check == nil || sug == nil {
		return true, 0
	}
	ctx, cancel := context.WithTimeout(n.svc.ctx, checkWait)
	defer cancel()
	n.mu.Lock()
	if d.seq != seq {
		n.mu.Unlock()
		return false, 0
	}
	d.checking = cancel // a newer edit hangs the check up (stopLocked)
	n.mu.Unlock()
	began := time.Now()
	err := n.opts.Check(ctx, req.Key, text, text[:sug.Start]+sug.NewText+text[sug.End:])
	took = time.Since(began)
	n.mu.Lock()
	defer n.mu.Unlock()
	if d.seq == seq {
		d.checking = nil
	}
	switch {
	case d.seq != seq:
		return false, took
	case errors.Is(err, ErrBreaks):
		n.counts.broken++
		n.counts.checked++
		n.counts.checkTime += took
		n.log.Debug("next edit not shown", "path", req.Path, "why", err.Error())
		return false, took
	case err == nil:
		n.counts.checked++
		n.counts.checkTime += took
	default:
		n.log.Debug("next edit not checked", "path", req.Path, "error", err)
	}
	return true, took
}
