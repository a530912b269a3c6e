package model_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// BenchmarkStreamLoopback measures a whole streamed request against the
// stand-in over loopback (connection reused): 200 content chunks, no pacing.
// ns/event includes the stand-in's own work on the same CPUs.
func BenchmarkStreamLoopback(b *testing.B) {
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{
		Content: strings.Repeat("token ", 200), Chunks: 200}}, Cache: modeltest.CacheConfig{Disabled: true}})
	defer srv.Close()
	c := model.New(model.Options{BaseURL: srv.URL, APIKey: srv.Key})
	req := userReq("bench")
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		s, err := c.Stream(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range s.Events() {
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
		s.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}
