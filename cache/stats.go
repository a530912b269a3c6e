package cache

import (
	"cmp"
	"fmt"
	"math"
	"time"
)

// Estimator estimates prompt tokens from bytes: bytes / chars-per-token
// (DefaultCharsPerToken, 3.2, for code and English under the Kimi
// tokenizer), times the ratio of actual to estimated tokens observed in the
// provider's replies so far. It is the one token estimate of the program:
// the Session budgets its prompts with it, and callers that choose what
// enters a prompt (relevance.Select) convert their token budgets to
// bytes with Bytes. A Session's estimator is corrected as replies come
// (Session.Estimator); the zero Estimator is the uncorrected one.
type Estimator struct {
	charsPerToken float64
	ratio         float64
	// budgetRatio is the ratio Bytes uses: it follows ratio only when
	// ratio moves more than budgetStep away from it, so that a budget in
	// bytes does not change with every reply (what fills a budget is laid
	// out in the cached prefix, and its margin would come and go).
	budgetRatio float64
}

// budgetStep is the relative change of the observed ratio that moves
// budgetRatio.
const budgetStep = 0.1

// ratioWeight is the weight of each new observation in the running ratio.
const ratioWeight = 0.3

// cpt returns the bytes per token, the default for the zero Estimator.
func (e *Estimator) cpt() float64 {
	if e.charsPerToken <= 0 {
		return DefaultCharsPerToken
	}
	return e.charsPerToken
}

func (e *Estimator) raw(bytes int) float64 { return float64(bytes) / e.cpt() }

func (e *Estimator) tokens(bytes int) int {
	r := e.ratio
	if r <= 0 {
		r = 1
	}
	return int(math.Round(e.raw(bytes) * r))
}

// Tokens estimates the tokens of bytes bytes of prompt text.
func (e Estimator) Tokens(bytes int) int { return e.tokens(bytes) }

// Bytes returns the bytes of prompt text estimated at tokens tokens, for
// byte budgets: the inverse of Tokens, except that the correction it
// applies changes in steps of 10%, not with every reply.
func (e Estimator) Bytes(tokens int) int {
	r := e.budgetRatio
	if r <= 0 {
		r = 1
	}
	return int(math.Floor(float64(tokens) * e.cpt() / r))
}

// observe corrects the ratio with a reply that counted actual tokens for a
// prompt estimated at raw tokens before correction.
func (e *Estimator) observe(raw float64, actual int) {
	if raw < 1 || actual <= 0 {
		return
	}
	r := float64(actual) / raw
	r = min(max(r, 0.25), 4) // one odd reply must not wreck the budget
	e.ratio += ratioWeight * (r - e.ratio)
	if math.Abs(e.ratio-e.budgetRatio) > budgetStep*e.budgetRatio {
		e.budgetRatio = e.ratio
	}
}

// Stats are the totals of a session, as kimi.stats returns them.
type Stats struct {
	// Requests counts the recorded requests; the token totals are theirs.
	Requests         int64 `json:"requests"`
	PromptTokens     int64 `json:"promptTokens"`
	CachedTokens     int64 `json:"cachedTokens"`
	CacheWriteTokens int64 `json:"cacheWriteTokens"`
	OutputTokens     int64 `json:"outputTokens"`
	ReasoningTokens  int64 `json:"reasoningTokens"`
	// HitRatio is CachedTokens / PromptTokens.
	HitRatio float64 `json:"hitRatio"`
	// CostUSD is the estimated cost (input and output); InputCostUSD its
	// input part; UncachedInputCostUSD what the same input would have cost
	// with no cache at all.
	CostUSD              float64 `json:"costUSD"`
	InputCostUSD         float64 `json:"inputCostUSD"`
	UncachedInputCostUSD float64 `json:"uncachedInputCostUSD"`
	// UnpricedRequests are recorded requests whose model has no price.
	UnpricedRequests int64 `json:"unpricedRequests"`
	// UnknownUsage counts requests recorded without usage.
	UnknownUsage int64 `json:"unknownUsage"`
	// EstimatedUsage counts requests whose token counts are the caller's
	// estimates (the reply carried no usage, see Usage.Estimated): the
	// totals and costs above include them.
	EstimatedUsage int64 `json:"estimatedUsage"`
	// Built counts the prompts built; EstimatedTokens and
	// PredictedCachedTokens sum their estimates and predictions.
	Built                 int64 `json:"built"`
	EstimatedTokens       int64 `json:"estimatedTokens"`
	PredictedCachedTokens int64 `json:"predictedCachedTokens"`
	// Rebases and Trims count the rewrites of the stable part for a long
	// edit log and for the budget.
	Rebases int64 `json:"rebases"`
	Trims   int64 `json:"trims"`
	// TokensPerEstimate is the observed ratio of actual to estimated
	// prompt tokens (1 before any reply).
	TokensPerEstimate float64 `json:"tokensPerEstimate"`
}

