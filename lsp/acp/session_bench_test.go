package acp_test

import (
	"fmt"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// The 10-turn session of the cache figure (bench/README.md, "Agent
// sessions"): a folder of 24 Go files; each turn the user asks about one
// file, the model searches for it, reads it and answers; every third turn
// it edits the file and the user allows the edit.

const sessionTurns = 10

// sessionFiles are the folder's files: pkg/fNN.go, each with a few
// functions and a TODO line the edit turns change.
func sessionFiles() map[string]string {
	out := map[string]string{}
	for i := range 24 {
		var b strings.Builder
		fmt.Fprintf(&b, "package pkg\n\n// File %d holds the helpers of step %d.\n\n", i, i)
		for j := range 6 {
			fmt.Fprintf(&b, "// F%d_%d returns the %d-th value of step %d.\nfunc F%d_%d(x int) int {\n\t// TODO %d.%d: check the bounds\n\treturn x*%d + %d\n}\n\n", i, j, j, i, i, j, i, j, j+1, i)
		}
		out[fmt.Sprintf("pkg/f%02d.go", i)] = b.String()
	}
	return out
}

// sessionRules script the session: turn N searches for a function of
// pkg/fNN.go, reads the file, every third turn replaces its first TODO,
// then answers in a paragraph — a round per step, as an agent works. Each
// rule is keyed by the tool call it follows ("<|tool|>[rN]" in the
// stand-in's rendering).
func sessionRules() []modeltest.Rule {
	var rules []modeltest.Rule
	answer := "I looked at the file. " + strings.Repeat("The function multiplies its input and adds the step number; the bounds are not checked. ", 6)
	after := func(id string) string { return "<|tool|>[" + id + "]" }
	for n := 1; n <= sessionTurns; n++ {
		file := fmt.Sprintf("pkg/f%02d.go", n)
		s, r, e := fmt.Sprintf("s%d", n), fmt.Sprintf("r%d", n), fmt.Sprintf("e%d", n)
		rules = append(rules,
			modeltest.Rule{Match: fmt.Sprintf("step %d:", n), LastRole: "user", Reasoning: "Find it first.", Times: 1,
				ToolCalls: []modeltest.ScriptToolCall{call(s, "search_files", map[string]any{"query": fmt.Sprintf("func F%d_0(", n), "regex": nil, "directory": nil})}},
			modeltest.Rule{MatchPrompt: after(s), LastRole: "tool", Reasoning: "Read " + file + ".", Times: 1,
				ToolCalls: []modeltest.ScriptToolCall{call(r, "read_file", map[string]any{"path": file, "start_line": nil, "end_line": nil})}})
		last := r
		if n%3 == 0 {
			rules = append(rules, modeltest.Rule{MatchPrompt: after(r), LastRole: "tool", Reasoning: "Mark the bounds.", Times: 1,
				ToolCalls: []modeltest.ScriptToolCall{call(e, "replace_text", map[string]string{"path": file,
					"old_text": fmt.Sprintf("// TODO %d.0: check the bounds", n), "new_text": fmt.Sprintf("// Bounds of step %d are checked by the caller.", n)})}})
			last = e
		}
		rules = append(rules, modeltest.Rule{MatchPrompt: after(last), LastRole: "tool", Reasoning: "Now answer.", Content: answer, Times: 1})
	}
	return rules
}

// turnFigures are one turn's prompt, cached and output tokens, requests
// and cost, from the prompt's reply and the usage_update.
type turnFigures struct {
	prompt, cached, output, requests int
	cost                             float64
}

// runSession runs the 10 turns and returns each one's figures.
func runSession(tb testing.TB) (*agentFixture, []turnFigures) {
	f := newAgent(tb, fixtureOpts{files: sessionFiles()}, sessionRules()...)
	var out []turnFigures
	for n := 1; n <= sessionTurns; n++ {
		resp := f.prompt(fmt.Sprintf("step %d: what does pkg/f%02d.go do, and are its bounds checked?", n, n))
		if resp.StopReason != sdk.StopReasonEndTurn {
			tb.Fatalf("turn %d ended %q", n, resp.StopReason)
		}
		u := f.ed.lastUsage()
		out = append(out, turnFigures{prompt: resp.Usage.InputTokens, cached: *resp.Usage.CachedReadTokens, output: resp.Usage.OutputTokens,
			requests: int(u["requests"].(float64)), cost: u["turnCostUSD"].(float64)})
	}
	return f, out
}

// lastUsage returns the kimi figures of the last usage_update.
func (f *fakeEditor) lastUsage() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := len(f.updates) - 1; i >= 0; i-- {
		if u := f.updates[i].UsageUpdate; u != nil {
			m, _ := u.Meta["kimi"].(map[string]any)
			return m
		}
	}
	return nil
}

