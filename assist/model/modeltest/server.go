package modeltest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
)

// DefaultKey is the API key a Server accepts when Config.Key is empty.
const DefaultKey = "sk-modeltest-0123456789"

// ContextWindow is the models' context window in tokens (seed: "上下文窗口为
// 1,048,576 tokens"); prompt tokens, counted with the cachetest tokenizer,
// plus max_completion_tokens must fit in it.
const ContextWindow = 1048576

// Config configures a Server. The zero value is usable.
type Config struct {
	// Key is the bearer key accepted (DefaultKey if empty).
	Key string
	// Addr is the listen address ("127.0.0.1:0" if empty).
	Addr string
	// Script scripts the replies (nil: every request gets "OK").
	Script *Script
	// Models are the accepted model names (DefaultModels if nil).
	Models []string
	// AllowUnknownFields accepts top-level request fields the seed's schema
	// does not define (stream_options, temperature…). By default they are
	// rejected, which checks that the client leaves out what it did not set.
	AllowUnknownFields bool
	// UsageWhenAsked makes streams carry usage only when the request asks
	// for it with OpenAI's stream_options {"include_usage": true} (which
	// is then accepted). The seed does not say that a stream carries usage
	// unasked, and OpenAI's streams do not; by default the stand-in sends
	// it anyway, as the seed's provider is assumed to. A rule's usage
	// "none" drops it from one reply in either mode.
	UsageWhenAsked bool
	// Cache configures the prefix-cache simulation.
	Cache CacheConfig
	// Now is the clock of the cache simulation and of timestamps (time.Now
	// if nil); tests move it to expire cache entries.
	Now func() time.Time
	// Logger receives a record per request (nil: none).
	Logger *slog.Logger
	// RequestLog, if set, receives each request body as one JSON line.
	RequestLog io.Writer
}

// Server is a running stand-in provider.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT (without /v1).
	URL string
	// Key is the accepted bearer key.
	Key string

	cfg     Config
	ln      net.Listener
	hs      *http.Server
	closing chan struct{}
	wg      sync.WaitGroup
	cache   *cacheSim

	logMu sync.Mutex // serialises writes to cfg.RequestLog

	mu      sync.Mutex
	script  *Script
	uses    []int  // uses of script.Rules, by index
	pushed  []Rule // one-shot rules, tried first
	seq     int
	conns   int
	reqs    []Request     // finished requests, in finishing order
	changed chan struct{} // closed and replaced when reqs grows
	closed  bool
	open    int // requests being answered
	maxOpen int // the most open at once since the start or Reset
}

// Request is the record of one request the Server handled.
type Request struct {
	// Seq numbers requests from 1 in arrival order.
	Seq int
	// Time is when the request arrived (Config.Now).
	Time time.Time
	// Path and Header are as received.
	Path   string
	Header http.Header
	// RemoteAddr identifies the client connection (keep-alive reuse keeps it).
	RemoteAddr string
	// Body is the raw request body.
	Body []byte
	// Parsed is the validated body; nil when it was rejected.
	Parsed *ChatRequest
	// Prompt is the rendered prompt (see Render).
	Prompt []byte
	// Status is the HTTP status answered (0 for hangup).
	Status int
	// Error is the error message answered, if any.
	Error string
	// Rule is the index of the script rule used (-1: default or pushed).
	Rule int
	// Fault is the fault injected, if any.
	Fault string
	// Usage is the usage computed for the reply.
	Usage Usage
	// Chunks is how many SSE data events were sent.
	Chunks int
	// HungUp reports that the client went away before the reply ended.
	HungUp bool
	// Duration is how long the handler ran.
	Duration time.Duration

	endOpen func() // ends the request's count in Open (once)
}

// Usage is the token accounting the stand-in reports.
type Usage struct {
	PromptTokens, CompletionTokens, CachedTokens, CacheWriteTokens, ReasoningTokens int
}

// NewServer starts a Server and panics if it cannot listen, like
// httptest.NewServer. Close it when done.
func NewServer(cfg Config) *Server {
	s, err := Start(cfg)
	if err != nil {
		panic("modeltest: " + err.Error())
	}
	return s
}

// Start starts a Server.
func Start(cfg Config) (*Server, error) {
	if cfg.Key == "" {
		cfg.Key = DefaultKey
	}
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	if cfg.Models == nil {
		cfg.Models = DefaultModels
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Script != nil {
		if err := cfg.Script.Check(); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{
		URL:     "http://" + ln.Addr().String(),
		Key:     cfg.Key,
		cfg:     cfg,
		ln:      ln,
		closing: make(chan struct{}),
		changed: make(chan struct{}),
		cache:   newCacheSim(cfg.Cache),
	}
	s.setScriptLocked(cfg.Script)
	s.hs = &http.Server{
		Handler:           http.HandlerFunc(s.serve),
		ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.mu.Lock()
				s.conns++
				s.mu.Unlock()
			}
		},
		// Aborted connections (the reset fault) are expected: keep quiet.
		ErrorLog: log.New(io.Discard, "", 0),
	}
	go s.hs.Serve(ln)
	return s, nil
}

