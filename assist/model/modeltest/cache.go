package modeltest

import (
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
)

// CacheConfig configures the implicit prefix-cache simulation.
type CacheConfig struct {
	// Disabled turns the simulation off: every prompt token is plain input.
	Disabled bool
	// BlockTokens is the cache granularity (cachetest.DefaultBlockTokens if
	// zero).
	BlockTokens int
	// MinTokens is the shortest prompt the cache reads or writes.
	MinTokens int
}

// cacheSim holds one cachetest.Sim per model: a provider's cache never
// serves one model's prompt to another.
type cacheSim struct {
	cfg CacheConfig

	mu   sync.Mutex
	sims map[string]*cachetest.Sim
}

func newCacheSim(cfg CacheConfig) *cacheSim {
	return &cacheSim{cfg: cfg, sims: make(map[string]*cachetest.Sim)}
}

// observe returns prompt, cached and written tokens for a request.
func (c *cacheSim) observe(model string, now time.Time, prompt []byte, ttl time.Duration) (int, int, int) {
	if c.cfg.Disabled {
		return cachetest.Count(prompt), 0, 0
	}
	return c.sim(model).Observe(now, prompt, ttl)
}

func (c *cacheSim) sim(model string) *cachetest.Sim {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.sims[model]
	if s == nil {
		s = cachetest.New(cachetest.Config{BlockTokens: c.cfg.BlockTokens, MinTokens: c.cfg.MinTokens, DefaultTTL: 5 * time.Minute})
		c.sims[model] = s
	}
	return s
}

func (c *cacheSim) flush() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.sims)
}

// CacheTotals returns the simulation's sums over every request so far, per
// model.
func (s *Server) CacheTotals() map[string]cachetest.Totals {
	s.cache.mu.Lock()
	defer s.cache.mu.Unlock()
	out := make(map[string]cachetest.Totals, len(s.cache.sims))
	for m, sim := range s.cache.sims {
		out[m] = sim.Totals()
	}
	return out
}

// usage computes the reply's usage: prompt tokens through the cache
// simulation (TTL from prompt_cache_options, 5m by default), completion
// tokens by the same deterministic tokenizer.
func (s *Server) usage(req *ChatRequest, prompt []byte, rule *Rule) Usage {
	ttl := 5 * time.Minute
	if o := req.PromptCacheOptions; o != nil && o.TTL != nil && *o.TTL == "1h" {
		ttl = time.Hour
	}
	var u Usage
	u.PromptTokens, u.CachedTokens, u.CacheWriteTokens = s.cache.observe(req.Model, s.cfg.Now(), prompt, ttl)
	u.ReasoningTokens = cachetest.CountString(rule.Reasoning)
	u.CompletionTokens = u.ReasoningTokens + cachetest.CountString(rule.Content)
	for _, c := range rule.ToolCalls {
		u.CompletionTokens += cachetest.CountString(c.Name) + cachetest.CountString(c.Arguments)
	}
	return u
}