// Accounting is one recorded request.
type Accounting struct {
	Usage
	// Predicted is the PredictedCachedTokens of the prompt.
	Predicted int `json:"predictedCachedTokens"`
	// Priced is false when the model has no price; costs are then zero.
	Priced bool `json:"priced"`
	// InputCostUSD, OutputCostUSD and UncachedInputCostUSD as in Stats.
	InputCostUSD         float64 `json:"inputCostUSD"`
	OutputCostUSD        float64 `json:"outputCostUSD"`
	UncachedInputCostUSD float64 `json:"uncachedInputCostUSD"`
}

// Record accounts for the reply to the prompt with handle h, given the
// provider's usage (a zero PromptTokens means the reply carried no usage; it
// is counted in Stats.UnknownUsage). A usage with a negative count is an
// error that records nothing and leaves the handle pending. It corrects the token estimate with the
// actual prompt tokens and, when fewer tokens were cached than predicted,
// logs at debug level where the prompt diverged from the previous one.
func (s *Session) Record(h Handle, u Usage) (Accounting, error) {
	if err := checkUsage(u); err != nil {
		return Accounting{}, fmt.Errorf("cache: record %d: %w", h, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pend[h]
	if !ok {
		return Accounting{}, fmt.Errorf("cache: record %d: %w", h, ErrUnknownHandle)
	}
	delete(s.pend, h)
	for i, x := range s.pendOrder {
		if x == h {
			s.pendOrder = append(s.pendOrder[:i], s.pendOrder[i+1:]...)
			break
		}
	}
	a := Accounting{Usage: u, Predicted: p.predicted}
	s.stats.Requests++
	if u.PromptTokens <= 0 {
		s.stats.UnknownUsage++
		return a, nil
	}
	s.addUsageLocked(&a, p.model, u, cmp.Or(u.CacheTTL, p.ttl))
	if u.Estimated {
		return a, nil // an estimate cannot correct the estimator
	}
	s.est.observe(p.raw, u.PromptTokens)
	if miss := p.predicted - u.CachedTokens; miss > s.track.block {
		s.log.Debug("cache: fewer tokens cached than predicted",
			"predicted", p.predicted, "cached", u.CachedTokens, "prompt", u.PromptTokens,
			"diverged_at", p.diverged, "in", p.where, "near", p.near)
	}
	return a, nil
}

// checkUsage refuses a usage with negative counts (nothing is recorded).
func checkUsage(u Usage) error {
	if u.PromptTokens < 0 || u.CachedTokens < 0 || u.CacheWriteTokens < 0 || u.CompletionTokens < 0 || u.ReasoningTokens < 0 {
		return fmt.Errorf("negative token count in usage %+v", u)
	}
	return nil
}

// addUsageLocked adds a recorded request's tokens and cost to the totals,
// its cache writes priced for ttl. Precondition: s.mu is held.
func (s *Session) addUsageLocked(a *Accounting, model string, u Usage, ttl time.Duration) {
	if u.Estimated {
		s.stats.EstimatedUsage++
	}
	s.stats.PromptTokens += int64(u.PromptTokens)
	s.stats.CachedTokens += int64(u.CachedTokens)
	s.stats.CacheWriteTokens += int64(u.CacheWriteTokens)
	s.stats.OutputTokens += int64(u.CompletionTokens)
	s.stats.ReasoningTokens += int64(u.ReasoningTokens)
	if price, ok := s.prices[model]; ok {
		a.Priced = true
		a.InputCostUSD, a.OutputCostUSD, a.UncachedInputCostUSD = price.cost(u, ttl == time.Hour)
		s.stats.InputCostUSD += a.InputCostUSD
		s.stats.CostUSD += a.InputCostUSD + a.OutputCostUSD
		s.stats.UncachedInputCostUSD += a.UncachedInputCostUSD
	} else {
		s.stats.UnpricedRequests++
	}
}

// Stats returns the session totals so far.
func (s *Session) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	if st.PromptTokens > 0 {
		st.HitRatio = float64(st.CachedTokens) / float64(st.PromptTokens)
	}
	st.TokensPerEstimate = s.est.ratio
	return st
}

// EstimateTokens estimates the tokens of text with the session's corrected
// estimator.
func (s *Session) EstimateTokens(text string) int {
	return s.Estimator().Tokens(len(text))
}

// Estimator returns the session's token estimator as corrected so far.
func (s *Session) Estimator() Estimator {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.est
}
