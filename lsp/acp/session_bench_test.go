package acp_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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

// sessionTurn is what turn N of a session asks the model to do: search
// for query, read file, and on an edit turn replace oldText by newText.
type sessionTurn struct {
	file, query, oldText, newText string
}

// smallTurns are the small session's turns: pkg/fNN.go's first function
// and first TODO.
func smallTurns() []sessionTurn {
	var out []sessionTurn
	for n := 1; n <= sessionTurns; n++ {
		out = append(out, sessionTurn{file: fmt.Sprintf("pkg/f%02d.go", n), query: fmt.Sprintf("func F%d_0(", n),
			oldText: fmt.Sprintf("// TODO %d.0: check the bounds", n), newText: fmt.Sprintf("// Bounds of step %d are checked by the caller.", n)})
	}
	return out
}

// sessionRules script the session: turn N searches for its query, reads
// its file, every third turn replaces oldText, then answers in a paragraph
// — a round per step, as an agent works. Each rule is keyed by the tool
// call it follows ("<|tool|>[rN]" in the stand-in's rendering).
func sessionRules(turns []sessionTurn) []modeltest.Rule {
	var rules []modeltest.Rule
	answer := "I looked at the file. " + strings.Repeat("The function multiplies its input and adds the step number; the bounds are not checked. ", 6)
	after := func(id string) string { return "<|tool|>[" + id + "]" }
	for i, tn := range turns {
		n := i + 1
		s, r, e := fmt.Sprintf("s%d", n), fmt.Sprintf("r%d", n), fmt.Sprintf("e%d", n)
		rules = append(rules,
			modeltest.Rule{Match: fmt.Sprintf("step %d:", n), LastRole: "user", Reasoning: "Find it first.", Times: 1,
				ToolCalls: []modeltest.ScriptToolCall{call(s, "search_files", map[string]any{"query": tn.query, "regex": nil, "directory": nil})}},
			modeltest.Rule{MatchPrompt: after(s), LastRole: "tool", Reasoning: "Read " + tn.file + ".", Times: 1,
				ToolCalls: []modeltest.ScriptToolCall{call(r, "read_file", map[string]any{"path": tn.file, "start_line": nil, "end_line": nil})}})
		last := r
		if n%3 == 0 {
			rules = append(rules, modeltest.Rule{MatchPrompt: after(r), LastRole: "tool", Reasoning: "Mark the bounds.", Times: 1,
				ToolCalls: []modeltest.ScriptToolCall{call(e, "replace_text", map[string]string{"path": tn.file, "old_text": tn.oldText, "new_text": tn.newText})}})
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

// runSession runs the small session's 10 turns and returns each one's figures.
func runSession(tb testing.TB) (*agentFixture, []turnFigures) {
	return runTurns(tb, sessionFiles(), smallTurns())
}

// runTurns runs a session over files and returns each turn's figures.
func runTurns(tb testing.TB, files map[string]string, turns []sessionTurn) (*agentFixture, []turnFigures) {
	f := newAgent(tb, fixtureOpts{files: files}, sessionRules(turns)...)
	var out []turnFigures
	for i, tn := range turns {
		n := i + 1
		resp := f.prompt(fmt.Sprintf("step %d: what does %s do, and are its bounds checked?", n, tn.file))
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
// request adds. The edits of the session land. The same holds at real
// size (bench/README.md, "Agent sessions").
func TestTenTurnSessionStaysCached(t *testing.T) {
	t.Run("small", func(t *testing.T) { checkStaysCached(t, sessionFiles(), smallTurns()) })
	t.Run("real-size", func(t *testing.T) {
		files, turns := realSizeSession(t)
		checkStaysCached(t, files, turns)
	})
}

// checkStaysCached runs a session and checks its cache and its edits.
func checkStaysCached(t *testing.T, files map[string]string, turns []sessionTurn) {
	f, _ := runTurns(t, files, turns)
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
	for n := 3; n <= len(turns); n += 3 {
		if got := f.file(turns[n-1].file); !strings.Contains(got, turns[n-1].newText) {
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
		reportSession(b, f, turns)
	}
}

// BenchmarkTenTurnSessionRealSize is the same session over real-size
// files: ten net/http sources of the Go tree (300 lines and more, the
// first ten by name), each turn searching for the file's first function,
// reading the file (read_file's cut at 600 lines or 64 KiB applies) and
// every third turn putting a comment above that function.
func BenchmarkTenTurnSessionRealSize(b *testing.B) {
	files, turns := realSizeSession(b)
	for range b.N {
		f, figs := runTurns(b, files, turns)
		reportSession(b, f, figs)
	}
}

// realSizeSession reads the real-size session's files and turns.
func realSizeSession(tb testing.TB) (map[string]string, []sessionTurn) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Fatalf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(goroot)), "src", "net", "http")
	ents, err := os.ReadDir(dir)
	if err != nil {
		tb.Fatal(err)
	}
	files := map[string]string{}
	var turns []sessionTurn
	for _, e := range ents {
		name := e.Name()
		if len(turns) == sessionTurns || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			tb.Fatal(err)
		}
		text := string(data)
		lines := strings.Split(text, "\n")
		if len(lines) < 300 {
			continue
		}
		var first string
		for _, l := range lines {
			if strings.HasPrefix(l, "func ") && strings.Count(text, l) == 1 {
				first = l
				break
			}
		}
		if first == "" {
			continue
		}
		path := "http/" + name
		files[path] = text
		query := first[:strings.IndexByte(first, '(')+1]
		if strings.HasPrefix(first, "func (") { // a method: its name
			rest := first[strings.IndexByte(first, ')')+2:]
			query = rest[:strings.IndexByte(rest, '(')+1]
		}
		turns = append(turns, sessionTurn{file: path, query: query, oldText: first, newText: "// Checked by the caller.\n" + first})
	}
	if len(turns) < sessionTurns {
		tb.Fatalf("%s has %d sources of 300 lines and more, want %d", dir, len(turns), sessionTurns)
	}
	return files, turns
}

// reportSession reports a session's figures.
func reportSession(b *testing.B, f *agentFixture, turns []turnFigures) {
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
