package assist_test

// Tests of the provider conversation through the engine (issue 13 items
// 1-7, issue 15 item 6), each against the stand-in provider.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// providerFixture is newFixture with a stand-in configured by scfg, the
// editor settings settings (JSON, "" for none) and engine options opts.
func providerFixture(t *testing.T, files map[string]string, scfg modeltest.Config, settings string, opts assist.Options, rules ...modeltest.Rule) *fixture {
	t.Helper()
	scfg.Script = &modeltest.Script{Rules: rules}
	srv := modeltest.NewServer(scfg)
	t.Cleanup(srv.Close)
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, _ := config.Default().WithEnv(func(k string) string { return env[k] })
	if settings != "" {
		var errs []error
		if cfg, errs = cfg.WithEditor(json.RawMessage(settings)); len(errs) > 0 {
			t.Fatalf("settings: %v", errs)
		}
	}
	folders := workspace.NewFolders(workspace.DefaultOptions(), workspace.Hooks{})
	t.Cleanup(func() { folders.Close() })
	if err := folders.Add(workspace.FileURI(dir), "ws"); err != nil {
		t.Fatal(err)
	}
	folders.Ready(context.Background())
	opts.Config = cfg
	if opts.ExplanationDir == "" {
		opts.ExplanationDir = t.TempDir()
	}
	engine, err := assist.NewEngine(opts)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, dir: dir, srv: srv, engine: engine, folders: folders, cfg: cfg}
}

func (r *recorder) statuses() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Join(r.stats, "\n")
}

// budgets lists the max_completion_tokens of the requests the stand-in saw.
func budgets(srv *modeltest.Server) []int {
	var out []int
	for _, r := range srv.Requests() {
		if r.Parsed != nil && r.Parsed.MaxCompletionTokens != nil {
			out = append(out, *r.Parsed.MaxCompletionTokens)
		}
	}
	return out
}

// TestExplainCutOffIsNotKept (issue 13 item 1): an explanation that stops
// at the output budget is shown, said to be cut off and why, and never
// kept: asked again, the model is asked again.
func TestExplainCutOffIsNotKept(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc},
		modeltest.Rule{Match: `action="explain"`, Reasoning: "Long thoughts.", Content: "Sub adds its two argu", FinishReason: "length"})
	var r recorder
	out, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &r)
	if !errors.Is(err, model.ErrCutOff) || !strings.Contains(err.Error(), "maxCompletionTokens (8192 tokens") {
		t.Fatalf("err %v, want the cut-off named with its budget", err)
	}
	if out == nil || out.Text != "Sub adds its two argu" || out.File != "" || strings.Join(r.content, "") != out.Text {
		t.Errorf("outcome %+v, streamed %q", out, strings.Join(r.content, ""))
	}
	if _, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &recorder{}); !errors.Is(err, model.ErrCutOff) {
		t.Errorf("second run: %v", err)
	}
	if n := len(f.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2: a cut-off explanation was served from the store", n)
	}
}

// TestEditCutOffRetriedOnce (issue 13 item 1): an edit cut off at its
// budget is asked once more with twice the budget; the complete answer
// applies.
func TestEditCutOffRetriedOnce(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc},
		modeltest.Rule{Match: `action="fix"`, Times: 1, Reasoning: "r", Content: fixDiff[:40], FinishReason: "length"},
		modeltest.Rule{Match: `action="fix"`, Content: fixDiff})
	var r recorder
	out, err := f.engine.Run(context.Background(), f.task(config.ActionFix, "calc.go", "func Sub", "}"), &r)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Changes) != 1 || !strings.Contains(out.Changes[0].After, "a - b") {
		t.Errorf("changes %+v", out.Changes)
	}
	if got := fmt.Sprint(budgets(f.srv)); got != "[32768 65536]" {
		t.Errorf("budgets %s, want [32768 65536]", got)
	}
	if !strings.Contains(r.statuses(), "cut off at maxCompletionTokens (32768); asking once more with 65536") {
		t.Errorf("statuses:\n%s", r.statuses())
	}
}

