package cachetest

import (
	"encoding/binary"
	"sync"
	"time"
)

// Defaults used where a Config field is zero.
const (
	DefaultBlockTokens = 16
	DefaultTTL         = 5 * time.Minute
)

// Config configures a Sim. The zero value is usable: 16-token blocks, no
// minimum length, a 5 minute TTL when Observe is given none.
type Config struct {
	// BlockTokens is the cache granularity: only whole blocks of this many
	// tokens are read or written. Zero means DefaultBlockTokens.
	BlockTokens int
	// MinTokens is the shortest prompt the cache handles: a prompt of fewer
	// tokens is neither read from nor written to the cache.
	MinTokens int
	// DefaultTTL is the lifetime of a write when Observe is given a ttl <= 0.
	// Zero means DefaultTTL (5 minutes).
	DefaultTTL time.Duration
}

// Totals are the sums over every Observe call of a Sim.
type Totals struct {
	Requests     int64 `json:"requests"`
	PromptTokens int64 `json:"promptTokens"`
	CachedTokens int64 `json:"cachedTokens"`
	WriteTokens  int64 `json:"cacheWriteTokens"`
}

// Sim simulates a provider's implicit prefix cache. It is safe for use by
// several goroutines at once. Create one with New.
type Sim struct {
	block    int
	min      int
	fallback time.Duration

	mu sync.Mutex
	// entries maps the chain hash of a prefix of whole blocks to the time
	// that prefix expires.
	entries  map[uint64]time.Time
	totals   Totals
	observed int      // Observe calls since the last sweep of expired entries
	scratch  []int    // token boundaries, reused between calls
	hashes   []uint64 // chain hashes, reused between calls
}

// New returns a Sim with an empty cache.
func New(cfg Config) *Sim {
	s := &Sim{
		block:    cfg.BlockTokens,
		min:      cfg.MinTokens,
		fallback: cfg.DefaultTTL,
		entries:  make(map[uint64]time.Time),
	}
	if s.block <= 0 {
		s.block = DefaultBlockTokens
	}
	if s.fallback <= 0 {
		s.fallback = DefaultTTL
	}
	return s
}

// BlockTokens returns the block size in tokens.
func (s *Sim) BlockTokens() int { return s.block }

// FNV-1a, 64 bit: deterministic across processes, so a failing test replays.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// chain extends the chain hash h over the bytes of one block: FNV-1a style
// mixing, eight bytes at a time, with the previous hash mixed in first so
// that equal blocks after different prefixes hash differently.
func chain(h uint64, block []byte) uint64 {
	x := (uint64(fnvOffset) ^ h) * fnvPrime
	x ^= uint64(len(block))
	x *= fnvPrime
	for len(block) >= 8 {
		x ^= binary.LittleEndian.Uint64(block)
		x *= fnvPrime
		x ^= x >> 29
		block = block[8:]
	}
	for _, c := range block {
		x ^= uint64(c)
		x *= fnvPrime
	}
	return x ^ x>>32
}

// hashLocked tokenises prompt and fills s.hashes with the chain hash of every
// whole block. It returns the number of tokens.
// Precondition: s.mu is held.
func (s *Sim) hashLocked(prompt []byte) int {
	s.scratch = AppendBoundaries(s.scratch[:0], prompt)
	n := len(s.scratch)
	s.hashes = s.hashes[:0]
	var h uint64
	start := 0
	for end := s.block; end <= n; end += s.block {
		stop := s.scratch[end-1]
		h = chain(h, prompt[start:stop])
		s.hashes = append(s.hashes, h)
		start = stop
	}
	return n
}

// Observe plays one request with the given prompt bytes at time now, as the
// provider would, and returns its accounting:
//
//   - promptTokens: every token of the prompt;
//   - cachedTokens: the tokens of the longest prefix of whole blocks that an
//     earlier request wrote (or refreshed) and that has not expired at now;
//   - writeTokens: the tokens of the remaining whole blocks, which this
//     request writes with lifetime ttl (a ttl <= 0 means the configured
//     default). The tokens after the last whole block are neither read nor
//     written; they are plain input.
//
// A block is identified by the hash of its bytes chained with the hash of
// every block before it, so a block is only ever found after the same prefix.
// Reading a block refreshes it: its expiry becomes the later of its current
// expiry and now+ttl (a read extends a cached prefix as a real implicit cache
// does; it never shortens a longer lifetime written earlier). A prompt of
// fewer than MinTokens tokens is neither read nor written.
//
// The clock is the caller's: Observe never reads the wall clock, so tests and
// benchmarks can move time as they like.
func (s *Sim) Observe(now time.Time, prompt []byte, ttl time.Duration) (promptTokens, cachedTokens, writeTokens int) {
	if ttl <= 0 {
		ttl = s.fallback
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.hashLocked(prompt)
	s.totals.Requests++
	s.totals.PromptTokens += int64(n)
	if n < s.min {
		return n, 0, 0
	}
	expiry := now.Add(ttl)
	hit := true
	for _, h := range s.hashes {
		if hit {
			if exp, ok := s.entries[h]; ok && now.Before(exp) {
				cachedTokens += s.block
				if expiry.After(exp) {
					s.entries[h] = expiry
				}
				continue
			}
			hit = false
		}
		s.entries[h] = expiry
		writeTokens += s.block
	}
	s.totals.CachedTokens += int64(cachedTokens)
	s.totals.WriteTokens += int64(writeTokens)
	s.observed++
	if s.observed >= 256 {
		s.sweepLocked(now)
	}
	return n, cachedTokens, writeTokens
}

// Peek returns what Observe would return for prompt at now, without reading,
// writing or refreshing anything and without counting it in the totals.
func (s *Sim) Peek(now time.Time, prompt []byte) (promptTokens, cachedTokens, writeTokens int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.hashLocked(prompt)
	if n < s.min {
		return n, 0, 0
	}
	hit := true
	for _, h := range s.hashes {
		if hit {
			if exp, ok := s.entries[h]; ok && now.Before(exp) {
				cachedTokens += s.block
				continue
			}
			hit = false
		}
		writeTokens += s.block
	}
	return n, cachedTokens, writeTokens
}

// sweepLocked deletes the entries expired at now.
// Precondition: s.mu is held.
func (s *Sim) sweepLocked(now time.Time) {
	for h, exp := range s.entries {
		if !now.Before(exp) {
			delete(s.entries, h)
		}
	}
	s.observed = 0
}

// Flush empties the cache, as a provider evicting everything would. Totals
// are kept.
func (s *Sim) Flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.entries)
}

// Len returns the number of blocks held, expired ones not yet swept included.
func (s *Sim) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Totals returns the sums over every Observe call so far.
func (s *Sim) Totals() Totals {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.totals
}
