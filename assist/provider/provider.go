// Package provider is the model-call plumbing that actions (assist) and
// inline completion (assist/complete) share: the model client made from
// the configuration, the conversion of the provider's usage and of the
// configured prices into the cache package's terms, kimi-lsp's own usage
// estimate for replies that carry none, and the one error a recovered
// panic becomes.
//
//	client := provider.NewClient(cfg, provider.ClientOptions{HTTPClient: hc, Logger: log})
//	sess, _ := cache.NewSession(cache.Config{Prices: provider.Prices(cfg), …})
//	…
//	usage := provider.Usage(resp.Usage) // or provider.EstimateUsage(…) when nil
//
// Its invariants: a client is made from the configuration in one place
// (the URLs, the fallback, the key), so actions and completion never
// disagree on where a request goes; a client whose Identity is unchanged
// may be kept; and every panic recovered on a model call's way is logged
// with its stack and returned as an error wrapping jobs.ErrInternal, the value
// the job engine's panics match too.
package provider

import (
	"cmp"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

// Recovered turns a value recovered from a panic in what (a task, a
// completion stream) into an error wrapping jobs.ErrInternal, after logging it
// with the stack. Call it from the deferred function that recovered r.
func Recovered(log *slog.Logger, what string, r any, attrs ...any) error {
	log.Error("panic in "+what, append(attrs, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))...)
	return fmt.Errorf("%w: %v", jobs.ErrInternal, r)
}

// ClientOptions are what a caller adds to the configuration to make a
// client.
type ClientOptions struct {
	// HTTPClient sends the requests (nil: model's default).
	HTTPClient *http.Client
	// Logger receives the client's records.
	Logger *slog.Logger
	// WaitTimeout bounds the wait for the provider to start answering,
	// retries included (0: model.DefaultWaitTimeout).
	WaitTimeout time.Duration
	// MaxAttempts bounds the attempts of one request (0: model's
	// default; 1 for completion, where a suggestion is no use after a
	// retry's wait).
	MaxAttempts int
}

// Key returns cfg's API key, and config.ErrNoAPIKey (or the key's other
// error) when none is set for the default endpoint; another endpoint (a
// local server) may need none. An invalid baseURL is an error first: it
// fails closed, nothing is sent to it, the default endpoint or the
// fallback.
func Key(cfg config.Config) (string, error) {
	if err := cfg.BaseURLError(); err != nil {
		return "", err
	}
	key, err := cfg.Key()
	if err != nil && cfg.BaseURL == model.DefaultBaseURL {
		return "", err
	}
	return key, nil
}

// NewClient returns the model client for cfg's endpoint, fallback and API
// key. A missing key is not an error here: callers check Key first.
func NewClient(cfg config.Config, o ClientOptions) *model.Client {
	key, _ := cfg.Key()
	baseFrom, keyFrom := EndpointSources(cfg)
	return model.New(model.Options{
		BaseURLSource: baseFrom,
		APIKeySource:  keyFrom,
		BaseURL:       cfg.BaseURL,
		FallbackURL:   cmp.Or(cfg.FallbackURL(), "none"),
		APIKey:        key,
		HTTPClient:    o.HTTPClient,
		Logger:        o.Logger,
		WaitTimeout:   o.WaitTimeout,
		MaxAttempts:   o.MaxAttempts,
	})
}

// EndpointSources returns where cfg's baseURL and API key came from
// ("KIMI_BASE_URL", "user file PATH", "default"…), for the model client's
// errors (model.Options.BaseURLSource, APIKeySource): an error names what
// to check.
func EndpointSources(cfg config.Config) (baseURL, apiKey string) {
	for _, s := range cfg.Sources() {
		switch s.Key {
		case "baseURL":
			baseURL = s.Source.String()
		case "apiKey":
			apiKey = s.Source.String()
		}
	}
	return baseURL, apiKey
}

// Identity names what NewClient takes from cfg: two configurations with
// the same identity make the same client.
func Identity(cfg config.Config) string {
	key, _ := cfg.Key()
	return cfg.BaseURL + "\x00" + cfg.FallbackURL() + "\x00" + key
}

// Usage converts the provider's usage to the cache package's.
func Usage(u *model.Usage) cache.Usage {
	return cache.Usage{PromptTokens: u.PromptTokens, CachedTokens: u.CachedTokens, CacheWriteTokens: u.CacheWriteTokens,
		CompletionTokens: u.CompletionTokens, ReasoningTokens: u.ReasoningTokens}
}

// Prices converts the configuration's price table for cache sessions.
func Prices(cfg config.Config) cache.Prices {
	out := cache.Prices{}
	for name, p := range cfg.Prices() {
		out[name] = cache.Price{Input: p.Input, CachedInput: p.CachedRead, CacheWrite5m: p.Write5m, CacheWrite1h: p.Write1h, Output: p.Output}
	}
	return out
}

// Messages converts a built prompt's messages to the model's.
func Messages(ms []cache.Message) []model.Message {
	out := make([]model.Message, len(ms))
	for i, m := range ms {
		out[i] = model.Message{Role: m.Role, Content: m.Content}
	}
	return out
}

// EstimateUsage returns the token counts of a call whose reply carried no
// usage, from kimi-lsp's own count (the prompt session's estimator, bytes
// per token corrected by earlier replies): promptTokens estimated for the
// request, cachedTokens of them expected from the provider's cache, and the
// reply's text. The provider writes the rest of the prompt to its cache
// (the seed: prompt_cache_options "省略时默认自动写入 5m 缓存", written by
// default). The result is marked Estimated.
func EstimateUsage(count func(string) int, promptTokens, cachedTokens int, reply model.Message) cache.Usage {
	cachedTokens = min(cachedTokens, promptTokens)
	reasoning := count(reply.ReasoningContent)
	out := reasoning + count(reply.Content)
	for _, c := range reply.ToolCalls {
		out += count(c.Function.Name) + count(c.Function.Arguments)
	}
	return cache.Usage{
		PromptTokens:     promptTokens,
		CachedTokens:     cachedTokens,
		CacheWriteTokens: promptTokens - cachedTokens,
		CompletionTokens: out,
		ReasoningTokens:  reasoning,
		Estimated:        true,
	}
}
