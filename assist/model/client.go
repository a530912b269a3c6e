package model

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/redact"
)

// Default endpoints of the Kimi K3.1 provider: the project's one table of
// them (assist/config refers to these). The seed: "默认 BaseURL 为
// https://direct.evolink.ai，对文本模型支持更好，支持长连接；
// https://api.evolink.ai 是多模态主力地址，对文本模型作为备用地址使用" — the
// default for text models, and the backup address.
const (
	DefaultBaseURL     = "https://direct.evolink.ai"
	DefaultFallbackURL = "https://api.evolink.ai"
)

// IsDefaultURL reports whether base is DefaultBaseURL, written with or
// without a trailing slash or /v1.
func IsDefaultURL(base string) bool {
	b := strings.TrimRight(strings.TrimSpace(base), "/")
	b = strings.TrimRight(strings.TrimSuffix(b, "/v1"), "/")
	return strings.EqualFold(b, DefaultBaseURL)
}

// FallbackFor returns the endpoint to try after 5xx and connection errors
// on base: DefaultFallbackURL for the default endpoint, and "" (no
// fallback) for any endpoint the user chose.
func FallbackFor(base string) string {
	if base == "" || IsDefaultURL(base) {
		return DefaultFallbackURL
	}
	return ""
}

// Defaults of Options.
const (
	DefaultConnectTimeout   = 10 * time.Second
	DefaultFirstByteTimeout = 60 * time.Second
	DefaultWaitTimeout      = 90 * time.Second
	DefaultChunkTimeout     = 90 * time.Second
	DefaultMaxAttempts      = 3
	DefaultMaxRetryWait     = 60 * time.Second
	DefaultRetryBaseDelay   = 500 * time.Millisecond
	DefaultMaxRetryDelay    = 8 * time.Second
)

// Options configure a Client. Zero values take the defaults.
type Options struct {
	// BaseURL is the provider, with or without /v1 (DefaultBaseURL if empty).
	// A URL ending in /chat/completions is used as it is.
	BaseURL string
	// FallbackURL is tried after 5xx and connection failures on BaseURL.
	// Empty means DefaultFallbackURL when BaseURL is the default, and no
	// fallback otherwise; "none" disables it.
	FallbackURL string
	// APIKey is sent as a bearer token; empty sends no Authorization header
	// (local servers need none).
	APIKey string
	// HTTPClient sends the requests. Nil means a client of the package's
	// own: proxies from HTTPS_PROXY/HTTP_PROXY/NO_PROXY, ConnectTimeout,
	// keep-alive connection reuse and no total timeout. A caller's client
	// should have no Timeout either: it would cut long thinking phases.
	HTTPClient *http.Client
	// Logger receives debug and warning records (never the key). Nil
	// discards them.
	Logger *slog.Logger
	// ConnectTimeout bounds TCP connect and TLS handshake (own client only).
	ConnectTimeout time.Duration
	// FirstByteTimeout bounds the wait from sending a streaming request to
	// the first byte of its reply body, per attempt. Negative disables it.
	// Non-streaming requests (Complete) have no first-byte limit: their
	// first byte comes only after the whole thinking phase.
	FirstByteTimeout time.Duration
	// WaitTimeout bounds the whole wait for a streaming reply to start:
	// every attempt, the waits between them and the fallback URL, until
	// the first byte of a reply body (or an error answer). It is what a
	// person waits before being told the provider does not answer, so it
	// also shortens the last attempt's first-byte limit. Negative disables
	// it; zero means DefaultWaitTimeout. Once a reply streams it no longer
	// applies: a long answer is never cut.
	WaitTimeout time.Duration
	// ChunkTimeout bounds the silence between two reads of a streaming
	// reply (time the caller spends between Next calls does not count).
	// Negative disables it.
	ChunkTimeout time.Duration
	// MaxAttempts is how many times a request is sent to one URL before
	// giving up (429) or moving to the fallback (5xx, connection errors).
	MaxAttempts int
	// MaxRetryWait bounds the total time spent waiting between attempts of
	// one call; a Retry-After beyond what is left ends the retries.
	MaxRetryWait time.Duration
	// RetryBaseDelay is the first backoff; it doubles per attempt, jittered.
	RetryBaseDelay time.Duration
	// MaxRetryDelay caps one backoff (not a Retry-After the provider asks).
	MaxRetryDelay time.Duration
	// UserAgent is sent as User-Agent ("kimi-lsp" if empty).
	UserAgent string
	// BaseURLSource and APIKeySource say where BaseURL and APIKey came
	// from ("KIMI_BASE_URL", "user file PATH", "default"…), so that an
	// error can say what to check. Empty: not said.
	BaseURLSource, APIKeySource string
}

