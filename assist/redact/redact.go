// Package redact is kimi-lsp's one redactor: it strikes the API key (and any
// other secret it is given) from text the program passes on — log records
// (assist/logx), error texts, progress and editor messages (lsp), the model's
// streamed answer and the explanations stored from it (assist), tool results
// sent back to the model, configuration problems (assist/config) and the
// command line's output.
//
// The rules, in one place:
//
//   - A struck secret becomes Marker, "[REDACTED]", everywhere.
//   - A secret shorter than MinKeyLen (4 bytes) is not struck: a one-letter
//     "key" for a local server that ignores it protects nothing and would
//     strike a letter from every line.
//   - A secret is struck as written and in its JSON-escaped forms (with and
//     without HTML escaping: a key holding `"`, `\`, `<`, `&` or a control
//     character appears escaped inside a JSON document), wherever it stands,
//     escapes around it included.
//   - Redactor.String also strikes the token of every "Bearer <token>" (any
//     case, a token of 8 or more bytes), so a dumped Authorization header
//     leaks no key, old or new. Text the model wrote (answers, diffs, tool
//     arguments and results) goes through Redactor.Keys instead, which
//     strikes the known secrets only: code may say "Bearer " + something.
//   - A stream of chunks (Stream) is struck across chunk boundaries: the end
//     of a chunk that could begin a secret is held back until the next chunk
//     shows whether it does.
//   - An error (Redactor.Error) keeps its chain for errors.Is and errors.As;
//     its Error text and every fmt form (%v, %+v, %s, %q) are struck.
package redact

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
)

// Marker is what replaces a secret.
const Marker = "[REDACTED]"

// MinKeyLen is the shortest secret that is struck.
const MinKeyLen = 4

// minBearer is the shortest token struck after "Bearer ".
const minBearer = 8

// Redactor replaces secrets in text. The set of secrets can be changed at any
// time (Set) from any goroutine; every call uses one consistent set. The zero
// Redactor and nil strike bearer tokens only.
type Redactor struct {
	forms atomic.Pointer[[]string] // every form of every secret, longest first; never modified once stored
}

// New returns a Redactor for secrets.
func New(secrets ...string) *Redactor {
	r := &Redactor{}
	r.Set(secrets...)
	return r
}

// Set replaces the set of secrets (for example when the configuration
// changes). Surrounding space is dropped; empty and too short (MinKeyLen)
// values are ignored. Keep an old key in the set for as long as it may still
// appear.
func (r *Redactor) Set(secrets ...string) {
	var forms []string
	add := func(s string) {
		if !slices.Contains(forms, s) {
			forms = append(forms, s)
		}
	}
	for _, x := range secrets {
		x = strings.TrimSpace(x)
		if len(x) < MinKeyLen {
			continue
		}
		add(x)
		for _, html := range []bool{true, false} {
			if q := jsonEscaped(x, html); q != x {
				add(q)
			}
		}
	}
	// Longest first, so that a secret containing another is struck whole.
	slices.SortStableFunc(forms, func(a, b string) int { return len(b) - len(a) })
	r.forms.Store(&forms)
}

// jsonEscaped is s as it appears inside a JSON string.
func jsonEscaped(s string, html bool) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(html)
	if enc.Encode(s) != nil {
		return s
	}
	q := strings.TrimSuffix(b.String(), "\n")
	return q[1 : len(q)-1]
}

func (r *Redactor) secrets() []string {
	if r == nil {
		return nil
	}
	if p := r.forms.Load(); p != nil {
		return *p
	}
	return nil
}

// String returns s with every secret, and every bearer token, replaced by
// Marker. It returns s itself, without allocating, when there is nothing to
// replace. Use it on text the program writes: logs, errors, messages.
func (r *Redactor) String(s string) string {
	return bearer(r.Keys(s))
}

// Keys returns s with every secret replaced by Marker, and nothing else: for
// text the model wrote, which may hold "Bearer " followed by code.
func (r *Redactor) Keys(s string) string {
	for _, secret := range r.secrets() {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, Marker)
		}
	}
	return s
}

// Contains reports whether s holds a secret or a bearer token.
func (r *Redactor) Contains(s string) bool { return r.String(s) != s }

// Error returns an error whose text (and every fmt form) is err's, struck,
// and which unwraps to err. It returns err itself when no form of it holds
// a secret, and nil for nil.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := r.String(msg)
	if red == msg && !r.Contains(fmt.Sprintf("%+v", err)) {
		return err
	}
	return &redactedError{msg: red, err: err, r: r}
}

type redactedError struct {
	msg string
	err error
	r   *Redactor
}

func (e *redactedError) Error() string { return e.msg }
func (e *redactedError) Unwrap() error { return e.err }

// Format prints the wrapped error's own form for the verb (a %+v that adds
// detail, as some error packages do), struck.
func (e *redactedError) Format(f fmt.State, verb rune) {
	switch verb {
	case 'v':
		if f.Flag('+') {
			fmt.Fprint(f, e.r.String(fmt.Sprintf("%+v", e.err)))
			return
		}
		fmt.Fprint(f, e.msg)
	case 's':
		fmt.Fprint(f, e.msg)
	case 'q':
		fmt.Fprintf(f, "%q", e.msg)
	default:
		fmt.Fprintf(f, "%%!%c(%s)", verb, e.msg)
	}
}

// String strikes keys and bearer tokens from s: New(keys...).String(s), for
// a one-off use.
func String(s string, keys ...string) string { return New(keys...).String(s) }

// Error strikes keys and bearer tokens from err: New(keys...).Error(err).
func Error(err error, keys ...string) error { return New(keys...).Error(err) }

// Stream strikes the secrets (as Keys does) from a text that arrives in
// chunks, a secret split across chunks included. It is not safe for
// concurrent use.
type Stream struct {
	r    *Redactor
	held string // the end of the text so far that may begin a secret
}

// Stream returns a new Stream striking r's secrets of the moment.
func (r *Redactor) Stream() *Stream { return &Stream{r: r} }

// Write takes the next chunk and returns the text that can be passed on:
// the held-back text and chunk, struck, less a new end that may begin a
// secret.
func (s *Stream) Write(chunk string) string {
	t := s.r.Keys(s.held + chunk)
	keep := 0
	for _, secret := range s.r.secrets() {
		for n := min(len(secret)-1, len(t)); n > keep; n-- {
			if strings.HasSuffix(t, secret[:n]) {
				keep = n
				break
			}
		}
	}
	s.held = t[len(t)-keep:]
	return t[:len(t)-keep]
}

// Flush returns what was held back: the stream ended, so it was no secret.
func (s *Stream) Flush() string {
	t := s.held
	s.held = ""
	return t
}

// bearer replaces the token after every "bearer " (any case, one or more
// spaces or tabs) with Marker.
func bearer(s string) string {
	const word = "bearer"
	var b strings.Builder
	done := 0 // s[:done] is written to b
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
		// and not the marker.
		if sp == k || end-sp < minBearer || strings.HasPrefix(s[sp:], Marker) {
			i = k
			continue
		}
		if done == 0 {
			b.Grow(len(s))
		}
		b.WriteString(s[done:sp])
		b.WriteString(Marker)
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
		if s[i]|0x20 != lower[0] {
			continue
		}
		if strings.EqualFold(s[i:i+len(lower)], lower) {
			return i
		}
	}
	return -1
}
