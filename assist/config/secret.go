package config

import (
	"fmt"
	"log/slog"
	"strings"
)

// Secret holds a credential such as the API key. Its zero value is "not set".
//
// Every way of printing a Secret — fmt verbs, %+v of a struct holding it,
// log/slog, encoding/json, encoding.TextMarshaler — yields its redacted form
// (see Secret.String); only Reveal returns the credential itself, and it
// should be called exactly where the credential is used (the HTTP
// Authorization header).
type Secret struct {
	v string
}

// NewSecret returns a Secret holding s.
func NewSecret(s string) Secret { return Secret{v: s} }

// Reveal returns the credential. Call it only to put the credential where it
// is used; never log, echo or wrap the result in an error.
func (s Secret) Reveal() string { return s.v }

// IsSet reports whether a credential is present.
func (s Secret) IsSet() bool { return s.v != "" }

// String returns the redacted form: "not set"; "set" for a credential
// shorter than 16 bytes; otherwise its last four bytes after an ellipsis, and
// a leading "sk-" kept when present (for example "sk-…abcd"). At most the
// last four bytes of the credential are ever shown.
func (s Secret) String() string {
	switch {
	case s.v == "":
		return "not set"
	case len(s.v) < 16:
		return "set"
	}
	prefix := ""
	if strings.HasPrefix(s.v, "sk-") {
		prefix = "sk-"
	}
	return prefix + "…" + s.v[len(s.v)-4:]
}

// GoString returns the redacted form, so that %#v does not reveal it either.
func (s Secret) GoString() string { return "config.Secret(" + s.String() + ")" }

// Format implements fmt.Formatter: every verb prints the redacted form.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'q' {
		fmt.Fprintf(f, "%q", s.String())
		return
	}
	if verb == 'v' && f.Flag('#') {
		_, _ = f.Write([]byte(s.GoString()))
		return
	}
	_, _ = f.Write([]byte(s.String()))
}

// LogValue implements slog.LogValuer with the redacted form.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText implements encoding.TextMarshaler with the redacted form (so
// encoding/json and TOML encoders print it redacted too).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }
