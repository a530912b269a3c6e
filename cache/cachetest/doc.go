// Package cachetest simulates a provider's implicit prompt prefix cache, for
// tests and benchmarks (it is a test double, like net/http/httptest; no
// production code imports it).
//
// The provider caches prompts by prefix: a request is served from cache only
// up to the first byte where it differs from an earlier request, in whole
// blocks of tokens, and only within the lifetime (TTL) of what was written.
// Sim reproduces that deterministically:
//
//	sim := cachetest.New(cachetest.Config{BlockTokens: 16})
//	prompt, cached, written := sim.Observe(now, renderedRequest, 5*time.Minute)
//
// Observe tokenises the prompt (see Tokenize), cuts it into whole blocks of
// Config.BlockTokens tokens, and identifies each block by a hash chained over
// every block before it. The longest run of leading blocks that an earlier
// request wrote and that is still alive at now is cached (cachedTokens); the
// remaining whole blocks are written with the request's TTL (writeTokens);
// the partial block at the end is neither. Reading a block refreshes its
// expiry to the later of its current expiry and now+ttl. A prompt shorter than
// Config.MinTokens is neither read nor written. The clock is always passed in
// (no wall-clock reads), so tests control time exactly. Sim is safe for
// concurrent use; Totals sums every call, Peek predicts without side effects,
// Flush forgets everything.
//
// The tokenizer is a deterministic stand-in for a real one: a run of ASCII
// letters, digits and underscores (up to MaxWordBytes, with the single space
// before it), a run of ASCII white space (up to MaxSpaceBytes), a run of ASCII
// punctuation (up to MaxPunctBytes), or one non-ASCII rune. On the Go sources
// of net/http it averages 3.2 bytes per token, close to real BPE tokenizers
// on code. Like them it is prefix-stable: the tokens of a prefix of a text are
// the text's tokens, except perhaps the last one.
//
// GoSource and ReplaceOnce give tests real-size files to measure and edit:
// a file of the Go tree that runs them, changed in one place.
package cachetest
