package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Kimi: Review's findings are diagnostics (source "kimi", code "review").
// Each is a workspace.Marks mark over its lines, moved through every
// didChange on the read loop (memory only) and dropped when an edit touches
// its lines. Clients that pull diagnostics (textDocument.diagnostic) are
// answered by textDocument/diagnostic and told of changes with
// workspace/diagnostic/refresh; the others get publishDiagnostics. Not
// both: VS Code and Neovim keep pushed and pulled diagnostics apart and
// would show each finding twice. The findings are one source of the
// document's kimi diagnostics (diagnostics.go), sent by the one publisher
// (diagnosticsSender), never on the read loop.

// Diagnostic source and code of a finding.
const (
	reviewSource = "kimi"
	reviewCode   = "review"
)

// reviews holds the findings of every file.
type reviews struct {
	// changed tells the diagnostics publisher that a file's findings
	// changed (set once by NewServer; called with mu held, it never
	// blocks).
	changed func(workspace.URI)
	once    sync.Once

	// mu guards the fields below.
	mu sync.Mutex
	// last is the id of the newest finding: ids are never reused, so that
	// a quick fix of an earlier review's finding removes none of a later
	// one's.
	last  int
	files map[workspace.URI]*fileReview
}

// fileReview is one file's findings. While open, marks are in the text of
// the document's version; for a file the editor has not open (a review of
// changes reviews every changed file), they are in base, the text on disk
// that was reviewed, until the editor opens it.
type fileReview struct {
	open     bool
	version  int32
	base     *workspace.Snapshot
	marks    *workspace.Marks
	findings []reviewFinding
}

type reviewFinding struct {
	id, mark int
	f        assist.Finding
}

func (r *reviews) init() {
	r.once.Do(func() {
		r.files = map[workspace.URI]*fileReview{}
	})
}

// set replaces uri's findings with found, whose lines are those of
// reviewed. Marks are placed in reviewed and moved to the text of the
// document open now, read from docs under the lock: a didChange applied to
// docs before it is then in the text, one applied after it moves the marks
// (apply), so that no edit is missed or applied twice. A file not open
// keeps them against reviewed when closed is set (the text on disk: a
// review of changes); else they are not kept (the file was closed while it
// was reviewed, and its buffer may not have been saved): set reports
// whether they were.
func (r *reviews) set(uri workspace.URI, reviewed string, docs *workspace.Documents, closed bool, found []assist.Finding) bool {
	r.init()
	base := workspace.NewSnapshot(uri, "", 0, reviewed)
	fr := &fileReview{marks: workspace.NewMarks(), base: base}
	for _, f := range found {
		start, end := base.LineStart(f.StartLine-1), base.LineEnd(f.EndLine-1)
		fr.findings = append(fr.findings, reviewFinding{mark: fr.marks.Add(start, end), f: f})
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range fr.findings {
		r.last++
		fr.findings[i].id = r.last
	}
	cur, open := docs.Snapshot(uri)
	switch {
	case open:
		fr.moveTo(cur)
	case !closed:
		return false
	}
	r.files[uri] = fr
	r.markDirtyLocked(uri)
	return true
}

// moveTo moves fr's marks from base to cur's text, which the editor has
// open from now on.
func (fr *fileReview) moveTo(cur *workspace.Snapshot) {
	if text := cur.Text(); text != fr.base.Text() {
		fr.marks.Apply(workspace.DiffEdits(fr.base.Text(), text))
	}
	fr.open, fr.version, fr.base = true, cur.Version, nil
}

// opened moves the findings of a file that was not open onto the text the
// editor opened it with (didOpen, after the document is in docs).
func (r *reviews) opened(uri workspace.URI, snap *workspace.Snapshot) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	if fr := r.files[uri]; fr != nil && !fr.open {
		fr.moveTo(snap)
		r.markDirtyLocked(uri)
	}
}

// apply moves uri's marks through a didChange's edits that made version.
func (r *reviews) apply(uri workspace.URI, version int32, edits []workspace.Edit) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	fr := r.files[uri]
	if fr == nil || !fr.open || version <= fr.version && fr.version != 0 {
		return
	}
	fr.version = version
	fr.marks.Apply(edits)
	r.markDirtyLocked(uri)
}

// remove forgets one finding (by its id); it reports whether it was there.
func (r *reviews) remove(uri workspace.URI, id int) bool {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	fr := r.files[uri]
	if fr == nil {
		return false
	}
	for _, rf := range fr.findings {
		if rf.id == id && fr.marks.Remove(rf.mark) {
			r.markDirtyLocked(uri)
			return true
		}
	}
	return false
}

// clear forgets the findings of uri ("" for every file) and returns how
// many there were.
func (r *reviews) clear(uri workspace.URI) int {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for u, fr := range r.files {
		if uri == "" || u == uri {
			n += fr.marks.Len()
			delete(r.files, u)
			r.markDirtyLocked(u)
		}
	}
	return n
}

// markDirtyLocked tells the publisher that uri's findings changed.
// Precondition: r.mu is held.
func (r *reviews) markDirtyLocked(uri workspace.URI) {
	if r.changed != nil {
		r.changed(uri)
	}
}

