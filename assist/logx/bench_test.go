package logx

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

var testTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func benchLog(b *testing.B, h slog.Handler) {
	l := slog.New(h).With("component", "assist")
	err := errors.New("provider said 429")
	b.ReportAllocs()
	for b.Loop() {
		l.Info("stream chunk", "job", 17, "bytes", 812, "model", "kimi-k3.1-pro", "err", err)
	}
}

func BenchmarkJSONPlain(b *testing.B) { benchLog(b, slog.NewJSONHandler(io.Discard, nil)) }

func BenchmarkJSONRedacting(b *testing.B) {
	benchLog(b, NewHandler(slog.NewJSONHandler(io.Discard, nil), NewRedactor(key)))
}

func BenchmarkRedactClean(b *testing.B) {
	r := NewRedactor(key)
	s := "POST https://direct.evolink.ai/v1/chat/completions: 200 OK in 812ms, 4096 prompt tokens"
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Redact(s)
	}
}

func BenchmarkRedactHit(b *testing.B) {
	r := NewRedactor(key)
	s := "POST https://direct.evolink.ai/v1/chat/completions with Authorization: Bearer " + key
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Redact(s)
	}
}