// TestEditCutOffTwice: the retry is made once; cut off again, the edit
// fails with the reason and nothing changes.
func TestEditCutOffTwice(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc},
		modeltest.Rule{Match: `action="fix"`, Reasoning: "r", Content: fixDiff[:40], FinishReason: "length"})
	out, err := f.engine.Run(context.Background(), f.task(config.ActionFix, "calc.go", "func Sub", "}"), &recorder{})
	if !errors.Is(err, model.ErrCutOff) || !strings.Contains(err.Error(), "65536") || len(out.Changes) != 0 {
		t.Errorf("err %v, changes %d", err, len(out.Changes))
	}
	if n := len(f.srv.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// TestUnknownFinishReason (issue 13 item 2): a finish_reason outside the
// seed's enum is told to the user; the explanation is not kept, the edit
// not made.
func TestUnknownFinishReason(t *testing.T) {
	f := newFixture(t, map[string]string{"calc.go": calc},
		modeltest.Rule{Match: `action="explain"`, Content: "Sub is", FinishReason: "content_filter"},
		modeltest.Rule{Match: `action="fix"`, Content: fixDiff, FinishReason: "content_filter"})
	out, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &recorder{})
	if !errors.Is(err, model.ErrFinishReason) || !strings.Contains(err.Error(), `"content_filter"`) || out.File != "" {
		t.Errorf("explain: %v, file %q", err, out.File)
	}
	out, err = f.engine.Run(context.Background(), f.task(config.ActionFix, "calc.go", "func Sub", "}"), &recorder{})
	if !errors.Is(err, model.ErrFinishReason) || len(out.Changes) != 0 {
		t.Errorf("fix: %v, %d changes", err, len(out.Changes))
	}
}

// countingHandler counts the log records whose message holds match.
type countingHandler struct {
	slog.Handler // discards
	match        string
	n            *atomic.Int32
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if strings.Contains(r.Message, h.match) {
		h.n.Add(1)
	}
	return nil
}

// TestNoUsageIsEstimated (issue 13 item 3): replies without usage are
// recorded from kimi-lsp's own count, marked estimated in the statistics,
// said once in the log; no request field is added to ask for usage.
func TestNoUsageIsEstimated(t *testing.T) {
	var said atomic.Int32
	logger := slog.New(countingHandler{Handler: slog.DiscardHandler, match: "sends no usage", n: &said})
	f := providerFixture(t, map[string]string{"calc.go": calc}, modeltest.Config{UsageWhenAsked: true}, "",
		assist.Options{Logger: logger},
		modeltest.Rule{Match: `action="explain"`, Reasoning: "Looking at Sub and what it returns.", Content: "Sub adds instead of subtracting."})
	out, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	if !out.Usage.Estimated || out.Usage.PromptTokens == 0 || out.Usage.CompletionTokens == 0 || out.Usage.ReasoningTokens == 0 {
		t.Errorf("usage %+v, want an estimate", out.Usage)
	}
	if _, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "// Sub", "}"), &recorder{}); err != nil {
		t.Fatal(err)
	}
	st := f.engine.Stats()
	if st.EstimatedUsage != 2 || st.UnknownUsage != 0 || st.CostUSD == 0 || st.PromptTokens == 0 {
		t.Errorf("stats %+v", st)
	}
	if n := said.Load(); n != 1 {
		t.Errorf("the log says it %d times, want once", n)
	}
	for _, r := range f.srv.Requests() {
		if bytes.Contains(r.Body, []byte("stream_options")) {
			t.Errorf("a request asked for usage with a field the seed does not list: %s", r.Body)
		}
	}
}

// TestTypelessWebSearch (issue 13 item 4): a $web_search call streamed
// without type is the builtin: answered with its own arguments, not as an
// unknown tool.
func TestTypelessWebSearch(t *testing.T) {
	f := providerFixture(t, map[string]string{"calc.go": calc}, modeltest.Config{}, `{"webSearch": true}`, assist.Options{},
		modeltest.Rule{Match: `action="explain"`, Times: 1, Reasoning: "Search.", Chunks: 2, ToolCalls: []modeltest.ScriptToolCall{
			{ID: "s1", Name: "$web_search", Arguments: `{"query":"go subtraction"}`, OmitType: true}}},
		modeltest.Rule{LastRole: "tool", Content: "Sub adds."})
	if _, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &recorder{}); err != nil {
		t.Fatal(err)
	}
	reqs := f.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := reqs[1].Parsed.Messages
	asst, tool := msgs[len(msgs)-2], msgs[len(msgs)-1]
	if len(asst.ToolCalls) != 1 || asst.ToolCalls[0].Type != "builtin_function" || tool.Text() != `{"query":"go subtraction"}` {
		t.Errorf("sent back %+v and tool result %q", asst.ToolCalls, tool.Text())
	}
}

