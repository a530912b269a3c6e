package cache

import (
	"strings"
	"time"
)

// Rendering used for tracking: the tool definitions, then every message as a
// chat template would frame it. Offsets into a prompt (Prompt.Diverged) are
// offsets into this rendering. Any provider that serialises a request in
// order (tools, then messages, each content verbatim or escaped byte by
// byte) has its first differing byte at the same place, which is all the
// prefix cache depends on.
const (
	msgOpen  = "<|im_start|>"
	msgClose = "<|im_end|>\n"
)

func msgHeaderLen(role string) int { return len(msgOpen) + len(role) + 1 }

// Render appends to dst the canonical rendering of a request with the given
// tool definitions and messages, and returns the extended slice:
//
//	tools <|im_start|>role\ncontent<|im_end|>\n ...
//
// It is what the Session's prefix tracking measures, and what a test feeds
// to a cache simulator to compare its counts with the Session's predictions.
func Render(dst, tools []byte, msgs []Message) []byte {
	dst = append(dst, tools...)
	for _, m := range msgs {
		dst = append(dst, msgOpen...)
		dst = append(dst, m.Role...)
		dst = append(dst, '\n')
		dst = append(dst, m.Content...)
		dst = append(dst, msgClose...)
	}
	return dst
}

// renderedLen returns len(Render(nil, tools, msgs)).
func renderedLen(tools []byte, msgs []Message) int {
	n := len(tools)
	for _, m := range msgs {
		n += msgHeaderLen(m.Role) + len(m.Content) + len(msgClose)
	}
	return n
}

// commonPrefix returns the length of the longest common prefix of a and b.
// Unchanged segments are the same string, so the comparison is mostly
// pointer checks; changed ones compare in chunks.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	if a[:n] == b[:n] {
		return n
	}
	const chunk = 256
	i := 0
	for i+chunk <= n && a[i:i+chunk] == b[i:i+chunk] {
		i += chunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix returns the length of the longest common suffix of a and b.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	a, b = a[len(a)-n:], b[len(b)-n:]
	if a == b {
		return n
	}
	const chunk = 256
	i := 0 // bytes matched from the end
	for i+chunk <= n && a[n-i-chunk:n-i] == b[n-i-chunk:n-i] {
		i += chunk
	}
	for i < n && a[n-1-i] == b[n-1-i] {
		i++
	}
	return i
}

// lcp returns the length of the common prefix of the renderings of a and b,
// both with the same tool definitions (of tlen bytes), and the index of the
// message where they differ (len(a) or len(b) if one is a prefix of the
// other). known, if not negative, is the already computed common prefix
// length of the contents of message 1 (the large stable context), which is
// then not compared again.
func lcp(tlen int, a, b []Message, known int) (off, msg int) {
	off = tlen
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i].Role != b[i].Role {
			return off + len(msgOpen) + commonPrefix(a[i].Role+"\n", b[i].Role+"\n"), i
		}
		off += msgHeaderLen(a[i].Role)
		ac, bc := a[i].Content, b[i].Content
		if i == 1 && known >= 0 {
			if known < len(ac) || known < len(bc) {
				return off + known, i
			}
		} else if ac != bc {
			return off + commonPrefix(ac, bc), i
		}
		off += len(ac) + len(msgClose)
	}
	return off, min(len(a), len(b))
}

// sent is a prompt the provider has probably cached for model (a
// provider's cache is per model), until expires; gen
// identifies its stable context (message 1) among the session's renderings.
type sent struct {
	model   string
	msgs    []Message
	expires time.Time
	gen     int
}

// maxHistory bounds the prompts remembered for prediction.
const maxHistory = 16

// tracker remembers what was sent, to predict how much of the next prompt
// the provider serves from its cache.
//
// The provider's cache is a hash chain over blocks of tokens with a TTL: a
// prefix of whole blocks is alive while some request that contained it is
// within its TTL (writes set, reads refresh). Block prefixes nest, so the
// cached part of a new prompt is exactly its longest common prefix, in whole
// blocks, with any prompt sent within its TTL. The tracker keeps those
// prompts (their strings are shared with the layout, so this costs little
// memory) and compares with them directly: the same answer as hashing every
// block, without hashing megabytes per request, and with the exact byte
// where a prompt diverged. The large stable context is compared only when it
// is re-rendered (once per older rendering still alive), not per request.
type tracker struct {
	block, min int
	hist       []sent
	// gen numbers the renderings of the stable context; known maps the
	// gen of an older rendering still in hist to its common prefix length
	// with the current one.
	gen   int
	known map[int]int
}

// knownPrefix returns the common prefix length of the stable context of
// generation gen with the current one, or -1 if unknown.
func (t *tracker) knownPrefix(gen int, current string) int {
	if gen == t.gen {
		return len(current)
	}
	if v, ok := t.known[gen]; ok {
		return v
	}
	return -1
}

// newContext records a new rendering of the stable context and compares it
// once with every older rendering still remembered.
func (t *tracker) newContext(ctx string) {
	t.gen++
	if t.known == nil {
		t.known = make(map[int]int)
	}
	clear(t.known)
	for _, e := range t.hist {
		if _, done := t.known[e.gen]; !done && len(e.msgs) > 1 {
			t.known[e.gen] = commonPrefix(e.msgs[1].Content, ctx)
		}
	}
}

// predict returns the rendered length of the longest prefix of msgs shared
// with a prompt for the same model still alive at now (0 if none). msgs[1]
// is the current stable context.
func (t *tracker) predict(now time.Time, model string, tlen int, msgs []Message) int {
	best := 0
	for _, e := range t.hist {
		if e.model != model || !now.Before(e.expires) {
			continue
		}
		if off, _ := lcp(tlen, e.msgs, msgs, t.knownPrefix(e.gen, msgs[1].Content)); off > best {
			best = off
		}
	}
	return best
}

// add remembers msgs as sent at now with lifetime ttl, and forgets expired
// prompts and, past maxHistory, the ones expiring soonest.
func (t *tracker) add(now time.Time, ttl time.Duration, model string, msgs []Message) {
	kept := t.hist[:0]
	for _, e := range t.hist {
		if now.Before(e.expires) {
			kept = append(kept, e)
		}
	}
	for i := len(kept); i < len(t.hist); i++ {
		t.hist[i] = sent{}
	}
	t.hist = append(kept, sent{model: model, msgs: msgs, expires: now.Add(ttl), gen: t.gen})
	if len(t.hist) > maxHistory {
		// Entries are appended in time order; with one TTL per session the
		// first expires soonest.
		copy(t.hist, t.hist[1:])
		t.hist[len(t.hist)-1] = sent{}
		t.hist = t.hist[:len(t.hist)-1]
	}
}

// blocks rounds tokens down to whole cache blocks.
func (t *tracker) blocks(tokens int) int {
	if t.block <= 1 {
		return tokens
	}
	return tokens / t.block * t.block
}

// excerpt returns a short quoted-safe piece of s around off, for logs.
func excerpt(s string, off int) string {
	if off < 0 || off > len(s) {
		return ""
	}
	lo, hi := max(0, off-12), min(len(s), off+20)
	return strings.ToValidUTF8(s[lo:hi], "?")
}
