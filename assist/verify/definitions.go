package verify

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// DefinitionTimeout bounds the wait for a helper's definitions of one
// selection's names (all asked at once), its operation slot included: a
// warm gopls answers a selection's names of Go's own tree in 6–10 ms
// typically, in about 100 ms for the first selection in a package (it
// type-checks the package) and after an edit of a large one (net/http),
// in 0.64 s at most as measured (bench/README.md, "Precise context"), so
// the bound is only met by a helper that is busy loading, hung or on a
// loaded machine, and it delays the model's request by at most that
// much.
const DefinitionTimeout = time.Second

// Location is where a helper says a name is declared: a document and the
// 0-based line of the declared name.
type Location struct {
	URI  workspace.URI
	Line int
}

// Definitions asks the helper of file's language where the names at the
// byte offsets of file's text are declared (textDocument/definition, one
// request per name, all sent at once), with the editor's buffers and
// file's text as the helper's documents. out[i] holds the locations of
// offsets[i]: nil for a name the helper does not know or did not answer
// within DefinitionTimeout (Bounds.Definition), the answers that came in
// time being kept.
//
// It never starts a helper and waits: one that is not running is started
// in the background for the next request, and the Result says so
// (Verified false), as it says which helper answered (Verified true). A
// helper still loading the workspace is given the bound; a warm one that
// answers nothing within it is treated as hung (stopped, not started again
// for RetryAfter), as a check would treat it.
func (v *Verifier) Definitions(ctx context.Context, file File, offsets []int) ([][]Location, Result) {
	g, r := v.groupOf(file.URI)
	if g == nil {
		return nil, r
	}
	if len(offsets) == 0 {
		return nil, Result{None: true}
	}
	name := helperName(g.argv)
	// A context that is already done: helperFor returns a running helper
	// at once, and otherwise starts one without waiting for it.
	now, cancel := context.WithCancel(ctx)
	cancel()
	h, err := v.helperFor(now, g.argv, g.path)
	if err != nil {
		if ctx.Err() != nil {
			return nil, Result{Reason: "the request was cancelled"}
		}
		if errors.Is(err, errNotWaited) {
			return nil, Result{Reason: name + " is starting"}
		}
		return nil, Result{Reason: err.Error()}
	}
	bctx, stop := context.WithTimeout(ctx, v.opts.Bounds.Definition)
	defer stop()
	out, answered, err := v.definitionsWith(bctx, h, file, offsets)
	switch {
	case ctx.Err() != nil:
		return out, Result{Reason: "the request was cancelled"}
	case err != nil && !errors.Is(err, context.DeadlineExceeded):
		return out, Result{Reason: v.failed(h, err)}
	case err != nil && answered == 0:
		h.mu.Lock()
		warm := h.warm
		h.mu.Unlock()
		t := errTimeout{v.opts.Bounds.Definition}
		if !warm {
			return out, Result{Reason: name + " " + t.Error() + " (still loading)"}
		}
		h.failedWith(t)
		return out, Result{Reason: name + " " + t.Error()}
	case err != nil:
		return out, Result{Helpers: []string{name}, Verified: true,
			Reason: name + " answered part of the names within " + v.opts.Bounds.Definition.String()}
	}
	return out, Result{Helpers: []string{name}, Verified: true}
}

// definitionsWith puts the editor's buffers and file in h and asks for the
// definitions; answered counts the names that got a reply. The error is
// the first failure, or ctx's when it ended first.
func (v *Verifier) definitionsWith(ctx context.Context, h *helper, file File, offsets []int) (out [][]Location, answered int, err error) {
	if err := v.beginWith(ctx, h, file); err != nil {
		return nil, 0, err
	}
	defer h.release()
	snap := workspace.NewSnapshot(file.URI, "", 0, file.Text)
	out = make([][]Location, len(offsets))
	errs := make([]error, len(offsets))
	var wg sync.WaitGroup
	for i, off := range offsets {
		if off < 0 || off > len(file.Text) {
			continue
		}
		pos := snap.OffsetPosition(off, h.enc)
		wg.Go(func() {
			var raw json.RawMessage
			errs[i] = h.conn.call(ctx, "textDocument/definition", map[string]any{
				"textDocument": docID{URI: string(file.URI)},
				"position":     wirePosition{Line: pos.Line, Character: pos.Character},
			}, &raw)
			if errs[i] == nil {
				out[i] = parseLocations(raw)
			}
		})
	}
	wg.Wait()
	for _, e := range errs {
		switch {
		case e == nil:
			answered++
		case isReplyError(e):
			// A name the helper refused is a name it does not know, not
			// a failure of the helper.
		case err == nil:
			err = e
		}
	}
	return out, answered, err
}

// isReplyError reports whether err is the helper's error reply to one
// request (the connection is fine).
func isReplyError(err error) bool {
	var re *rpcError
	return errors.As(err, &re) && re.Code != -1
}

// wireLocation and wireLocationLink are the two shapes of a definition
// reply's items.
type wireLocation struct {
	URI   string    `json:"uri"`
	Range wireRange `json:"range"`
	// LocationLink:
	TargetURI            string     `json:"targetUri"`
	TargetRange          wireRange  `json:"targetRange"`
	TargetSelectionRange *wireRange `json:"targetSelectionRange"`
}

// parseLocations reads a textDocument/definition reply: null, a Location,
// a list of Locations, or a list of LocationLinks. What it cannot read is
// no location.
func parseLocations(raw json.RawMessage) []Location {
	var list []wireLocation
	if err := json.Unmarshal(raw, &list); err != nil {
		var one wireLocation
		if json.Unmarshal(raw, &one) != nil {
			return nil
		}
		list = []wireLocation{one}
	}
	var out []Location
	for _, l := range list {
		uri, line := l.URI, l.Range.Start.Line
		if l.TargetURI != "" {
			uri, line = l.TargetURI, l.TargetRange.Start.Line
			if l.TargetSelectionRange != nil {
				line = l.TargetSelectionRange.Start.Line
			}
		}
		if uri == "" {
			continue
		}
		out = append(out, Location{URI: workspace.URI(uri), Line: int(line)})
	}
	return out
}
