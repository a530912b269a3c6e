package model

import (
	"fmt"
	"net/http"
	"testing"
	"time"
)

func TestDefaultEndpoints(t *testing.T) {
	const direct, api = "https://direct.evolink.ai/v1/chat/completions", "https://api.evolink.ai/v1/chat/completions"
	tests := []struct {
		opts Options
		want []string
	}{
		{Options{}, []string{direct, api}},
		{Options{BaseURL: "https://direct.evolink.ai/"}, []string{direct, api}},
		{Options{FallbackURL: "none"}, []string{direct}},
		{Options{BaseURL: "http://localhost:11434/v1"}, []string{"http://localhost:11434/v1/chat/completions"}},
		{Options{BaseURL: "http://a.test", FallbackURL: "http://b.test/v1"}, []string{"http://a.test/v1/chat/completions", "http://b.test/v1/chat/completions"}},
	}
	for _, tc := range tests {
		c := New(tc.opts)
		if c.setupErr != nil || fmt.Sprint(c.endpoints) != fmt.Sprint(tc.want) {
			t.Errorf("%+v: endpoints %q (%v), want %q", tc.opts, c.endpoints, c.setupErr, tc.want)
		}
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{http.Header{"Retry-After": {"0.5"}}, 500 * time.Millisecond},
		{http.Header{"Retry-After": {"-1"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {now.Add(90 * time.Second).Format(http.TimeFormat)}}, 90 * time.Second},
		{http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{http.Header{"Retry-After-Ms": {"250"}, "Retry-After": {"9"}}, 250 * time.Millisecond},
	}
	for _, tc := range tests {
		if got := retryAfter(tc.h, now); got != tc.want {
			t.Errorf("%v: got %v, want %v", tc.h, got, tc.want)
		}
	}
}

// TestBackoff: exponential, jittered between half and all of the step,
// capped; a Retry-After is a floor with at most 10% (≤ 1s) added.
func TestBackoff(t *testing.T) {
	c := New(Options{RetryBaseDelay: 100 * time.Millisecond, MaxRetryDelay: time.Second})
	for i := 0; i < 200; i++ {
		for attempt, step := range map[int]time.Duration{1: 100 * time.Millisecond, 2: 200 * time.Millisecond, 3: 400 * time.Millisecond, 5: time.Second, 40: time.Second} {
			if d := c.backoff(attempt, 0); d < step/2 || d > step {
				t.Fatalf("attempt %d: %v outside [%v, %v]", attempt, d, step/2, step)
			}
		}
		if d := c.backoff(1, 3*time.Second); d < 3*time.Second || d > 3300*time.Millisecond {
			t.Fatalf("retry-after 3s: %v", d)
		}
		if d := c.backoff(1, 60*time.Second); d < 60*time.Second || d > 61*time.Second {
			t.Fatalf("retry-after 60s: %v", d)
		}
	}
}