// TestTenTurnSessionStaysCached: over the 10-turn session every request
// starts with the previous one's messages byte for byte (tools, system
// message, pinned context, earlier turns with their reasoning_content and
// tool calls), so the stand-in's cache serves all of the previous prompt
// but its last partial 16-token block; what is not cached is what the
// request adds. The edits of the session land.
func TestTenTurnSessionStaysCached(t *testing.T) {
	f, _ := runSession(t)
	reqs := f.srv.Requests()
	const block = 16 // the stand-in's default (cachetest.DefaultBlockTokens)
	for i := 1; i < len(reqs); i++ {
		if !sharesMessages(reqs[i-1].Body, reqs[i].Body) {
			t.Errorf("request %d does not start with request %d's messages", i+1, i)
		}
		prev, u := reqs[i-1].Usage, reqs[i].Usage
		if want := prev.PromptTokens / block * block; u.CachedTokens < want {
			t.Errorf("request %d: %d of %d prompt tokens cached, want at least the previous prompt's %d", i+1, u.CachedTokens, u.PromptTokens, want)
		}
	}
	for n := 3; n <= sessionTurns; n += 3 {
		if got := f.file(fmt.Sprintf("pkg/f%02d.go", n)); !strings.Contains(got, fmt.Sprintf("Bounds of step %d are checked", n)) {
			t.Errorf("turn %d's edit did not land", n)
		}
	}
}

// BenchmarkTenTurnSession reports the session's cache hit ratio and its
// tokens and cost per turn (the stand-in's tokenizer and the default
// prices), for bench/README.md; -v prints each turn.
func BenchmarkTenTurnSession(b *testing.B) {
	for range b.N {
		f, turns := runSession(b)
		var prompt, cached, output, requests int
		var cost float64
		for i, tf := range turns {
			prompt, cached, output, requests, cost = prompt+tf.prompt, cached+tf.cached, output+tf.output, requests+tf.requests, cost+tf.cost
			b.Logf("turn %2d: %d requests, %6d prompt tokens (%6d cached, %.3f), %4d output, $%.5f", i+1, tf.requests, tf.prompt, tf.cached,
				float64(tf.cached)/float64(tf.prompt), tf.output, tf.cost)
		}
		b.ReportMetric(float64(cached)/float64(prompt), "hit-ratio")
		var warmPrompt, warmCached int // the requests after the session's first (cold) one
		for _, r := range f.srv.Requests()[1:] {
			warmPrompt, warmCached = warmPrompt+r.Usage.PromptTokens, warmCached+r.Usage.CachedTokens
		}
		b.ReportMetric(float64(warmCached)/float64(warmPrompt), "warm-hit-ratio")
		b.ReportMetric(float64(prompt)/sessionTurns, "prompt-tokens/turn")
		b.ReportMetric(float64(output)/sessionTurns, "output-tokens/turn")
		b.ReportMetric(cost/sessionTurns, "USD/turn")
		b.ReportMetric(float64(requests)/sessionTurns, "requests/turn")
	}
}
