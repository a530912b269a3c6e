// Package logx holds kimi-lsp's logging plumbing: a log/slog handler that
// strikes secrets (the API key, bearer tokens) from every record before it
// reaches its destination, and the Redactor it shares with the code that
// sends error texts to the editor.
package logx

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
)

// Redacted is what replaces a secret.
const Redacted = "[REDACTED]"

// MinSecretLen is the shortest secret that is redacted. Shorter "keys" (such
// as "x" for a local server that ignores the key) protect nothing and would
// strike every occurrence of a common letter from the logs.
const MinSecretLen = 4

// Redactor replaces secrets in text. The set of secrets can be changed at any
// time (SetSecrets) from any goroutine; Redact always uses a consistent set.
// Besides the secrets it was given, it replaces the token of every
// "Bearer <token>" (any case) that it sees, so that a dumped Authorization
// header leaks no key, old or new. The zero Redactor is ready to use.
type Redactor struct {
	secrets atomic.Pointer[[]string] // longest first; never modified once stored
}

// NewRedactor returns a Redactor for secrets.
func NewRedactor(secrets ...string) *Redactor {
	r := &Redactor{}
	r.SetSecrets(secrets...)
	return r
}

// SetSecrets replaces the set of secrets (for example when the configuration
// changes). Empty and too short (MinSecretLen) values are ignored. Keep an
// old key in the set for as long as it may still appear.
func (r *Redactor) SetSecrets(secrets ...string) {
	var s []string
	for _, x := range secrets {
		x = strings.TrimSpace(x)
		if len(x) >= MinSecretLen && !slices.Contains(s, x) {
			s = append(s, x)
		}
	}
	// Longest first, so that a secret containing another is struck whole.
	slices.SortFunc(s, func(a, b string) int { return len(b) - len(a) })
	r.secrets.Store(&s)
}

// Redact returns s with every secret, and every bearer token, replaced by
// [REDACTED]. It returns s itself, without allocating, when there is nothing
// to replace. Use it on error texts sent to the editor.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return redactBearer(s)
	}
	if p := r.secrets.Load(); p != nil {
		for _, secret := range *p {
			if strings.Contains(s, secret) {
				s = strings.ReplaceAll(s, secret, Redacted)
			}
		}
	}
	return redactBearer(s)
}

// contains reports whether s holds a secret or a bearer token.
func (r *Redactor) contains(s string) bool {
	return r.Redact(s) != s
}

// RedactError returns an error whose text is err's, redacted, and which
// still unwraps to err (so errors.Is keeps working). It returns err itself
// when there is nothing to redact, and nil for nil.
func (r *Redactor) RedactError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := r.Redact(msg)
	if red == msg {
		return err
	}
	return &redactedError{msg: red, err: err}
}

type redactedError struct {
	msg string
	err error
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// redactBearer replaces the token after every "bearer " (any case, one or
// more spaces) with [REDACTED].
func redactBearer(s string) string {
	const word = "bearer"
	var b strings.Builder
	done := 0 // s[:done] is written to b (or b is unused)
	for i := 0; i+len(word) < len(s); {
		j := indexFold(s[i:], word)
		if j < 0 {
			break
		}
		j += i
		k := j + len(word)
		sp := k
		for sp < len(s) && (s[sp] == ' ' || s[sp] == '\t') {
			sp++
		}
		end := sp
		for end < len(s) && isTokenByte(s[end]) {
			end++
		}
		// Only "Bearer <token>": a space and a token long enough to be one,
		// and not our own marker.
		if sp == k || end-sp < 8 || strings.HasPrefix(s[sp:], Redacted) {
			i = k
			continue
		}
		if b.Len() == 0 && done == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[done:sp])
		b.WriteString(Redacted)
		done, i = end, end
	}
	if done == 0 {
		return s
	}
	b.WriteString(s[done:])
	return b.String()
}

// isTokenByte reports whether c can be part of a bearer token (RFC 6750's
// b64token, plus a few characters keys use).
func isTokenByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("-._~+/=", c) >= 0
}

// indexFold is strings.Index for an ASCII lower-case needle, ignoring case.
func indexFold(s, lower string) int {
	for i := 0; i+len(lower) <= len(s); i++ {
		c := s[i] | 0x20
		if c != lower[0] {
			continue
		}
		if strings.EqualFold(s[i:i+len(lower)], lower) {
			return i
		}
	}
	return -1
}

