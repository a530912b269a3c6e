package assist

import (
	"context"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/verify"
	"github.com/kimi-lsp/kimi-lsp/workspace/relevance"
)

// contextChoice is what a task's context was chosen from (BuildTask), kept
// so that Run can choose the selection's part again with a language
// server's definitions of its names.
type contextChoice struct {
	src relevance.Source
	req relevance.Request
}

// Definitions asks v's helper where the names of r's selection are
// declared (relevance.Lookups, verify.Definitions) and returns the answers
// as relevance.Request.Definitions takes them: nil, with the Result saying
// why, when the helper is not running yet (the call starts it), is
// missing, or did not answer within its bound.
func Definitions(ctx context.Context, v *verify.Verifier, src relevance.Source, r relevance.Request) ([]relevance.Definition, verify.Result) {
	if v == nil || src == nil || r.Active == nil {
		return nil, verify.Result{None: true}
	}
	lookups := relevance.Lookups(src, r)
	if len(lookups) == 0 {
		return nil, verify.Result{None: true}
	}
	offsets := make([]int, len(lookups))
	for i, l := range lookups {
		offsets[i] = l.Offset
	}
	locs, res := v.Definitions(ctx, verify.File{URI: r.Active.URI, Text: r.Active.Text()}, offsets)
	if !res.Verified {
		return nil, res
	}
	out := make([]relevance.Definition, 0, len(lookups))
	for i, l := range lookups {
		d := relevance.Definition{Lookup: l}
		if i < len(locs) {
			for _, loc := range locs[i] {
				d.Locations = append(d.Locations, relevance.Location{URI: loc.URI, Line: loc.Line})
			}
		}
		out = append(out, d)
	}
	return out, res
}

// precise chooses the selection's part of t's context again with the
// helper's definitions of its names, where verification is on and the
// helper is running (the first action in a language starts it and keeps
// the symbol index's choice). Only Volatile changes: the stable part never
// depends on the selection. The time it took and what the helper said go
// to the log.
func (e *Engine) precise(ctx context.Context, cfg config.Config, t *Task) {
	if t.choice == nil || !e.verifying(cfg) {
		return
	}
	start := time.Now()
	defs, res := Definitions(ctx, e.verifier, t.choice.src, t.choice.req)
	if res.None {
		return
	}
	if defs == nil {
		e.log.Debug("definitions from the symbol index", "reason", res.Reason)
		return
	}
	req := t.choice.req
	req.Definitions = defs
	c := relevance.Choose(t.choice.src, req)
	located := 0
	for _, d := range defs {
		if len(d.Locations) > 0 {
			located++
		}
	}
	e.log.Debug("definitions from the helper", "helper", res.Helpers, "names", len(defs), "answered", located,
		"volatile", len(c.Volatile), "was", len(t.Volatile), "took", time.Since(start).Round(time.Millisecond), "note", res.Reason)
	t.Volatile = contextDocs(c.Volatile)
	e.verifyCounts.contextActions.Add(1)
	e.verifyCounts.names.Add(int64(len(defs)))
	e.verifyCounts.located.Add(int64(located))
}
