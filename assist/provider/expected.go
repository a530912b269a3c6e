package provider

import (
	"fmt"
	"slices"

	"github.com/kimi-lsp/kimi-lsp/assist/spend"
)

// DefaultExpectedOutput is the output an estimate counts for a surface and
// model with no answer recorded yet: a typical edit's answer with its
// thinking (the most an answer may be, 32,768 tokens, would make every
// request look dear).
const DefaultExpectedOutput = 4096

// recentOutputs is how many answers of one surface and model the estimate
// looks back on.
const recentOutputs = 5

// seedRecords is how many of the record's newest lines seed the answers
// of earlier sessions, once, at the first estimate.
const seedRecords = 400

// Expected is the output an estimate counts, and on what it is based.
type Expected struct {
	Tokens int
	// Basis says where Tokens comes from, for the question before a
	// request ("the median of the last 3 explain answers").
	Basis string
}

// outputKey is a surface and a model.
type outputKey struct{ surface, model string }

// ExpectedOutput is the output to count in the estimate of surface's next
// request to modelName, at most limit tokens (its max_completion_tokens;
// 0: no bound): the (upper) median of that surface's last few answers from that
// model, in this session or, before its first, in the request record's
// newest lines; DefaultExpectedOutput when there is none. A repair, a
// tool round or a retry is recorded under its own surface and so counted
// apart.
func (l *Ledger) ExpectedOutput(surface, modelName string, limit int) Expected {
	bound := func(n int) int {
		if limit > 0 {
			return min(n, limit)
		}
		return n
	}
	if l == nil {
		return Expected{Tokens: bound(DefaultExpectedOutput), Basis: fmt.Sprintf("%s output tokens assumed", spend.Count(bound(DefaultExpectedOutput)))}
	}
	l.seedOutputs()
	l.mu.Lock()
	recent := slices.Clone(l.outputs[outputKey{surface, modelName}])
	l.mu.Unlock()
	if len(recent) == 0 {
		n := bound(DefaultExpectedOutput)
		return Expected{Tokens: n, Basis: fmt.Sprintf("%s output tokens assumed: no %s answer recorded yet", spend.Count(n), surface)}
	}
	// The upper median: one answer far longer than the others (a review
	// of a whole file, one cut off at its bound) does not make the next
	// five requests ask.
	slices.Sort(recent)
	n := bound(recent[len(recent)/2])
	what := fmt.Sprintf("the last %s answer", surface)
	switch {
	case len(recent) == 2:
		what = fmt.Sprintf("the longer of the last 2 %s answers", surface)
	case len(recent) > 2:
		what = fmt.Sprintf("the median of the last %d %s answers", len(recent), surface)
	}
	return Expected{Tokens: n, Basis: fmt.Sprintf("%s output tokens, as %s", spend.Count(n), what)}
}

// seedOutputs reads, once, the answers the record holds from earlier
// sessions (this session's are counted as they end: noteOutput).
func (l *Ledger) seedOutputs() {
	l.seedOnce.Do(func() {
		recs, err := l.Records(seedRecords)
		if err != nil {
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		seen := l.outputs
		l.outputs = nil
		for _, r := range recs {
			l.noteOutputLocked(r)
		}
		// This session's answers, if any ended before the seed, are newer.
		for k, v := range seen {
			for _, n := range v {
				l.noteOutputLocked(spend.Record{Surface: k.surface, Model: k.model, OutputTokens: n, Outcome: spend.OutcomeOK})
			}
		}
	})
}

// noteOutput counts a request that ended in the surface's recent answers.
func (l *Ledger) noteOutput(r spend.Record) {
	l.mu.Lock()
	l.noteOutputLocked(r)
	l.mu.Unlock()
}

// noteOutputLocked: an answer the provider counted says how long the next
// one may be (one cut off at its bound, or all thinking, included: they
// cost that much). Precondition: l.mu is held.
func (l *Ledger) noteOutputLocked(r spend.Record) {
	switch r.Outcome {
	case spend.OutcomeOK, spend.OutcomeCutOff, spend.OutcomeNoAnswer:
	default:
		return
	}
	if r.Estimated || r.OutputTokens <= 0 || r.Surface == "" {
		return
	}
	if l.outputs == nil {
		l.outputs = map[outputKey][]int{}
	}
	k := outputKey{r.Surface, r.Model}
	v := append(l.outputs[k], r.OutputTokens)
	if len(v) > recentOutputs {
		v = v[len(v)-recentOutputs:]
	}
	l.outputs[k] = v
}