// TestKimiK3Actions (issue 13 item 5): with kimi-k3 for edits and
// explanations, explain and fix send reasoning_effort max (the stand-in,
// as the seed, refuses anything else for kimi-k3).
func TestKimiK3Actions(t *testing.T) {
	f := providerFixture(t, map[string]string{"calc.go": calc}, modeltest.Config{}, `{"model": "kimi-k3", "fastModel": "kimi-k3"}`, assist.Options{},
		modeltest.Rule{Match: `action="explain"`, Content: "Sub adds."},
		modeltest.Rule{Match: `action="fix"`, Content: fixDiff})
	if _, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &recorder{}); err != nil {
		t.Errorf("explain on kimi-k3: %v", err)
	}
	if _, err := f.engine.Run(context.Background(), f.task(config.ActionFix, "calc.go", "func Sub", "}"), &recorder{}); err != nil {
		t.Errorf("fix on kimi-k3: %v", err)
	}
	for _, r := range f.srv.Requests() {
		if r.Parsed == nil || *r.Parsed.ReasoningEffort != "max" {
			t.Errorf("request %d: %s (%s)", r.Seq, r.Error, r.Body[:min(len(r.Body), 200)])
		}
	}
}

// bigGo is a Go file of about 40 KB, large enough for the provider's cache.
func bigGo() string {
	var b strings.Builder
	b.WriteString("package calc\n\n// Sub returns a minus b.\nfunc Sub(a, b int) int {\n\treturn a + b\n}\n")
	for i := range 600 {
		fmt.Fprintf(&b, "\n// F%d returns its argument plus %d.\nfunc F%d(x int) int { return x + %d }\n", i, i, i, i)
	}
	return b.String()
}

// TestTTLChangedAtRunTime (issue 13 item 6): the engine starts with a 5m
// cache TTL, the user switches to 1h: the request asks for 1h, the cache
// writes are priced at the 1h rate, and after 6 idle minutes (and an edit)
// the prompt keeps the prefix the provider still holds instead of being
// laid out anew as if the cache were cold.
func TestTTLChangedAtRunTime(t *testing.T) {
	clock := modeltest.NewClock(time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC))
	src := bigGo()
	f := providerFixture(t, map[string]string{"calc.go": src}, modeltest.Config{Now: clock.Now}, "", assist.Options{Now: clock.Now},
		modeltest.Rule{Match: `action="explain"`, Content: "Sub adds."})
	cfg, errs := f.cfg.WithEditor(json.RawMessage(`{"cacheTTL": "1h"}`))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	f.engine.SetConfig(cfg)
	if _, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &recorder{}); err != nil {
		t.Fatal(err)
	}
	first := f.srv.Requests()[0]
	if ttl := first.Parsed.PromptCacheOptions.TTL; ttl == nil || *ttl != "1h" {
		t.Fatalf("prompt_cache_options %s", first.Body[:0])
	}
	price, _ := cfg.PriceFor(first.Parsed.Model)
	u := first.Usage
	want := (float64(u.PromptTokens-u.CachedTokens-u.CacheWriteTokens)*price.Input + float64(u.CachedTokens)*price.CachedRead + float64(u.CacheWriteTokens)*price.Write1h) / 1e6
	if st := f.engine.Stats(); u.CacheWriteTokens == 0 || math.Abs(st.InputCostUSD-want) > 1e-9 {
		t.Errorf("input cost %v, want %v (cache writes at the 1h rate); usage %+v", st.InputCostUSD, want, u)
	}

	// Six minutes later, after an edit near the top of the file.
	clock.Advance(6 * time.Minute)
	edited := strings.Replace(src, "// Sub returns a minus b.", "// Sub returns a minus b (it does not yet).", 1)
	os.WriteFile(filepath.Join(f.dir, "calc.go"), []byte(edited), 0o644)
	tk := f.task(config.ActionExplain, "calc.go", "func F7(", "return x + 7 }")
	tk.Active.LastEdited = 2
	if _, err := f.engine.Run(context.Background(), tk, &recorder{}); err != nil {
		t.Fatal(err)
	}
	second := f.srv.Requests()[1]
	if second.Usage.CachedTokens < first.Usage.PromptTokens*8/10 {
		t.Errorf("after 6 idle minutes with a 1h cache: %d of %d prompt tokens cached (the first prompt had %d): the prompt was laid out as if the cache were cold",
			second.Usage.CachedTokens, second.Usage.PromptTokens, first.Usage.PromptTokens)
	}
}