// Client sends chat-completions requests. It is safe for concurrent use and
// reuses connections.
type Client struct {
	opts      Options
	endpoints []string // chat-completions URLs: base, then fallback
	shown     []string // the same, redacted, for logs and errors
	setupErr  error
	http      *http.Client
	log       *slog.Logger
}

// New returns a client. A malformed BaseURL or FallbackURL is reported by
// every call.
func New(opts Options) *Client {
	if opts.ConnectTimeout == 0 {
		opts.ConnectTimeout = DefaultConnectTimeout
	}
	if opts.FirstByteTimeout == 0 {
		opts.FirstByteTimeout = DefaultFirstByteTimeout
	}
	if opts.WaitTimeout == 0 {
		opts.WaitTimeout = DefaultWaitTimeout
	}
	if opts.ChunkTimeout == 0 {
		opts.ChunkTimeout = DefaultChunkTimeout
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = DefaultMaxAttempts
	}
	if opts.MaxRetryWait == 0 {
		opts.MaxRetryWait = DefaultMaxRetryWait
	}
	if opts.RetryBaseDelay <= 0 {
		opts.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if opts.MaxRetryDelay <= 0 {
		opts.MaxRetryDelay = DefaultMaxRetryDelay
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "kimi-lsp"
	}
	c := &Client{opts: opts, http: opts.HTTPClient, log: opts.Logger}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.http == nil {
		c.http = newHTTPClient(opts.ConnectTimeout)
	}
	base := strings.TrimSpace(opts.BaseURL)
	if base == "" {
		base = DefaultBaseURL
	}
	fallback := strings.TrimSpace(opts.FallbackURL)
	if fallback == "" {
		fallback = FallbackFor(base)
	}
	for _, b := range []string{base, fallback} {
		if b == "" || b == "none" {
			continue
		}
		ep, shown, err := Endpoint(b)
		if err != nil {
			c.setupErr = err
			break
		}
		c.endpoints = append(c.endpoints, ep)
		c.shown = append(c.shown, shown)
	}
	if c.setupErr == nil && strings.ContainsFunc(opts.APIKey, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		c.setupErr = errors.New("the API key (KIMI_API_KEY) contains control characters")
	}
	return c
}

// newHTTPClient returns the package's own HTTP client.
func newHTTPClient(connect time.Duration) *http.Client {
	d := &net.Dialer{Timeout: connect, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          32,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   connect,
		ExpectContinueTimeout: time.Second,
	}}
}

