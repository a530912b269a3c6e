package assist

import (
	"sync"

	"github.com/kimi-lsp/kimi-lsp/assist/redact"
)

// redactingSink passes a task's stream on with the API key struck out by the
// one redactor (assist/redact): a key split across deltas is caught, each of
// the two streams (answer and reasoning) held back where it may begin the
// key until the next delta or flush.
type redactingSink struct {
	next Sink
	r    *redact.Redactor

	// mu guards the two streams.
	mu              sync.Mutex
	content, reason *redact.Stream
}

func newRedactingSink(next Sink, key string) *redactingSink {
	r := redact.New(key)
	return &redactingSink{next: next, r: r, content: r.Stream(), reason: r.Stream()}
}

// redact strikes the key from s, text the model wrote.
func (r *redactingSink) redact(s string) string { return r.r.Keys(s) }

// holdsKey reports whether s holds the key.
func (r *redactingSink) holdsKey(s string) bool { return r.r.Keys(s) != s }

func (r *redactingSink) Content(delta string) {
	r.mu.Lock()
	out := r.content.Write(delta)
	r.mu.Unlock()
	if out != "" {
		r.next.Content(out)
	}
}

func (r *redactingSink) Reasoning(delta string) {
	r.mu.Lock()
	out := r.reason.Write(delta)
	r.mu.Unlock()
	if out != "" {
		r.next.Reasoning(out)
	}
}

// Status passes a status line on, struck as text the program writes.
func (r *redactingSink) Status(msg string) { r.next.Status(r.r.String(msg)) }

// Round passes the start of another model call on, its note struck as a
// status is.
func (r *redactingSink) Round(note string) { r.next.Round(r.r.String(note)) }

// flush passes on what was held back: the stream ended, so it was not the
// key.
func (r *redactingSink) flush() {
	r.mu.Lock()
	c, re := r.content.Flush(), r.reason.Flush()
	r.mu.Unlock()
	if re != "" {
		r.next.Reasoning(re)
	}
	if c != "" {
		r.next.Content(c)
	}
}
