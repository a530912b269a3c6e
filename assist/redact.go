package assist

import (
	"strings"
	"sync"
)

// redacted replaces the API key wherever a task passes text on.
const redacted = "[REDACTED]"

// minKeyLen is the shortest key that is struck (as in assist/logx): a
// one-letter "key" for a local server protects nothing and would strike a
// letter from every answer.
const minKeyLen = 4

// redactingSink passes a task's stream on with the API key struck out. A
// key split across deltas is caught: the end of each stream that could be
// the start of the key is held back until the next delta shows whether it
// is (or flush releases it).
type redactingSink struct {
	next Sink
	key  string

	// mu guards the held-back ends of the two streams.
	mu              sync.Mutex
	content, reason string
}

func newRedactingSink(next Sink, key string) *redactingSink {
	if len(key) < minKeyLen {
		key = ""
	}
	return &redactingSink{next: next, key: key}
}

// redact strikes the key from s.
func (r *redactingSink) redact(s string) string {
	if r.key == "" || !strings.Contains(s, r.key) {
		return s
	}
	return strings.ReplaceAll(s, r.key, redacted)
}

// pass joins the held-back text with delta, strikes the key, and splits off
// a new tail that may be the start of the key.
func (r *redactingSink) pass(held *string, delta string) string {
	if r.key == "" {
		return delta
	}
	s := r.redact(*held + delta)
	keep := 0
	for n := min(len(r.key)-1, len(s)); n > 0; n-- {
		if strings.HasSuffix(s, r.key[:n]) {
			keep = n
			break
		}
	}
	*held = s[len(s)-keep:]
	return s[:len(s)-keep]
}

func (r *redactingSink) Content(delta string) {
	r.mu.Lock()
	out := r.pass(&r.content, delta)
	r.mu.Unlock()
	if out != "" {
		r.next.Content(out)
	}
}

func (r *redactingSink) Reasoning(delta string) {
	r.mu.Lock()
	out := r.pass(&r.reason, delta)
	r.mu.Unlock()
	if out != "" {
		r.next.Reasoning(out)
	}
}

func (r *redactingSink) Status(msg string) { r.next.Status(r.redact(msg)) }

// flush passes on what was held back: the stream ended, so it was not the
// key.
func (r *redactingSink) flush() {
	r.mu.Lock()
	c, re := r.content, r.reason
	r.content, r.reason = "", ""
	r.mu.Unlock()
	if re != "" {
		r.next.Reasoning(re)
	}
	if c != "" {
		r.next.Content(c)
	}
}