// Close stops the server: connections are closed (stalled replies see a
// hang-up) and Close waits for the handlers to return.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	close(s.closing)
	s.hs.Close()
	s.wg.Wait()
}

// SetScript replaces the script (nil: every request gets "OK") and resets
// the rules' use counts.
func (s *Server) SetScript(sc *Script) error {
	if sc != nil {
		if err := sc.Check(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.setScriptLocked(sc)
	return nil
}

// setScriptLocked installs sc. Precondition: s.mu is held (or s is new).
func (s *Server) setScriptLocked(sc *Script) {
	if sc == nil {
		sc = &Script{}
	}
	s.script = sc
	s.uses = make([]int, len(sc.Rules))
}

// Push queues one-shot rules, tried before the script in order; each
// answers one matching request (or Times requests, if set).
func (s *Server) Push(rules ...Rule) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rules {
		if r.Times == 0 {
			r.Times = 1
		}
		s.pushed = append(s.pushed, r)
	}
}

// Requests returns the records of the requests whose handling has finished,
// in finishing order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// WaitRequests waits until at least n requests have finished and returns
// their records, or returns ctx's error.
func (s *Server) WaitRequests(ctx context.Context, n int) ([]Request, error) {
	for {
		s.mu.Lock()
		if len(s.reqs) >= n {
			out := append([]Request(nil), s.reqs...)
			s.mu.Unlock()
			return out, nil
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for %d requests: %w", n, ctx.Err())
		case <-ch:
		}
	}
}

// Connections returns how many TCP connections the server accepted (fewer
// than requests when clients reuse connections).
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Open returns how many requests are being answered now, and MaxOpen the
// most that were at once since the start or Reset: the provider streams a
// client holds open. A streamed reply stops counting just before its final
// "data: [DONE]" is written, so a client that starts its next request once
// it has read a reply whole is never counted twice.
func (s *Server) Open() (open, maxOpen int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open, s.maxOpen
}

// opened counts a request in Open and returns the function that ends its
// count (once).
func (s *Server) opened() func() {
	s.mu.Lock()
	s.open++
	s.maxOpen = max(s.maxOpen, s.open)
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.open--
			s.mu.Unlock()
		})
	}
}

// Reset forgets the recorded requests, connection count, the pushed rules
// and the simulated cache, and resets rule use counts and MaxOpen.
func (s *Server) Reset() {
	s.mu.Lock()
	s.reqs = nil
	s.maxOpen = s.open
	s.conns = 0
	s.pushed = nil
	s.uses = make([]int, len(s.script.Rules))
	s.mu.Unlock()
	s.cache.flush()
}

// finish records rec. Precondition: none (takes s.mu).
func (s *Server) finish(rec *Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reqs = append(s.reqs, *rec)
	close(s.changed)
	s.changed = make(chan struct{})
}

