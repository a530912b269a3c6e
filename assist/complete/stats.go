package complete

import "github.com/kimi-lsp/kimi-lsp/cache"

// counts are the completer's own counters. Precondition: Completer.mu is
// held to read or change them.
type counts struct {
	requested, shown, reused, provider, cancelled, superseded, failed int64
}

// Stats are completion's figures for kimi.stats, beside the actions'.
type Stats struct {
	// Requested counts completion requests; Shown those answered with a
	// suggestion; Reused those answered from an earlier suggestion the
	// user was typing, without a provider request.
	Requested int64 `json:"requested"`
	Shown     int64 `json:"shown"`
	Reused    int64 `json:"reused"`
	// ProviderRequests counts the streams started; CancelledStreams those
	// hung up before they ended (superseded or cancelled); Superseded the
	// requests a newer one on the same document replaced; Failed the
	// streams that ended in an error.
	ProviderRequests int64 `json:"providerRequests"`
	CancelledStreams int64 `json:"cancelledStreams"`
	Superseded       int64 `json:"superseded"`
	Failed           int64 `json:"failed"`
	// Stats are the prompt accounting of the streams that ended: tokens,
	// cache hit ratio and cost.
	cache.Stats
}

// Stats returns the figures so far.
func (c *Completer) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.counts
	st := Stats{Requested: k.requested, Shown: k.shown, Reused: k.reused, ProviderRequests: k.provider,
		CancelledStreams: k.cancelled, Superseded: k.superseded, Failed: k.failed, Stats: c.retired}
	for _, d := range c.docs {
		d.prompt.addStatsTo(&st.Stats)
	}
	setHitRatio(&st.Stats)
	return st
}

// addStatsTo adds the figures of p's session, if any, to st.
// Precondition: the owning surface's lock is held.
func (p *docPrompt) addStatsTo(st *cache.Stats) {
	if p.sess != nil {
		addStats(st, p.sess.Stats())
	}
}

// setHitRatio sets st's cache hit ratio from its token counts.
func setHitRatio(st *cache.Stats) {
	if st.PromptTokens > 0 {
		st.HitRatio = float64(st.CachedTokens) / float64(st.PromptTokens)
	}
}

// addStats adds b's totals to a.
func addStats(a *cache.Stats, b cache.Stats) {
	a.Requests += b.Requests
	a.PromptTokens += b.PromptTokens
	a.CachedTokens += b.CachedTokens
	a.CacheWriteTokens += b.CacheWriteTokens
	a.OutputTokens += b.OutputTokens
	a.ReasoningTokens += b.ReasoningTokens
	a.CostUSD += b.CostUSD
	a.InputCostUSD += b.InputCostUSD
	a.UncachedInputCostUSD += b.UncachedInputCostUSD
	a.UnpricedRequests += b.UnpricedRequests
	a.UnknownUsage += b.UnknownUsage
	a.EstimatedUsage += b.EstimatedUsage
	a.Built += b.Built
	a.EstimatedTokens += b.EstimatedTokens
	a.PredictedCachedTokens += b.PredictedCachedTokens
	a.Rebases += b.Rebases
	a.Trims += b.Trims
	if b.TokensPerEstimate != 0 {
		a.TokensPerEstimate = b.TokensPerEstimate
	}
}
