package cache_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
)

// clock is a settable clock for the stand-in provider.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// send posts the prompt to the stand-in provider over HTTP, as the model
// client would (non-streaming), and returns the usage it answered.
func send(t testing.TB, srv *modeltest.Server, p *cache.Prompt) cache.Usage {
	t.Helper()
	ttl := "5m"
	if p.TTL == time.Hour {
		ttl = "1h"
	}
	body, err := json.Marshal(map[string]any{
		"model":                 cache.DefaultModel,
		"messages":              p.Messages,
		"tools":                 json.RawMessage(tools),
		"max_completion_tokens": 256,
		"reasoning_effort":      "low",
		"prompt_cache_options":  map[string]string{"mode": "implicit", "ttl": ttl},
	})
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", srv.URL+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+srv.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("stand-in answered %d: %s", resp.StatusCode, raw)
	}
	var reply struct {
		Usage struct {
			PromptTokens        int `json:"prompt_tokens"`
			CompletionTokens    int `json:"completion_tokens"`
			PromptTokensDetails struct {
				CachedTokens     int `json:"cached_tokens"`
				CacheWriteTokens int `json:"cache_write_tokens"`
			} `json:"prompt_tokens_details"`
			CompletionTokensDetails struct {
				ReasoningTokens int `json:"reasoning_tokens"`
			} `json:"completion_tokens_details"`
		} `json:"usage"`
	}
	if err := json.Unmarshal(raw, &reply); err != nil {
		t.Fatalf("decoding the reply: %v\n%s", err, raw)
	}
	u := reply.Usage
	return cache.Usage{
		PromptTokens:     u.PromptTokens,
		CachedTokens:     u.PromptTokensDetails.CachedTokens,
		CacheWriteTokens: u.PromptTokensDetails.CacheWriteTokens,
		CompletionTokens: u.CompletionTokens,
		ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
	}
}

// TestPredictionMatchesStandIn plays a scripted session through the
// stand-in provider (a real HTTP server with its prefix-cache simulation)
// and checks that the cached_tokens it reports match the tracker's
// predictions, request by request, and that the session's stats add up to
// what the provider reported.
func TestPredictionMatchesStandIn(t *testing.T) {
	for _, block := range []int{16, 256} {
		for _, mode := range []string{"estimate", "counted"} {
			t.Run(fmt.Sprintf("%s/block%d", mode, block), func(t *testing.T) {
				clk := &clock{now: t0}
				srv := modeltest.NewServer(modeltest.Config{
					Cache: modeltest.CacheConfig{BlockTokens: block, MinTokens: 1024},
					Now:   clk.Now,
				})
				defer srv.Close()
				cfg := cache.Config{BlockTokens: block, MinCacheTokens: 1024, MaxLogTokens: 600}
				if mode == "counted" {
					cfg.CountTokens = cachetest.Count
				}
				s := newSession(t, cfg)
				docs := workspace(t, "header.go", "cookie.go", "response.go", "clone.go")
				ed := editor{rand.New(rand.NewPCG(5, uint64(block)))}
				now := t0
				active, off := 2, 400
				var sum cache.Usage
				for step := 0; step < 30; step++ {
					switch {
					case step == 18:
						now = now.Add(7 * time.Minute) // idle past the TTL
					case step%7 == 3:
						active = (active + 1) % len(docs)
						off = len(docs[active].Text) / 2
					}
					docs[active].Text, off = ed.edit(docs[active].Text, min(off, len(docs[active].Text)))
					docs[active].LastEdited = int64(100 + step)
					now = now.Add(30 * time.Second)
					clk.Set(now)
					p := build(t, s, request(docs, active, min(off, len(docs[active].Text)), cachetest.ScriptActions[step%5].Name, now))
					u := send(t, srv, p)
					if _, err := s.Record(p.Handle, u); err != nil {
						t.Fatal(err)
					}
					sum.PromptTokens += u.PromptTokens
					sum.CachedTokens += u.CachedTokens
					// The renderings differ in framing only (a few tokens);
					// counted predictions are within a block of it, estimated
					// ones within a block and a few percent.
					tol := float64(block) + 16
					if mode == "estimate" && step > 2 {
						tol = float64(block) + 0.04*float64(u.PromptTokens)
					} else if mode == "estimate" {
						tol = math.Inf(1) // the estimate is not corrected yet
					}
					if d := math.Abs(float64(p.PredictedCachedTokens - u.CachedTokens)); d > tol {
						t.Errorf("step %d (layout %q): predicted %d cached tokens, the stand-in reported %d of %d", step, p.Layout, p.PredictedCachedTokens, u.CachedTokens, u.PromptTokens)
					}
				}
				st := s.Stats()
				if st.Requests != 30 || st.PromptTokens != int64(sum.PromptTokens) || st.CachedTokens != int64(sum.CachedTokens) {
					t.Errorf("Stats %+v do not add up to the provider's usage %+v", st, sum)
				}
				if got := srv.CacheTotals()[cache.DefaultModel]; got.CachedTokens != st.CachedTokens {
					t.Errorf("stand-in cached %d tokens in all, stats say %d", got.CachedTokens, st.CachedTokens)
				}
				t.Logf("hit ratio %.3f, predicted/cached %.3f", st.HitRatio, float64(st.PredictedCachedTokens)/float64(st.CachedTokens))
			})
		}
	}
}