// pick returns the rule answering req, and its script index (-1 if none).
func (s *Server) pick(req *ChatRequest, prompt []byte) (Rule, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.pushed {
		r := &s.pushed[i]
		if r.matches(req, prompt) {
			rule := *r
			if r.Times--; r.Times <= 0 {
				s.pushed = append(s.pushed[:i:i], s.pushed[i+1:]...)
			}
			return rule, -1
		}
	}
	for i := range s.script.Rules {
		r := &s.script.Rules[i]
		if r.Times > 0 && s.uses[i] >= r.Times {
			continue
		}
		if r.matches(req, prompt) {
			s.uses[i]++
			return *r, i
		}
	}
	if s.script.Default != nil {
		return *s.script.Default, -1
	}
	return Rule{Reasoning: "The user wants a short answer.", Content: "OK"}, -1
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.wg.Add(1)
	defer s.wg.Done()
	start := time.Now()
	s.mu.Lock()
	s.seq++
	rec := &Request{Seq: s.seq, Time: s.cfg.Now(), Path: r.URL.Path, Header: r.Header.Clone(), RemoteAddr: r.RemoteAddr, Rule: -1}
	s.mu.Unlock()
	rec.endOpen = s.opened()
	defer rec.endOpen()
	recorded := false
	record := func() {
		if recorded {
			return
		}
		recorded = true
		rec.Duration = time.Since(start)
		s.finish(rec)
		if s.cfg.Logger != nil {
			s.cfg.Logger.Info("modeltest: request", "seq", rec.Seq, "status", rec.Status, "fault", rec.Fault, "chunks", rec.Chunks, "hung_up", rec.HungUp,
				"prompt_tokens", rec.Usage.PromptTokens, "cached_tokens", rec.Usage.CachedTokens)
		}
	}
	defer record()
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	rec.Body = body
	if err != nil {
		rec.HungUp = true
		return
	}
	s.logBody(body)
	if r.URL.Path != "/v1/chat/completions" {
		s.fail(w, rec, http.StatusNotFound, "invalid_request_error", "not_found", fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		s.fail(w, rec, http.StatusMethodNotAllowed, "invalid_request_error", "method_not_allowed", "use POST")
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.Key {
		s.fail(w, rec, http.StatusUnauthorized, "authentication_error", "invalid_api_key", "Invalid API key or missing Authorization: Bearer header")
		return
	}
	req, err := parseRequest(body, s.cfg.Models, s.cfg.AllowUnknownFields, s.cfg.UsageWhenAsked)
	if err != nil {
		var ve *validationError
		errors.As(err, &ve)
		s.fail(w, rec, http.StatusBadRequest, "invalid_request_error", ve.param, ve.msg)
		return
	}
	rec.Parsed = req
	rec.Prompt = Render(req)
	if limit := req.outputLimit(); limit > 0 {
		// Seed: max_completion_tokens is "同时受剩余上下文限制" (also bounded
		// by the context left) in a window of 1,048,576 tokens. The seed
		// does not say whether the provider lowers it or refuses; the
		// stand-in refuses, as OpenAI and vLLM do, so that a client whose
		// prompt and budget overflow the window is caught in tests.
		// A token is at least one byte: most prompts need no count.
		if len(rec.Prompt)+limit > ContextWindow {
			if n := cachetest.Count(rec.Prompt); n+limit > ContextWindow {
				s.fail(w, rec, http.StatusBadRequest, "invalid_request_error", "context_length_exceeded",
					fmt.Sprintf("the prompt (%d tokens) and max_completion_tokens (%d) exceed the context window of %d tokens", n, limit, ContextWindow))
				return
			}
		}
	}
	rule, idx := s.pick(req, rec.Prompt)
	rec.Rule = idx
	rec.Fault = rule.Fault

	if !sleepCtx(r.Context(), s.closing, time.Duration(rule.DelayMS)*time.Millisecond) {
		rec.HungUp = r.Context().Err() != nil
		return
	}
	switch rule.Fault {
	case "":
	case "hangup":
		// Recorded before the connection closes: the client sees the
		// hang-up at once and may retry and finish before a deferred
		// record would run, and Requests must already count this one.
		record()
		if c, _, err := http.NewResponseController(w).Hijack(); err == nil {
			c.Close()
		}
		return
	case "cut", "reset", "stall", "no_done":
	default:
		code, _ := strconv.Atoi(rule.Fault)
		if rule.RetryAfter != "" {
			w.Header().Set("Retry-After", rule.RetryAfter)
		}
		msg := rule.Message
		if msg == "" {
			msg = http.StatusText(code)
		}
		typ, ecode := "server_error", "internal_error"
		switch {
		case code == http.StatusTooManyRequests:
			typ, ecode = "rate_limit_error", "rate_limit_exceeded"
		case code == http.StatusUnauthorized:
			typ, ecode = "authentication_error", "invalid_api_key"
		case code < 500:
			typ, ecode = "invalid_request_error", "invalid_request"
		}
		s.fail(w, rec, code, typ, ecode, msg)
		return
	}
	rec.Usage = s.usage(req, rec.Prompt, &rule)
	if req.Stream != nil && *req.Stream {
		s.writeSSE(w, r, rec, req, &rule)
	} else {
		s.writeJSON(w, r, rec, req, &rule)
	}
}

// logBody appends body to the request log as one JSON line.
func (s *Server) logBody(body []byte) {
	if s.cfg.RequestLog == nil {
		return
	}
	var line bytes.Buffer
	if json.Compact(&line, body) != nil {
		line.Reset()
		b, _ := json.Marshal(map[string]string{"invalid_body": string(body)})
		line.Write(b)
	}
	line.WriteByte('\n')
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.cfg.RequestLog.Write(line.Bytes())
}

type errorJSON struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// fail answers an error in the provider's format.
func (s *Server) fail(w http.ResponseWriter, rec *Request, status int, typ, code, msg string) {
	var e errorJSON
	e.Error.Message, e.Error.Type = msg, typ
	if code != "" {
		e.Error.Code = &code
	}
	b, _ := json.Marshal(e)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
	rec.Status, rec.Error = status, msg
}

// sleepCtx waits d; false if the client hung up or the server is closing.
func sleepCtx(ctx context.Context, closing <-chan struct{}, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	case <-closing:
		return false
	}
}
