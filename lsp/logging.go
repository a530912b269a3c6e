package lsp

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"go.lsp.dev/protocol"
)

// clientLogHandler forwards warnings and errors to the editor as
// window/logMessage (most editors show them in their LSP log), besides
// writing every record to the server's own log; with all set
// (Options.LogToEditor), it forwards every record the logger enables:
// information as Info, debug records as Log. Records are queued and sent
// by Run's forwarding goroutine, so logging never blocks on the connection;
// when the queue is full (a flood of records) records are dropped from the
// editor's view only. Text is redacted before it leaves.
type clientLogHandler struct {
	next   slog.Handler
	queue  chan<- string
	all    bool
	prefix string // rendered attrs of WithAttrs, and the group path
	group  string
}

func (h *clientLogHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *clientLogHandler) Handle(ctx context.Context, r slog.Record) error {
	err := h.next.Handle(ctx, r)
	if r.Level < slog.LevelWarn && !h.all {
		return err
	}
	var b strings.Builder
	b.WriteString(r.Message)
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		writeAttr(&b, h.group, a)
		return true
	})
	select {
	case h.queue <- levelTag(r.Level) + b.String():
	default:
	}
	return err
}

func (h *clientLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range attrs {
		writeAttr(&b, h.group, a)
	}
	return &clientLogHandler{next: h.next.WithAttrs(attrs), queue: h.queue, all: h.all, prefix: b.String(), group: h.group}
}

func (h *clientLogHandler) WithGroup(name string) slog.Handler {
	g := name
	if h.group != "" {
		g = h.group + "." + name
	}
	return &clientLogHandler{next: h.next.WithGroup(name), queue: h.queue, all: h.all, prefix: h.prefix, group: g}
}

func writeAttr(b *strings.Builder, group string, a slog.Attr) {
	if a.Equal(slog.Attr{}) {
		return
	}
	key := a.Key
	if group != "" {
		key = group + "." + key
	}
	if a.Value.Kind() == slog.KindGroup {
		for _, sub := range a.Value.Group() {
			writeAttr(b, key, sub)
		}
		return
	}
	fmt.Fprintf(b, " %s=%v", key, a.Value.Resolve().Any())
}

// levelTag is the queued message's first byte: its LSP MessageType (1
// error, 2 warning, 3 info, 4 log).
func levelTag(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return string(rune(protocol.MessageTypeError))
	case l >= slog.LevelWarn:
		return string(rune(protocol.MessageTypeWarning))
	case l >= slog.LevelInfo:
		return string(rune(protocol.MessageTypeInfo))
	}
	return string(rune(protocol.MessageTypeLog))
}

// logForwarding is the part of the server that carries log records to the
// editor: the server's logger queues them (clientLogHandler), forwardLogs
// sends them.
type logForwarding struct {
	queue chan string
}

// newLogForwarding returns the forwarding and the server's logger, which
// writes every record to next and queues warnings and errors, or every
// record when all is set (Options.LogToEditor).
func newLogForwarding(next slog.Handler, all bool) (logForwarding, *slog.Logger) {
	l := logForwarding{queue: make(chan string, 256)}
	return l, slog.New(&clientLogHandler{next: next, queue: l.queue, all: all})
}

// next returns the next queued message, or false once done is closed.
func (l logForwarding) next(done <-chan struct{}) (string, bool) {
	select {
	case <-done:
		return "", false
	case msg := <-l.queue:
		return msg, true
	}
}

// forwardLogs sends the queued records to the editor until the session
// ends. Nothing is sent before the initialize reply (the records of the
// start wait in the queue until then) and nothing after exit. A panic
// while one message is sent loses that message alone.
func (s *Server) forwardLogs() {
	select {
	case <-s.life.repliedCh():
	case <-s.life.exited():
		return
	}
	for {
		msg, ok := s.logs.next(s.life.exited())
		if !ok {
			return
		}
		s.guard("forward logs", func() { s.forwardLog(msg) })
	}
}

// forwardLog sends one queued message as window/logMessage, on the
// session's context: a notification, it is sent whole or not at all
// (notify sends it uncancelled).
func (s *Server) forwardLog(msg string) {
	s.hook("logMessage", msg)
	typ := protocol.MessageType(msg[0])
	s.notify(s.life.context(), "window/logMessage", &protocol.LogMessageParams{
		Type: typ, Message: "kimi-lsp: " + s.redact(msg[1:]),
	})
}
