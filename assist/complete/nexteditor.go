package complete

import "context"

// This file is what next edits keep for an editor whose own next-edit UI
// asks for the suggestion and says what it did with it (Copilot's
// textDocument/copilotInlineEdit, didShowInlineEdit and accept command;
// lsp/copilot.go): Await, Displayed and Accepted.

// editorState is a document's part of it. Precondition for every field:
// NextEdits.mu is held.
type editorState struct {
	// firing counts the fire calls of the document under way, from the
	// end of the pause to the suggestion placed or not.
	firing int
	// waiters are closed when the document's pending request may have
	// ended (its pause stopped, its fire done): Await looks again.
	waiters []chan struct{}
	// gone is the ID of the last suggestion that left with a didChange;
	// goneAccepted whether that didChange accepted it (else it was
	// dropped stale).
	gone         uint64
	goneAccepted bool
	// claimed is the suggestion the editor said it applied before a
	// didChange took it away.
	claimed uint64
	// displayed is the last suggestion an editor said it displayed.
	displayed uint64
}

// wakeLocked wakes d's waiters. Precondition: n.mu is held.
func (n *NextEdits) wakeLocked(d *nextDoc) {
	for _, ch := range d.editor.waiters {
		close(ch)
	}
	d.editor.waiters = nil
}

// fired ends a fire call of d.
func (n *NextEdits) fired(d *nextDoc) {
	n.mu.Lock()
	d.editor.firing--
	n.wakeLocked(d)
	n.mu.Unlock()
}

// goneLocked notes how the suggestion prev (its ID, 0 for none) fared in
// an edit: when it left, whether the edit accepted it (the accepted count
// moved past before) or dropped it stale. One the editor claimed is
// accepted either way: the editor applied it in edits that took it apart
// (deleting the range, then inserting the text). Precondition: n.mu is
// held; called right after replaceLocked.
func (n *NextEdits) goneLocked(d *nextDoc, prev uint64, before int64) {
	if prev == 0 || d.sug != nil && d.sug.ID == prev {
		return
	}
	e := &d.editor
	e.gone, e.goneAccepted = prev, n.counts.accepted != before
	if !e.goneAccepted && e.claimed == prev {
		n.counts.stale--
		n.counts.accepted++
		e.goneAccepted = true
	}
}

// sugID is s's ID, 0 for none.
func sugID(s *NextSuggestion) uint64 {
	if s == nil {
		return 0
	}
	return s.ID
}

// Await returns key's suggestion once the document has no next-edit
// request pending: the pause after its last edit, and the request that
// pause starts, are over (a newer edit starts a new pause, which it waits
// for too). It never asks the provider itself, so an editor asking for the
// suggestion adds no request to the one per burst. At ctx's end, or once
// the services are closed, it returns the suggestion at hand.
func (n *NextEdits) Await(ctx context.Context, key string) *NextSuggestion {
	for {
		n.mu.Lock()
		d := n.docs[key]
		if d == nil || n.off || d.timer == nil && d.editor.firing == 0 || n.svc.ctx.Err() != nil {
			n.mu.Unlock()
			return n.Current(key)
		}
		ch := make(chan struct{})
		d.editor.waiters = append(d.editor.waiters, ch)
		n.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return n.Current(key)
		case <-n.svc.ctx.Done():
			// The services closed: their Close stopped the pause, and
			// nothing is asked any more.
			return n.Current(key)
		}
	}
}

// Displayed takes in an editor's word that it displayed key's suggestion
// id (Copilot's didShowInlineEdit): counted once per suggestion, under
// Displayed. False when id is not the current suggestion.
func (n *NextEdits) Displayed(key string, id uint64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.docs[key]
	if d == nil || d.sug == nil || d.sug.ID != id {
		return false
	}
	if d.editor.displayed != id {
		d.editor.displayed = id
		n.counts.displayed++
	}
	return true
}

// Accepted takes in an editor's word that it applied key's suggestion id
// (Copilot's accept command, which the editor sends after the edit). A
// suggestion counts as accepted once: when the didChange that applied it
// counted it already, nothing changes; when the editor's didChanges took
// it apart first (it was counted stale), it is counted accepted instead,
// and the pause those didChanges started ends, for the model's own edit is
// no burst of the user's. A suggestion still current is claimed: the
// didChange that removes it accepts it. False for a suggestion the
// document does not know (dismissed, older, another document's).
func (n *NextEdits) Accepted(key string, id uint64) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	d := n.docs[key]
	if d == nil || id == 0 {
		return false
	}
	e := &d.editor
	switch {
	case e.gone == id && e.goneAccepted:
		return true
	case e.gone == id:
		n.counts.stale--
		n.counts.accepted++
		e.goneAccepted = true
		n.stopLocked(d)
		d.burst, d.noBurst = nil, true
		return true
	case d.sug != nil && d.sug.ID == id:
		e.claimed = id
		return true
	}
	return false
}