// Endpoint returns the chat-completions URL for a base URL given with or
// without /v1 (a bare host gets /v1; a path is kept and /chat/completions
// appended, unless it already ends with it), and the same URL with any
// password redacted, for display.
func Endpoint(base string) (endpoint, shown string, err error) {
	u, err := url.Parse(strings.TrimSpace(base))
	if err != nil {
		return "", "", fmt.Errorf("base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", "", fmt.Errorf("base URL %q: want an http or https URL with a host", u.Redacted())
	}
	p := strings.TrimRight(u.Path, "/")
	switch {
	case strings.HasSuffix(p, "/chat/completions"):
	case p == "":
		p = "/v1/chat/completions"
	default:
		p += "/chat/completions"
	}
	u.Path, u.RawPath = p, ""
	u.Fragment = ""
	return u.String(), u.Redacted(), nil
}

// Stream sends req with "stream": true and returns the reply as a Stream of
// events. Retries (429, 5xx, connection errors, then the fallback URL) happen
// here, before the provider answers 200; once it has, the Stream is never
// retried (the caller decides what a cut-off reply is worth). The caller must
// Close the stream. req is not modified.
func (c *Client) Stream(ctx context.Context, req *Request) (*Stream, error) {
	r := *req
	r.Stream = true
	return c.send(ctx, &r)
}

// Complete sends req without streaming and returns the whole reply. On an
// error after the reply started (a torn body, ErrNoAnswer) the Response holds
// what arrived, with usage when known; otherwise it is nil. req is not
// modified.
func (c *Client) Complete(ctx context.Context, req *Request) (*Response, error) {
	r := *req
	r.Stream = false
	r.StreamOptions = nil
	s, err := c.send(ctx, &r)
	if err != nil {
		return nil, err
	}
	return Collect(s)
}

// Trace receives what a call is doing while its caller waits for the reply
// to start, so that a person can be told (see WithTrace). Its functions are
// called from the goroutine that called Stream or Complete.
type Trace struct {
	// Retry is called when an attempt failed and the call goes on: after
	// Wait, the same URL is tried again, or the fallback URL when
	// Fallback is set.
	Retry func(RetryInfo)
}

// RetryInfo describes a failed attempt that the call retries.
type RetryInfo struct {
	// Attempt is the attempt that failed (from 1) of MaxAttempts for its URL.
	Attempt, MaxAttempts int
	// Fallback is set when the next attempt goes to the fallback URL.
	Fallback bool
	// Wait is the pause before the next attempt.
	Wait time.Duration
	// Err is why the attempt failed (never holds the API key).
	Err error
}

type traceKey struct{}

// WithTrace returns a context whose calls report to t.
func WithTrace(ctx context.Context, t *Trace) context.Context {
	return context.WithValue(ctx, traceKey{}, t)
}

func traceOf(ctx context.Context) *Trace {
	t, _ := ctx.Value(traceKey{}).(*Trace)
	if t == nil {
		return &Trace{}
	}
	return t
}

func (t *Trace) retry(i RetryInfo) {
	if t.Retry != nil {
		t.Retry(i)
	}
}

// send marshals req once and sends it with retries and fallback. A stream
// that has not started within WaitTimeout ends the call.
func (c *Client) send(ctx context.Context, req *Request) (*Stream, error) {
	if c.setupErr != nil {
		return nil, c.setupErr
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	body, err := req.Marshal()
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	trace := traceOf(ctx)
	var deadline time.Time // for the reply to start; zero: none
	if req.Stream && c.opts.WaitTimeout > 0 {
		deadline = time.Now().Add(c.opts.WaitTimeout)
	}
	var waited time.Duration
	var last error
	tries := 0
	for ui, ep := range c.endpoints {
		if ui > 0 {
			c.log.Warn("model: trying the fallback URL", "url", c.shown[ui], "after", last)
		}
		for attempt := 1; attempt <= c.opts.MaxAttempts; attempt++ {
			first := c.opts.FirstByteTimeout
			if !deadline.IsZero() {
				left := time.Until(deadline)
				if left <= 0 {
					return nil, c.waitedTooLong(last, tries)
				}
				if first <= 0 || first > left {
					first = left
				}
			}
			c.log.Debug("model: request", "url", c.shown[ui], "model", req.Model, "stream", req.Stream, "attempt", attempt, "bytes", len(body))
			tries++
			s, err := c.try(ctx, ep, c.shown[ui], body, req.Stream, first)
			if err == nil {
				return s, nil
			}
			var apiErr *APIError
			isAPI := errors.As(err, &apiErr)
			if isAPI {
				apiErr.Attempts = attempt
			}
			var ce *ConnError
			if ui > 0 && errors.As(err, &ce) {
				ce.After = c.shown[0]
			}
			err = redact.Error(err, c.opts.APIKey)
			if ctx.Err() != nil {
				return nil, err
			}
			last = err
			switch {
			case isAPI && apiErr.StatusCode == http.StatusTooManyRequests:
				wait := c.backoff(attempt, apiErr.RetryAfter)
				if attempt == c.opts.MaxAttempts || waited+wait > c.opts.MaxRetryWait || !deadline.IsZero() && wait >= time.Until(deadline) {
					return nil, err // rate limits are per account: no fallback
				}
				c.log.Warn("model: rate limited, waiting", "url", c.shown[ui], "attempt", attempt, "wait", wait)
				trace.retry(RetryInfo{Attempt: attempt, MaxAttempts: c.opts.MaxAttempts, Wait: wait, Err: err})
				if err := sleep(ctx, wait); err != nil {
					return nil, err
				}
				waited += wait
			case errors.Is(err, ErrNotAPI):
				return nil, err // the same URL would answer the same page
			case isAPI && apiErr.StatusCode < 500 && apiErr.StatusCode != http.StatusRequestTimeout:
				if apiErr.StatusCode == http.StatusUnauthorized && c.opts.APIKey == "" {
					return nil, &noKeyError{apiErr}
				}
				return nil, err // 400, 401…: the same request would fail again
			default: // 5xx, 408, connection errors, timeouts
				var ra time.Duration
				if isAPI {
					ra = apiErr.RetryAfter
				}
				wait := c.backoff(attempt, ra)
				var ce *ConnError
				settled := errors.As(err, &ce) && (ce.Kind == ConnDNS || ce.Kind == ConnTLS) // no retry changes these
				if attempt == c.opts.MaxAttempts || waited+wait > c.opts.MaxRetryWait || settled {
					attempt = c.opts.MaxAttempts // go on with the fallback URL
					if ui < len(c.endpoints)-1 {
						trace.retry(RetryInfo{Attempt: attempt, MaxAttempts: c.opts.MaxAttempts, Fallback: true, Err: err})
					}
					break
				}
				if !deadline.IsZero() && wait >= time.Until(deadline) {
					return nil, c.waitedTooLong(last, tries)
				}
				c.log.Warn("model: request failed, retrying", "url", c.shown[ui], "attempt", attempt, "wait", wait, "err", err)
				trace.retry(RetryInfo{Attempt: attempt, MaxAttempts: c.opts.MaxAttempts, Wait: wait, Err: err})
				if err := sleep(ctx, wait); err != nil {
					return nil, err
				}
				waited += wait
			}
		}
	}
	if !deadline.IsZero() && errors.Is(last, ErrTimeout) && time.Until(deadline) <= 0 {
		return nil, c.waitedTooLong(last, tries)
	}
	return nil, last
}

// waitedTooLong is the error of a call whose reply did not start within
// WaitTimeout: one sentence for the user, wrapping ErrTimeout.
func (c *Client) waitedTooLong(last error, tries int) error {
	what := "the provider"
	if len(c.shown) > 0 {
		what = c.shown[0]
	}
	attempts := ""
	if tries > 1 {
		attempts = fmt.Sprintf(" over %d attempts", tries)
	}
	err := fmt.Errorf("%w: %s did not start answering within %v%s; check the network, HTTPS_PROXY or baseURL%s (waitTimeout sets this limit)", ErrTimeout, what, c.opts.WaitTimeout, attempts, where(c.opts.BaseURLSource))
	if last != nil && !errors.Is(last, ErrTimeout) {
		c.log.Debug("model: last failure before giving up", "err", last)
	}
	return err
}

// backoff returns the wait before attempt+1: at least retryAfter, else an
// exponential delay with jitter (between half and all of it).
func (c *Client) backoff(attempt int, retryAfter time.Duration) time.Duration {
	d := c.opts.RetryBaseDelay << (attempt - 1)
	if d > c.opts.MaxRetryDelay || d <= 0 {
		d = c.opts.MaxRetryDelay
	}
	d = d/2 + rand.N(d/2+1)
	if retryAfter > 0 {
		// Honour the provider, plus a little jitter so that clients told
		// the same time do not come back at once.
		return retryAfter + rand.N(min(retryAfter/10, time.Second)+1)
	}
	return d
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// try sends body once to ep. On success the returned Stream owns the
// response and the request context.
func (c *Client) try(ctx context.Context, ep, shown string, body []byte, stream bool, first time.Duration) (*Stream, error) {
	src := c.opts.BaseURLSource
	if ep != c.endpoints[0] {
		src = "" // the fallback URL is the program's own
	}
	rctx, cancel := context.WithCancelCause(ctx)
	if !stream {
		first = -1
	}
	wd := newWatchdog(cancel, first, c.opts.ChunkTimeout, realAfterFunc)
	fail := func(err error) (*Stream, error) {
		wd.stop()
		cause := context.Cause(rctx)
		cancel(context.Canceled)
		if errors.Is(cause, ErrTimeout) {
			return nil, cause
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && ctx.Err() == nil {
			return nil, fmt.Errorf("%w: %s did not accept a connection within %v (%s): check the network, HTTPS_PROXY and baseURL%s", ErrTimeout, shown, c.opts.ConnectTimeout, innermost(err), where(src))
		}
		if ctx.Err() != nil {
			return nil, err
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, classifyConn(err, shown, src)
		}
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(rctx, http.MethodPost, ep, bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	if stream {
		hreq.Header.Set("Accept", "text/event-stream")
	} else {
		hreq.Header.Set("Accept", "application/json")
	}
	hreq.Header.Set("User-Agent", c.opts.UserAgent)
	if c.opts.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	resp, err := c.http.Do(hreq)
	if err != nil {
		return fail(err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, rerr := io.ReadAll(io.LimitReader(&watchedBody{resp.Body, wd}, 64<<10))
		resp.Body.Close()
		if rerr != nil && len(b) == 0 {
			return fail(fmt.Errorf("HTTP %d from %s: reading the error body: %w", resp.StatusCode, shown, rerr))
		}
		wd.stop()
		cancel(context.Canceled)
		e := errorFromBody(resp.StatusCode, resp.Header.Get("Content-Type"), b)
		e.URL, e.Where, e.KeyFrom = shown, src, c.opts.APIKeySource
		e.Message = redact.String(e.Message, c.opts.APIKey)
		e.RetryAfter = retryAfter(resp.Header, time.Now())
		return nil, e
	}
	isJSON := !stream
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case mt == "text/event-stream":
		isJSON = false
	case mt == "application/json" || strings.HasSuffix(mt, "+json"):
		isJSON = true
	case isHTML(mt):
		// A website, a captive portal, a proxy's login page: not the API.
		b, _ := io.ReadAll(io.LimitReader(&watchedBody{resp.Body, wd}, 16<<10))
		resp.Body.Close()
		wd.stop()
		cancel(context.Canceled)
		return nil, &NotAPIError{URL: shown, Where: src, ContentType: mt, Title: pageTitle(b), Status: resp.StatusCode}
	}
	s := newStream(&watchedBody{resp.Body, wd}, isJSON)
	if mt != "text/event-stream" && !isJSON {
		// Read as an event stream all the same (some servers send none or
		// a wrong type); a body with no event in it is not the API's.
		s.notAPI = &NotAPIError{URL: shown, Where: src, ContentType: mt, Status: resp.StatusCode}
	}
	var once sync.Once
	s.closeFn = func() {
		once.Do(func() {
			wd.stop()
			cancel(context.Canceled)
		})
	}
	key := c.opts.APIKey
	s.wrapErr = func(err error) error {
		if cause := context.Cause(rctx); errors.Is(cause, ErrTimeout) {
			err = cause
		} else if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return redact.Error(err, key)
	}
	return s, nil
}

// errorFromBody builds an APIError from an error reply body: the
// provider's {"error": {...}} object, a web page's title, or the start of
// another body.
func errorFromBody(status int, contentType string, b []byte) *APIError {
	var w wireErrorBody
	if json.Unmarshal(b, &w) == nil && w.Error != nil {
		return apiErrorFromWire(status, w.Error)
	}
	mt, _, _ := mime.ParseMediaType(contentType)
	if isHTML(mt) || looksHTML(b) {
		return &APIError{StatusCode: status, Message: pageTitle(b), Page: true}
	}
	msg := strings.TrimSpace(string(b))
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	return &APIError{StatusCode: status, Message: msg}
}

// retryAfter reads Retry-After (seconds or an HTTP date) or OpenAI's
// retry-after-ms. Zero when absent or unreadable.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// timer is the part of *time.Timer the watchdog uses (tests use a fake
// clock).
type timer interface {
	Stop() bool
	Reset(time.Duration) bool
}

// afterFunc starts a timer that calls f after d, like time.AfterFunc.
type afterFunc func(d time.Duration, f func()) timer

func realAfterFunc(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }

// watchdog cancels a request when the provider is silent too long: first
// until the first body byte, then between reads. The time a caller spends
// between reads does not count.
type watchdog struct {
	after    afterFunc
	mu       sync.Mutex
	timer    timer
	cancel   context.CancelCauseFunc
	idle     time.Duration
	gotFirst bool
	stopped  bool
}

func newWatchdog(cancel context.CancelCauseFunc, first, idle time.Duration, after afterFunc) *watchdog {
	w := &watchdog{cancel: cancel, idle: idle, after: after}
	if first > 0 {
		w.timer = after(first, func() {
			cancel(fmt.Errorf("%w: no reply within %v (first-byte timeout)", ErrTimeout, first))
		})
	}
	return w
}

// arm starts the silence timer before a read (after the first byte).
func (w *watchdog) arm() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.gotFirst || w.stopped || w.idle <= 0 {
		return
	}
	if w.timer == nil {
		idle, cancel := w.idle, w.cancel
		w.timer = w.after(idle, func() {
			cancel(fmt.Errorf("%w: the stream was silent for %v (chunk timeout)", ErrTimeout, idle))
		})
		return
	}
	w.timer.Reset(w.idle)
}

// disarm stops the timer after a read that returned data.
func (w *watchdog) disarm(n int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n == 0 && !w.gotFirst {
		return // still waiting for the first byte: keep its timer running
	}
	if w.timer != nil {
		w.timer.Stop()
	}
	if !w.gotFirst {
		w.gotFirst = true
		w.timer = nil // the first-byte timer is spent; arm makes the idle one
	}
}

func (w *watchdog) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stopped = true
	if w.timer != nil {
		w.timer.Stop()
	}
}

// watchedBody runs the watchdog around each read of a reply body.
type watchedBody struct {
	rc io.ReadCloser
	wd *watchdog
}

func (b *watchedBody) Read(p []byte) (int, error) {
	b.wd.arm()
	n, err := b.rc.Read(p)
	b.wd.disarm(n)
	return n, err
}

func (b *watchedBody) Close() error { return b.rc.Close() }
