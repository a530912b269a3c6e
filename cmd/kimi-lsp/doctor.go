package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
)

// modelCheck is one model the actions use, with the reasoning effort they
// send it: doctor sends exactly that pair, so a model name or an effort the
// provider refuses shows here rather than on the user's first edit.
type modelCheck struct {
	model   string
	effort  config.Effort
	actions []string // the actions that send this pair, in menu order
}

// modelChecks returns the distinct (model, effort) pairs of cfg's actions,
// in menu order: the explanation model (fastModel) first, then the edit
// model (model), then any other model a user action names — and inline
// completion's pair when it is on.
func modelChecks(cfg config.Config) []modelCheck {
	var out []modelCheck
	add := func(name string, m string, e config.Effort) {
		i := slices.IndexFunc(out, func(c modelCheck) bool { return c.model == m && c.effort == e })
		if i < 0 {
			out = append(out, modelCheck{model: m, effort: e})
			i = len(out) - 1
		}
		out[i].actions = append(out[i].actions, name)
	}
	for _, a := range cfg.Actions() {
		add(a.Name, a.Model, a.ReasoningEffort)
	}
	if cfg.Completion.Enable {
		m := cfg.CompletionModel()
		e, _ := config.EffortFor(m, cfg.Completion.ReasoningEffort)
		add("completion", m, e)
	}
	return out
}

// describe names the pair for the user, with the model's rule when it
// imposes the effort.
func (c modelCheck) describe() string {
	s := fmt.Sprintf("%s (reasoning_effort %s, for %s)", c.model, c.effort, strings.Join(c.actions, ", "))
	if only, ok := model.RequiredEffort(c.model); ok {
		s += fmt.Sprintf("; %s accepts reasoning_effort %s only, so every action on it sends %s", c.model, only, only)
	}
	return s
}

// checkModels sends one tiny request per pair of modelChecks(cfg), all at
// once within timeout, prints one line per pair to w, and returns the exit
// code: 0 when every pair answered, 1 otherwise. redact cleans error texts.
func checkModels(ctx context.Context, w io.Writer, cfg config.Config, client *model.Client, timeout time.Duration, redact func(string) string, ledger *provider.Ledger) int {
	checks := modelChecks(cfg)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lines := make([]string, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lines[i] = checkModel(ctx, cfg, client, c, timeout, redact, ledger)
		}()
	}
	wg.Wait()
	code := 0
	for _, l := range lines {
		fmt.Fprintf(w, "  %s\n", l)
		if !strings.HasPrefix(l, "OK") {
			code = 1
		}
	}
	return code
}

// checkModel sends the pair a one-line request and says how it went, in
// one line starting with "OK" when the model answered.
func checkModel(ctx context.Context, cfg config.Config, client *model.Client, c modelCheck, timeout time.Duration, redact func(string) string, ledger *provider.Ledger) string {
	start := time.Now()
	key, _ := cfg.Key()
	// Recorded as every request is (surface "doctor"): it left the machine.
	resp, err := ledger.Complete(ctx, cfg, client, &model.Request{
		Model:               c.model,
		Messages:            []model.Message{model.UserMessage("Reply with OK.")},
		ReasoningEffort:     string(c.effort),
		MaxCompletionTokens: 64,
	}, &provider.Call{Surface: "doctor", Key: key})
	switch {
	case err == nil || errors.Is(err, model.ErrNoAnswer):
		// A 64-token budget may go to thinking: the request was accepted,
		// which is what is checked.
		line := fmt.Sprintf("OK: %s answered in %v", c.describe(), time.Since(start).Round(time.Millisecond))
		if resp != nil && resp.Usage != nil {
			line += fmt.Sprintf(" (%d prompt tokens, %d cached)", resp.Usage.PromptTokens, resp.Usage.CachedTokens)
		}
		return line
	case ctx.Err() != nil:
		return fmt.Sprintf("no answer: %s did not answer within %v (check the network, HTTPS_PROXY, or baseURL)", c.describe(), timeout)
	}
	return fmt.Sprintf("failed: %s: %s", c.describe(), redact(cmp.Or(err.Error(), "unknown error")))
}
