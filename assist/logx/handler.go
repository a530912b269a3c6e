// Package logx holds kimi-lsp's logging plumbing: a log/slog handler that
// strikes secrets (the API key, bearer tokens) from every record before it
// reaches its destination, with the program's one redactor (assist/redact),
// which it shares with the code that sends error texts to the editor.
package logx

import (
	"context"
	"encoding"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"

	"github.com/kimi-lsp/kimi-lsp/assist/redact"
)

// Handler is a slog.Handler that redacts every record before passing it to
// the next handler: the message, attribute keys and values, nested groups,
// errors, Stringers, LogValuers, and any other value whose printed form
// (fmt %+v, JSON, text marshalling) would hold a secret. Attributes given to
// WithAttrs are redacted when each record is handled, with the secrets of
// that moment, so a key configured later is still struck.
type Handler struct {
	next slog.Handler
	r    *redact.Redactor
	goas []groupOrAttrs // from WithGroup and WithAttrs, oldest first
}

type groupOrAttrs struct {
	group string      // a WithGroup name, or ""
	attrs []slog.Attr // a WithAttrs list
}

var _ slog.Handler = (*Handler)(nil)

// NewHandler returns a Handler that redacts with r and writes to next.
func NewHandler(next slog.Handler, r *redact.Redactor) *Handler {
	if r == nil {
		r = &redact.Redactor{}
	}
	return &Handler{next: next, r: r}
}

// Redactor returns the handler's redactor (shared with the handlers derived
// from it).
func (h *Handler) Redactor() *redact.Redactor { return h.r }

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
			attrs = []slog.Attr{{Key: h.r.String(g.group), Value: slog.GroupValue(attrs...)}}
			continue
		}
		pre := make([]slog.Attr, 0, len(g.attrs)+len(attrs))
		for _, a := range g.attrs {
			pre = append(pre, h.attr(a))
		}
		attrs = append(pre, attrs...)
	}
	out := slog.NewRecord(r.Time, r.Level, h.r.String(r.Message), r.PC)
	out.AddAttrs(attrs...)
	return h.next.Handle(ctx, out)
}

// attr returns a redacted copy of a.
func (h *Handler) attr(a slog.Attr) slog.Attr {
	a.Key = h.r.String(a.Key)
	a.Value = h.value(a.Value, 0)
	return a
}

func (h *Handler) value(v slog.Value, depth int) slog.Value {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.StringValue(h.r.String(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]slog.Attr, len(as))
		for i, a := range as {
			out[i] = slog.Attr{Key: h.r.String(a.Key), Value: h.value(a.Value, depth+1)}
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
		if h.r.Contains(f) {
			return slog.StringValue(h.r.String(forms[0]))
		}
	}
	return v
}