// findingAt is one kept finding with its current byte range.
type findingAt struct {
	id         int
	start, end int
	f          assist.Finding
}

// current returns uri's kept findings and the text their ranges are in:
// snap's, the open document's (nil when it is not open); or, for a file
// not open, the text on disk that was reviewed. ok is false when the marks
// are not (yet) for snap's version.
func (r *reviews) current(uri workspace.URI, snap *workspace.Snapshot) (found []findingAt, in *workspace.Snapshot, ok bool) {
	r.init()
	r.mu.Lock()
	defer r.mu.Unlock()
	fr := r.files[uri]
	if fr == nil {
		return nil, snap, true
	}
	switch {
	case fr.open && snap != nil && snap.Version != fr.version,
		fr.open && snap == nil,  // closed: its didClose clears it next
		!fr.open && snap != nil: // opened: its didOpen moves the marks next
		return nil, nil, false
	case !fr.open:
		snap = fr.base
	}
	for _, rf := range fr.findings {
		if s, e, ok := fr.marks.Range(rf.mark); ok {
			found = append(found, findingAt{id: rf.id, start: s, end: e, f: rf.f})
		}
	}
	return found, snap, true
}

// diagnostics returns uri's findings as diagnostics in snap; ok false when
// they are not for snap's version.
func (s *Server) reviewDiagnostics(uri workspace.URI, snap *workspace.Snapshot) ([]outDiagnostic, bool) {
	found, snap, ok := s.reviews.current(uri, snap)
	if !ok {
		return nil, false
	}
	out := []outDiagnostic{}
	if snap == nil {
		return out, true
	}
	enc := s.encoding()
	for _, f := range found {
		msg := f.f.Message
		if f.f.Explanation != "" {
			msg += "\n\n" + f.f.Explanation
		}
		out = append(out, outDiagnostic{
			Range:    toProtocolRange(snap.OffsetRange(f.start, f.end, enc)),
			Severity: int(f.f.Severity),
			Code:     reviewCode,
			Source:   reviewSource,
			Message:  msg,
			Data:     &findingData{Finding: f.id},
		})
	}
	return out, true
}

// pullsDiagnostics reports whether the client pulls diagnostics and takes
// workspace/diagnostic/refresh. Findings and next-edit suggestions appear
// without an edit of the user's: a client that pulls only when it wants
// (on open, change, save) would not see them until its next edit, which
// may well drop the suggestion; such a client is declared no
// diagnosticProvider and gets them pushed.
func pullsDiagnostics(caps clientCapabilities) bool {
	return caps.TextDocument.Diagnostic != nil && caps.Workspace.Diagnostics != nil && caps.Workspace.Diagnostics.RefreshSupport
}

// handleDocumentDiagnostic answers textDocument/diagnostic with the
// document's findings.
func handleDocumentDiagnostic(s *Server, ctx context.Context, req *request) (any, error) {
	var p documentDiagnosticParams
	if err := decodeParams("textDocument/diagnostic", req.params, &p); err != nil {
		return nil, err
	}
	uri, err := workspace.ParseURI(p.TextDocument.URI)
	if err != nil {
		return nil, rpcError(jsonrpc2.InvalidParams, "textDocument/diagnostic: %v", err)
	}
	snap, _ := req.view.Snapshot(uri)
	diags, ok := s.kimiDiagnostics(uri, snap)
	if !ok {
		// The request's view is older or newer than the marks: the
		// current document answers.
		cur, _ := s.docs.Snapshot(uri)
		if diags, ok = s.kimiDiagnostics(uri, cur); !ok {
			diags = []outDiagnostic{}
		}
	}
	return fullDiagnosticReport{Kind: "full", Items: diags}, nil
}

// reviewActions are the code actions of the findings the range touches:
// "Kimi: Fix: <message>", a quick fix that runs Fix with the finding as
// its diagnostic.
func (s *Server) reviewActions(uri workspace.URI, snap *workspace.Snapshot, rng protocol.Range) []codeAction {
	diags, ok := s.reviewDiagnostics(uri, snap)
	if !ok {
		return nil
	}
	var out []codeAction
	for _, d := range diags {
		if d.Range.End.Line < rng.Start.Line || d.Range.Start.Line > rng.End.Line {
			continue
		}
		raw, err := json.Marshal(d)
		if err != nil {
			continue
		}
		msg := d.Message
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if utf8.RuneCountInString(msg) > 80 {
			msg = string([]rune(msg)[:79]) + "…"
		}
		title := "Kimi: Fix: " + msg
		r := d.Range
		fd, _ := d.Data.(*findingData)
		if fd == nil {
			continue
		}
		args := commandArgs{URI: string(uri), Range: &r, Diagnostics: []json.RawMessage{raw}, Finding: fd.Finding}
		out = append(out, codeAction{
			Title:       title,
			Kind:        "quickfix",
			Diagnostics: []json.RawMessage{raw},
			// A finding's own fix is its obvious choice (the first
			// finding's, when several are on the lines): editors list a
			// preferred action first (Neovim 0.12 had it 7th, after six of
			// gopls's).
			IsPreferred: len(out) == 0,
			Command:     &protocol.Command{Title: title, Command: "kimi.fix", Arguments: []any{args}},
		})
	}
	return out
}

