package provider

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
)

func withEnv(t *testing.T, env map[string]string) config.Config {
	t.Helper()
	cfg, errs := config.Default().WithEnv(func(k string) string { return env[k] })
	if config.HasErrors(errs) {
		t.Fatal(errs)
	}
	return cfg
}

// TestIdentity: the URLs and the key make a client; anything else does not.
func TestIdentity(t *testing.T) {
	a := withEnv(t, map[string]string{"KIMI_API_KEY": "sk-a-0123456789", "KIMI_BASE_URL": "http://127.0.0.1:1/v1"})
	b := withEnv(t, map[string]string{"KIMI_API_KEY": "sk-b-0123456789", "KIMI_BASE_URL": "http://127.0.0.1:1/v1"})
	c := withEnv(t, map[string]string{"KIMI_API_KEY": "sk-a-0123456789", "KIMI_BASE_URL": "http://127.0.0.1:2/v1"})
	if Identity(a) == Identity(b) || Identity(a) == Identity(c) {
		t.Errorf("another key or URL has the same identity")
	}
	a2 := a
	a2.Completion.MaxLines++
	if Identity(a) != Identity(a2) {
		t.Errorf("a completion setting changed the client's identity")
	}
}

// TestKey: a missing key is an error for the default endpoint only.
func TestKey(t *testing.T) {
	if _, err := Key(withEnv(t, nil)); !errors.Is(err, config.ErrNoAPIKey) {
		t.Errorf("no key, default endpoint: %v, want ErrNoAPIKey", err)
	}
	if _, err := Key(withEnv(t, map[string]string{"KIMI_BASE_URL": "http://127.0.0.1:1/v1"})); err != nil {
		t.Errorf("no key, local endpoint: %v, want none", err)
	}
}

// TestRecovered: a recovered panic is one internal error, the job
// engine's, logged with its stack.
func TestRecovered(t *testing.T) {
	var buf bytes.Buffer
	err := Recovered(slog.New(slog.NewTextHandler(&buf, nil)), "a test", "broke", "action", "fix")
	if !errors.Is(err, jobs.ErrInternal) || !strings.Contains(err.Error(), "broke") {
		t.Errorf("err %v, want jobs.ErrInternal with the panic value", err)
	}
	if log := buf.String(); !strings.Contains(log, "panic in a test") || !strings.Contains(log, "action=fix") || !strings.Contains(log, "stack=") {
		t.Errorf("log %q", log)
	}
}

// TestEstimateUsage: the estimate counts the reply's text, reasoning and
// tool calls, and the uncached prompt as written to the cache.
func TestEstimateUsage(t *testing.T) {
	count := func(s string) int { return len(s) }
	u := EstimateUsage(count, 100, 150, model.Message{Content: "abcd", ReasoningContent: "xy",
		ToolCalls: []model.ToolCall{{Function: model.FunctionCall{Name: "f", Arguments: "{}"}}}})
	if u.PromptTokens != 100 || u.CachedTokens != 100 || u.CacheWriteTokens != 0 || u.CompletionTokens != 9 || u.ReasoningTokens != 2 || !u.Estimated {
		t.Errorf("usage %+v", u)
	}
}
