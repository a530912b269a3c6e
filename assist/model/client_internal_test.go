package model

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
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

// fakeClock drives the watchdog's timers by hand.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Duration
	timers []*fakeTimer
}

type fakeTimer struct {
	c      *fakeClock
	at     time.Duration
	f      func()
	active bool
}

func (c *fakeClock) after(d time.Duration, f func()) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now + d, f: f, active: true}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.at, t.active = t.c.now+d, true
	return was
}

// advance moves the clock and runs the timers that expire.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now += d
	var fire []func()
	for _, t := range c.timers {
		if t.active && t.at <= c.now {
			t.active = false
			fire = append(fire, t.f)
		}
	}
	c.mu.Unlock()
	for _, f := range fire {
		f()
	}
}

// slowBody is a reply body whose every Read takes the next of delays on
// the fake clock, then returns one byte.
type slowBody struct {
	c      *fakeClock
	delays []time.Duration
}

func (b *slowBody) Read(p []byte) (int, error) {
	if len(b.delays) == 0 {
		return 0, io.EOF
	}
	b.c.advance(b.delays[0])
	b.delays = b.delays[1:]
	p[0] = 'x'
	return 1, nil
}

func (b *slowBody) Close() error { return nil }

// TestWatchdogFakeClock checks the watchdog's rules on a fake clock, with
// no dependence on the machine's speed: the first byte within its limit;
// then silences shorter than the chunk limit, for ten times either limit
// in all (no total timeout); a caller that waits between reads is not
// silence; one silence past the chunk limit, or a late first byte, cancels
// the request with ErrTimeout.
func TestWatchdogFakeClock(t *testing.T) {
	const first, idle = 10 * time.Second, 5 * time.Second
	run := func(delays []time.Duration, between time.Duration) (reads int, cause error) {
		c := &fakeClock{}
		ctx, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		wd := newWatchdog(cancel, first, idle, c.after)
		defer wd.stop()
		b := &watchedBody{rc: &slowBody{c: c, delays: delays}, wd: wd}
		buf := make([]byte, 1)
		for ctx.Err() == nil {
			if _, err := b.Read(buf); err != nil {
				break
			}
			reads++
			c.advance(between) // the caller's own time between reads
		}
		return reads, context.Cause(ctx)
	}
	steady := []time.Duration{9 * time.Second}
	for range 25 {
		steady = append(steady, 4*time.Second) // 109 s in all
	}
	if n, cause := run(steady, 0); cause != nil || n != len(steady) {
		t.Errorf("steady stream: %d of %d reads, cause %v", n, len(steady), cause)
	}
	if n, cause := run([]time.Duration{time.Second, time.Second, time.Second}, time.Minute); cause != nil || n != 3 {
		t.Errorf("slow reader: %d reads, cause %v", n, cause)
	}
	_, cause := run([]time.Duration{time.Second, 4 * time.Second, 6 * time.Second, time.Second}, 0)
	if !errors.Is(cause, ErrTimeout) || !strings.Contains(cause.Error(), "chunk timeout") {
		t.Errorf("silence of 6s: cause %v", cause)
	}
	_, cause = run([]time.Duration{11 * time.Second}, 0)
	if !errors.Is(cause, ErrTimeout) || !strings.Contains(cause.Error(), "first-byte") {
		t.Errorf("first byte after 11s: cause %v", cause)
	}
}