// TestContextWindowClamp (issue 13 item 7): maxCompletionTokens set to the
// whole window is lowered so that prompt and answer fit in 1,048,576
// tokens (the stand-in refuses more), and the user is told.
func TestContextWindowClamp(t *testing.T) {
	f := providerFixture(t, map[string]string{"calc.go": calc}, modeltest.Config{}, `{"maxCompletionTokens": 1048576}`, assist.Options{},
		modeltest.Rule{Match: `action="explain"`, Content: "Sub adds."})
	var r recorder
	if _, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &r); err != nil {
		t.Fatal(err)
	}
	b := budgets(f.srv)
	if len(b) != 1 || b[0] >= model.ContextWindow || b[0] < model.ContextWindow-10_000 {
		t.Errorf("budgets %v", b)
	}
	if !strings.Contains(r.statuses(), "maxCompletionTokens lowered from 1048576") {
		t.Errorf("statuses:\n%s", r.statuses())
	}
}

// TestWaitingIsShownAndBounded (issue 15 item 6): a provider that never
// answers: the sink hears that the task is waiting within a few seconds,
// and the task ends at waitTimeout with a sentence naming it, not after
// three first-byte timeouts.
func TestWaitingIsShownAndBounded(t *testing.T) {
	f := providerFixture(t, map[string]string{"calc.go": calc}, modeltest.Config{}, `{"waitTimeout": 5}`, assist.Options{},
		modeltest.Rule{DelayMS: 600_000})
	var r recorder
	start := time.Now()
	_, err := f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &r)
	took := time.Since(start)
	if !errors.Is(err, model.ErrTimeout) || !strings.Contains(err.Error(), "did not start answering within 5s") || !strings.Contains(err.Error(), "waitTimeout") {
		t.Errorf("err %v", err)
	}
	if !strings.Contains(r.statuses(), "waiting for kimi-k3.1-pro-highspeed to start answering") {
		t.Errorf("statuses:\n%s", r.statuses())
	}
	if took > time.Minute {
		t.Errorf("took %v with waitTimeout 5s", took)
	}
}

// TestRefusedEndpointIsToldAsSuch (issue 21 item 18): with baseURL at a
// port where nothing listens, the waiting notices say the connection was
// refused while the attempts are counted (not "no reply yet"), and the
// task's error names the endpoint, what to check and where baseURL came
// from, in words rather than Go's `Post "…": dial tcp …`.
func TestRefusedEndpointIsToldAsSuch(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + l.Addr().String()
	l.Close()
	f := providerFixture(t, map[string]string{"calc.go": calc}, modeltest.Config{}, `{"baseURL": "`+dead+`"}`, assist.Options{})
	var r recorder
	_, err = f.engine.Run(context.Background(), f.task(config.ActionExplain, "calc.go", "func Sub", "}"), &r)
	if err == nil || strings.Contains(err.Error(), "dial tcp") || !strings.Contains(err.Error(), "connection refused") ||
		!strings.Contains(err.Error(), dead+"/v1/chat/completions") || !strings.Contains(err.Error(), "check baseURL (set by editor settings)") {
		t.Errorf("err %v", err)
	}
	if st := r.statuses(); !strings.Contains(st, "connection refused, trying again (attempt 2 of 3)") || strings.Contains(st, "no reply yet") {
		t.Errorf("statuses:\n%s", st)
	}
}
