package logx

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/redact"
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
	benchLog(b, NewHandler(slog.NewJSONHandler(io.Discard, nil), redact.New(key)))
}
