package cache

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	// Input is plain (uncached, unwritten) prompt input.
	Input float64 `json:"input" toml:"input"`
	// CachedInput is prompt input read from the cache.
	CachedInput float64 `json:"cachedInput" toml:"cachedInput"`
	// CacheWrite5m and CacheWrite1h are prompt input written to the cache
	// with a 5 minute or a 1 hour lifetime (billed instead of Input).
	CacheWrite5m float64 `json:"cacheWrite5m" toml:"cacheWrite5m"`
	CacheWrite1h float64 `json:"cacheWrite1h" toml:"cacheWrite1h"`
	// Output is completion output, reasoning included. The defaults leave
	// it zero: the issue and the API text give no output price, so costs
	// cover input only unless configured.
	Output float64 `json:"output" toml:"output"`
}

// Prices maps a model name to its price. A plain value: the configuration
// layer may copy DefaultPrices, change or add entries, and pass the result in
// Config.Prices. A model without an entry is not priced (its requests count
// in Stats.UnpricedRequests).
type Prices map[string]Price

// DefaultPrices returns a new copy of the built-in price table: Kimi K3.1 Pro
// at 2.00 input, 0.20 cached read, 2.00 5m write, 4.00 1h write per million
// tokens.
func DefaultPrices() Prices {
	return Prices{
		"kimi-k3.1-pro": {Input: 2.00, CachedInput: 0.20, CacheWrite5m: 2.00, CacheWrite1h: 4.00},
	}
}

// cost returns the input and output cost in dollars of one request with
// usage u written with a 1 hour lifetime or not, and what the same input
// would cost with no cache at all.
func (p Price) cost(u Usage, hour bool) (input, output, uncached float64) {
	write := p.CacheWrite5m
	if hour {
		write = p.CacheWrite1h
	}
	plain := u.PromptTokens - u.CachedTokens - u.CacheWriteTokens
	if plain < 0 {
		plain = 0
	}
	input = (float64(plain)*p.Input + float64(u.CachedTokens)*p.CachedInput + float64(u.CacheWriteTokens)*write) / 1e6
	output = float64(u.CompletionTokens) * p.Output / 1e6
	uncached = float64(u.PromptTokens) * p.Input / 1e6
	return input, output, uncached
}

// Cost returns the input and output cost in dollars of one request with
// usage u, its cache writes priced for a 1 hour lifetime when hourTTL is
// set, else for 5 minutes: what Session.Record charges, for a caller that
// prices a request it is about to send (an estimated usage).
func (p Price) Cost(u Usage, hourTTL bool) (input, output float64) {
	input, output, _ = p.cost(u, hourTTL)
	return input, output
}