// isReviewDiagnostic reports whether a diagnostic of a code action request
// is one of our findings (offered by reviewActions, not as a plain Fix).
func isReviewDiagnostic(raw json.RawMessage) bool {
	var d struct {
		Source string          `json:"source"`
		Code   json.RawMessage `json:"code"`
	}
	return json.Unmarshal(raw, &d) == nil && d.Source == reviewSource && string(d.Code) == `"`+reviewCode+`"`
}

// endReview ends the review of one file: the findings are kept and shown.
// reviewed is the text reviewed; onDisk is set when it is the file on disk,
// whose findings are shown also while the editor has not the file open.
func (s *Server) endReview(uri workspace.URI, reviewed string, onDisk bool, out *assist.Outcome) string {
	kept := s.reviews.set(uri, reviewed, s.docs, onDisk, out.Findings)
	msg := fmt.Sprintf("%d %s", len(out.Findings), plural(len(out.Findings), "finding", "findings"))
	if !kept && len(out.Findings) > 0 {
		msg += " (not shown: the file was closed meanwhile)"
	}
	if out.Dropped > 0 {
		msg += fmt.Sprintf(" (%d left out: invalid, outside the lines reviewed, or over review.maxFindings)", out.Dropped)
	}
	if out.Cut > 0 {
		msg += " (" + assist.CutNote(out.Cut) + ")"
	}
	return msg + usageNote(out)
}

// runReviewDiff is the job of kimi.review {diff: true}: every folder's
// changed files, one after the other, each reviewed by its hunks
// (assist's Engine.ReviewChanges); the findings become diagnostics.
func (s *Server) runReviewDiff(ctx context.Context, _ *jobRun, p *progress) (string, error) {
	var dirs []assist.ReviewDir
	for _, f := range s.folders.List() {
		dirs = append(dirs, assist.ReviewDir{Name: f.Name, Path: f.Path})
	}
	tot, err := s.engine.ReviewChanges(ctx, assist.ChangesReview{
		Folders: s.folders, Dirs: dirs, Config: s.config(), Redact: s.redact, To: changesShown{p, s}})
	if err != nil {
		return "", err
	}
	return tot.Summary(), nil
}

// changesShown shows a review of changes: its progress, each file's
// findings as diagnostics (also while the file is not open: the text
// reviewed is the file on disk), the reasons in the job's end only.
type changesShown struct {
	*progress
	s *Server
}

func (c changesShown) Reviewed(d assist.FileDiff, out *assist.Outcome) {
	c.s.endReview(workspace.FileURI(d.Path), d.Text, true, out)
}

func (changesShown) NotReviewed(string) {}

// reviewKind is the code action kind of Kimi: Review.
const reviewKind = "source.kimi.review"

// reviewAction is the menu entry of Kimi: Review for a range (a selection
// reviews it, a bare cursor the whole file).
func reviewAction(uri workspace.URI, rng protocol.Range) codeAction {
	args := commandArgs{URI: string(uri)}
	if !isCursor(rng) {
		r := rng
		args.Range = &r
	}
	title := "Kimi: Review"
	if args.Range == nil {
		title = "Kimi: Review File"
	}
	return codeAction{Title: title, Kind: reviewKind, Command: &protocol.Command{Title: title, Command: cmdReview, Arguments: []any{args}}}
}

// cmdReview and cmdClearReview name the review's commands.
const (
	cmdReview      = "kimi.review"
	cmdClearReview = "kimi.clearReview"
)

// clearReview answers kimi.clearReview: the findings of args.URI, or of
// every file without one, are cleared.
func clearReview(s *Server, args commandArgs) any {
	var uri workspace.URI
	if args.URI != "" {
		u, err := workspace.ParseURI(args.URI)
		if err != nil {
			return clearReviewReply{}
		}
		uri = u
	}
	return clearReviewReply{Cleared: s.reviews.clear(uri)}
}

// startReviewDiff starts the job of kimi.review {diff: true}: one job for
// the whole change set (a newer one supersedes it).
func (s *Server) startReviewDiff(req *request, p executeCommandParams) (any, error) {
	a := s.config().ReviewAction()
	a.Title = "Kimi: Review Changes"
	run := &jobRun{task: &assist.Task{Action: a}, clientToken: p.WorkDoneToken, reviewDiff: true}
	j, err := s.jobs.Start(s.life.context(), jobs.Spec{
		Key:     jobs.Key{Command: cmdReview, Document: "diff"},
		Title:   a.Title,
		Request: req.key,
		OnPanic: func(error) { s.jobPanicked(run) },
	}, func(ctx context.Context, j *jobs.Job) { s.runJob(ctx, j, run) })
	if err != nil {
		return nil, rpcError(jsonrpc2.InvalidRequest, "%s: %v", p.Command, err)
	}
	return jobReply{Job: j.ID}, nil
}