// Handler is a slog.Handler that redacts every record before passing it to
// the next handler: the message, attribute keys and values, nested groups,
// errors, Stringers, LogValuers, and any other value whose printed form
// (fmt %+v, JSON, text marshalling) would hold a secret. Attributes given to
// WithAttrs are redacted when each record is handled, with the secrets of
// that moment, so a key configured later is still struck.
type Handler struct {
	next slog.Handler
	r    *Redactor
	goas []groupOrAttrs // from WithGroup and WithAttrs, oldest first
}

type groupOrAttrs struct {
	group string      // a WithGroup name, or ""
	attrs []slog.Attr // a WithAttrs list
}

var _ slog.Handler = (*Handler)(nil)

// NewHandler returns a Handler that redacts with r and writes to next.
func NewHandler(next slog.Handler, r *Redactor) *Handler {
	if r == nil {
		r = &Redactor{}
	}
	return &Handler{next: next, r: r}
}

// Redactor returns the handler's redactor (shared with the handlers derived
// from it).
func (h *Handler) Redactor() *Redactor { return h.r }

// Enabled reports whether the next handler handles level.
func (h *Handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	h2 := *h
	h2.goas = append(slices.Clip(h.goas), groupOrAttrs{attrs: slices.Clone(attrs)})
	return &h2
}

// WithGroup returns a handler that nests the following attributes in name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.goas = append(slices.Clip(h.goas), groupOrAttrs{group: name})
	return &h2
}

// Handle redacts r and passes it on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	attrs := make([]slog.Attr, 0, r.NumAttrs())
	r.Attrs(func(a slog.Attr) bool {
		attrs = append(attrs, h.attr(a))
		return true
	})
	// Fold the WithGroup/WithAttrs chain around the record's attributes,
	// innermost first.
	for i := len(h.goas) - 1; i >= 0; i-- {
		g := h.goas[i]
		if g.group != "" {
			if len(attrs) == 0 {
				continue // an empty group is not printed
			}
			attrs = []slog.Attr{{Key: h.r.Redact(g.group), Value: slog.GroupValue(attrs...)}}
			continue
		}
		pre := make([]slog.Attr, 0, len(g.attrs)+len(attrs))
		for _, a := range g.attrs {
			pre = append(pre, h.attr(a))
		}
		attrs = append(pre, attrs...)
	}
	out := slog.NewRecord(r.Time, r.Level, h.r.Redact(r.Message), r.PC)
	out.AddAttrs(attrs...)
	return h.next.Handle(ctx, out)
}

// attr returns a redacted copy of a.
func (h *Handler) attr(a slog.Attr) slog.Attr {
	a.Key = h.r.Redact(a.Key)
	a.Value = h.value(a.Value, 0)
	return a
}

func (h *Handler) value(v slog.Value, depth int) slog.Value {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.StringValue(h.r.Redact(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]slog.Attr, len(as))
		for i, a := range as {
			out[i] = slog.Attr{Key: h.r.Redact(a.Key), Value: h.value(a.Value, depth+1)}
		}
		return slog.GroupValue(out...)
	case slog.KindAny:
		return h.anyValue(v)
	}
	return v // numbers, booleans, times, durations hold no text
}

// anyValue checks every form in which a handler may print x: its error
// text, its text marshalling, its bytes, fmt's %+v and %v, and JSON. If any
// holds a secret, x is replaced by its redacted text; otherwise x is kept
// as it is, so that JSON output keeps its structure.
func (h *Handler) anyValue(v slog.Value) slog.Value {
	x := v.Any()
	var forms []string
	switch t := x.(type) {
	case error:
		forms = append(forms, t.Error())
	case []byte:
		forms = append(forms, string(t))
	}
	if tm, ok := x.(encoding.TextMarshaler); ok {
		if b, err := tm.MarshalText(); err == nil {
			forms = append(forms, string(b))
		}
	}
	plus := fmt.Sprintf("%+v", x)
	forms = append(forms, plus, fmt.Sprint(x))
	if b, err := json.Marshal(x); err == nil {
		forms = append(forms, string(b))
	}
	for _, f := range forms {
		if h.r.contains(f) {
			return slog.StringValue(h.r.Redact(forms[0]))
		}
	}
	return v
}
