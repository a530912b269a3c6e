package lsp

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/gittest"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	prov "github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// dearPrices makes the completion and explain model cost $1,000 per
// million tokens, cached or not: one request of a thousand tokens passes a
// budget of a cent.
var dearPrices = map[string]any{"kimi-k3.1-pro-highspeed": map[string]any{"input": 1000, "cachedRead": 1000, "write5m": 1000, "write1h": 1000}}

// spendSession is a completion session (see compSession) whose request
// record is in its own state directory, with the editor's settings given
// and a client that answers showMessageRequest with answer, recording the
// questions.
func newSpendSession(t *testing.T, settings map[string]any, answer string) (*compSession, *questions) {
	t.Helper()
	return newSpendSessionUser(t, settings, answer, "")
}

// newSpendSessionUser is newSpendSession whose server watches the user
// configuration file at userFile (Options.UserFile; "" for none), which
// holds the test's user file (verify off).
func newSpendSessionUser(t *testing.T, settings map[string]any, answer, userFile string) (*compSession, *questions) {
	t.Helper()
	cs := &compSession{texts: map[string]string{}, version: map[string]int32{}}
	cs.prov = modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{Match: `action="explain"`, Content: "It adds."}, {Content: "0"}}}, RequestLog: cs})
	t.Cleanup(cs.prov.Close)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs.dir = dir
	cfg := providerConfig(t, cs.prov)
	if userFile != "" {
		var errs []error
		if cfg, errs = cfg.WithUserFile(userFile); config.HasErrors(errs) {
			t.Fatal(errs)
		}
	}
	// The record's clock stands still at the test's start: the clock hour
	// turning mid-test would reset the hourly budget.
	start := time.Now()
	cs.spendDir, cs.spendAt = filepath.Join(t.TempDir(), "kimi-lsp"), start
	rec, err := spend.Open(cs.spendDir, spend.Options{Now: func() time.Time { return start }})
	if err != nil {
		t.Fatal(err)
	}
	ledger := prov.NewLedger(rec, cfg.Budget, nil)
	t.Cleanup(func() { ledger.Close() })
	cs.session = newSessionOpts(t, Options{Config: cfg, Ledger: ledger, UserFile: userFile}, nil)
	q := &questions{}
	cs.ed.Handle("window/showMessageRequest", func(p json.RawMessage) (any, *lsptest.ResponseError) {
		var req struct {
			Message string `json:"message"`
			Actions []struct {
				Title string `json:"title"`
			} `json:"actions"`
		}
		json.Unmarshal(p, &req)
		q.mu.Lock()
		q.asked = append(q.asked, req.Message)
		for _, a := range req.Actions {
			q.titles = append(q.titles, a.Title)
		}
		q.mu.Unlock()
		return map[string]any{"title": answer}, nil
	})
	cs.ed.Handle("window/workDoneProgress/create", func(json.RawMessage) (any, *lsptest.ResponseError) { return nil, nil })
	cs.initialize(completionInit(string(workspace.FileURI(dir)), true, settings))
	// A request waits for the initializationOptions to be applied (off
	// the read loop, after the initialize reply); the tests' direct
	// reads of the server (cs.srv.stats()) do not.
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.stats"}, nil); err != nil {
		t.Fatalf("kimi.stats: %v", err)
	}
	return cs, q
}

// spentElsewhere records, as another server sharing the request record
// would, a request of usd in the session's clock hour.
func (cs *compSession) spentElsewhere(usd float64) {
	cs.t.Helper()
	other, err := spend.Open(cs.spendDir, spend.Options{Now: func() time.Time { return cs.spendAt }})
	if err != nil {
		cs.t.Fatal(err)
	}
	defer other.Close()
	if err := other.Add(spend.Record{Surface: "explain", Model: "kimi-k3.1-pro", PromptTokens: 10, CostUSD: usd, Outcome: spend.OutcomeOK}); err != nil {
		cs.t.Fatal(err)
	}
}

type questions struct {
	mu            sync.Mutex
	asked, titles []string
}

func (q *questions) list() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.asked...)
}

// explain runs kimi.explain on uri and returns its progress end message.
func (cs *compSession) explain(uri, token string) string {
	cs.t.Helper()
	var reply struct {
		Job string `json:"job"`
	}
	if err := cs.ed.Call(ctxT(cs.t), "workspace/executeCommand", map[string]any{
		"command": "kimi.explain", "workDoneToken": token,
		"arguments": []any{map[string]any{"uri": uri, "range": rng(2, 0, 4, 1)}},
	}, &reply); err != nil || reply.Job == "" {
		cs.t.Fatalf("kimi.explain: %v", err)
	}
	js := &jobSession{session: cs.session}
	return js.progressEnd(`"` + token + `"`)
}

// messages returns the window/showMessage texts the client got.
func (cs *compSession) messages() []string { return shownMessages(cs.ed) }

// TestHourlyBudgetStopsCompletion (#25.1, #30.6): with budget.hourly =
// 0.01, a completion whose estimate passes what is left is not sent, and
// nothing is said (#30.6: before, it was sent); once the spend passes the
// budget (another server's request, read from the shared record)
// completion requests stop (counted at the stand-in), one notice says why
// and until when, and an action asks before it sends: "Cancel" sends
// nothing, "Send" sends.
func TestHourlyBudgetStopsCompletion(t *testing.T) {
	cs, q := newSpendSession(t, map[string]any{
		"budget": map[string]any{"hourly": 0.01}, "prices": dearPrices,
		"completion": map[string]any{"debounceMs": 0},
	}, "Cancel")
	text := "package main\n\nfunc add(a, b int) int {\n\treturn |\n}\n"
	uri, pos := cs.file("main.go", text)
	if l := cs.inlineResult(second(cs.inline(uri, pos, 1))); len(l.Items) != 0 {
		t.Errorf("a completion estimated past the budget: %+v", l)
	}
	if n := len(cs.prov.Requests()); n != 0 {
		t.Fatalf("%d requests at the stand-in after a completion estimated at more than the budget, want 0", n)
	}
	if m := cs.messages(); len(m) != 0 {
		t.Errorf("messages %q: a completion not sent for its estimate pauses quietly", m)
	}
	cs.spentElsewhere(0.0105)
	if st := cs.srv.stats().Spend; !st.Capped || st.Hour.Spent < 0.01 || st.Hour.Limit != 0.01 {
		t.Fatalf("after a dear request: spend %+v", st)
	}
	for i, typed := range []string{"a", "a +", "a + b"} {
		pos := cs.change(uri, strings.Replace(text, "|", typed+"|", 1))
		if l := cs.inlineResult(second(cs.inline(uri, pos, 1))); len(l.Items) != 0 {
			t.Errorf("completion %d past the budget: %+v", i+2, l)
		}
	}
	if n := len(cs.prov.Requests()); n != 0 {
		t.Errorf("%d requests at the stand-in, want 0: the budget did not stop completion", n)
	}
	var notices []string
	for _, m := range cs.messages() {
		if strings.Contains(m, "budget") {
			notices = append(notices, m)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "hourly budget of $0.0100 is spent") || !strings.Contains(notices[0], "inline completion is paused until") {
		t.Errorf("budget notices %q, want one saying why and until when", notices)
	}

	// An action asks; "Cancel" sends nothing.
	if end := cs.explain(uri, "e1"); !strings.Contains(end, "not sent") {
		t.Errorf("explain cancelled: progress ended %q", end)
	}
	asked := q.list()
	if len(asked) != 1 || !strings.Contains(asked[0], "hourly budget") || !strings.Contains(asked[0], "tokens, estimated at $") || !strings.Contains(asked[0], "Send it anyway?") {
		t.Errorf("questions %q", asked)
	}
	if strings.Join(q.titles, ",") != "Send,Cancel" {
		t.Errorf("buttons %q", q.titles)
	}
	if n := len(cs.prov.Requests()); n != 0 {
		t.Errorf("%d requests at the stand-in after Cancel, want still 0", n)
	}
}

// TestConfirmAboveAsks (#25.1): a request estimated above
// budget.confirmAbove asks first, naming its size and estimated cost;
// "Cancel" sends nothing at all, "Send" sends it.
func TestConfirmAboveAsks(t *testing.T) {
	for _, answer := range []string{"Cancel", "Send"} {
		t.Run(answer, func(t *testing.T) {
			cs, q := newSpendSession(t, map[string]any{"budget": map[string]any{"confirmAbove": 0.05}, "prices": dearPrices}, answer)
			uri, _ := cs.file("main.go", "package main\n\nfunc add(a, b int) int {\n\treturn a + b|\n}\n")
			end := cs.explain(uri, "e1")
			asked := q.list()
			if len(asked) != 1 || !strings.Contains(asked[0], "This request is about ") || !strings.Contains(asked[0], " tokens, estimated at $") ||
				!strings.Contains(asked[0], "above budget.confirmAbove ($0.0500)") {
				t.Errorf("questions %q", asked)
			}
			want := map[string]int{"Cancel": 0, "Send": 1}[answer]
			if n := len(cs.prov.Requests()); n != want {
				t.Errorf("answer %s: %d requests at the stand-in, want %d (progress end %q)", answer, n, want, end)
			}
			if answer == "Cancel" && !strings.Contains(end, "not sent") {
				t.Errorf("progress ended %q", end)
			}
			recs := cs.srv.requestRecord(0).Requests
			if len(recs) != want {
				t.Errorf("%d requests recorded, want %d", len(recs), want)
			}
		})
	}
	// Under the threshold nothing is asked (the default prices, 0.10).
	cs, q := newSpendSession(t, nil, "Cancel")
	uri, _ := cs.file("main.go", "package main\n\nfunc add(a, b int) int {\n\treturn a + b|\n}\n")
	cs.explain(uri, "e1")
	if asked := q.list(); len(asked) != 0 || len(cs.prov.Requests()) != 1 {
		t.Errorf("a cheap request asked %q; %d requests", asked, len(cs.prov.Requests()))
	}
}

// TestRequestsAndLastPrompt: kimi.requests returns the record,
// kimi.lastPrompt the last body exactly as the stand-in received it, the
// key struck out.
func TestRequestsAndLastPrompt(t *testing.T) {
	cs, _ := newSpendSession(t, nil, "Send")
	var none json.RawMessage
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.lastPrompt"}, &none); err != nil || string(none) != "null" {
		t.Errorf("kimi.lastPrompt before any request: %s, %v", none, err)
	}
	// The file holds the key: the body sent has it, the kept prompt not.
	uri, _ := cs.file("main.go", "package main\n\n// key: "+cs.prov.Key+"\nfunc add(a, b int) int {\n\treturn a + b|\n}\n")
	cs.explain(uri, "e1")
	var lp struct {
		Surface, Model, Body string
	}
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.lastPrompt"}, &lp); err != nil {
		t.Fatal(err)
	}
	sent := string(cs.prov.Requests()[0].Body)
	if !strings.Contains(sent, cs.prov.Key) {
		t.Fatal("the stand-in did not get the key in the body: the test shows nothing")
	}
	if lp.Surface != "explain" || strings.Contains(lp.Body, cs.prov.Key) || lp.Body != strings.ReplaceAll(sent, cs.prov.Key, redactedKey(lp.Body, sent, cs.prov.Key)) {
		t.Errorf("kimi.lastPrompt: surface %q, body differs from what was sent (or holds the key)", lp.Surface)
	}
	var reply struct {
		Requests []spend.Record `json:"requests"`
	}
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{"command": "kimi.requests", "arguments": []any{map[string]any{"last": 5}}}, &reply); err != nil {
		t.Fatal(err)
	}
	if len(reply.Requests) != 1 || reply.Requests[0].Surface != "explain" || len(reply.Requests[0].Files) == 0 || reply.Requests[0].PromptTokens == 0 {
		t.Errorf("kimi.requests: %+v", reply.Requests)
	}
}

// redactedKey returns what replaced key in got, the redacted form of want.
func redactedKey(got, want, key string) string {
	i := strings.Index(want, key)
	if i < 0 || !strings.HasPrefix(got, want[:i]) {
		return ""
	}
	rest := got[i:]
	tail := want[i+len(key):]
	if j := strings.Index(rest, tail[:min(len(tail), 40)]); j >= 0 {
		return rest[:j]
	}
	return ""
}

func second[A, B any](_ A, b B) B { return b }

// TestHourlyBudgetStopsNextEdits (#25.1 for #24): next edits go through the
// same ledger as completion: once the spend has passed budget.hourly (a
// request of another server sharing the record), an edit burst asks the
// provider nothing and one notice says next edits are paused. (A next
// edit's own estimate passing what is left also keeps it from being sent,
// quietly, #30.6: the dear prices here would.)
func TestHourlyBudgetStopsNextEdits(t *testing.T) {
	cs, _ := newSpendSession(t, map[string]any{
		"budget": map[string]any{"hourly": 0.01}, "prices": dearPrices,
		"nextEdit": map[string]any{"debounceMs": 20},
	}, "Cancel")
	cs.spentElsewhere(0.0105)
	if st := cs.srv.stats().Spend; !st.Capped {
		t.Fatalf("after another server's dear request: spend %+v, want capped", st)
	}
	text := "package main\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n"
	uri, _ := cs.file("main.go", text+"|")
	cs.change(uri, strings.Replace(text, "a + b", "a + b + 1", 1)+"|")
	ctx := ctxT(t)
	if _, err := cs.ed.WaitMethod(ctx, "window/showMessage", func(p json.RawMessage) bool {
		return strings.Contains(string(p), "next edits are paused until")
	}); err != nil {
		t.Fatalf("no notice that next edits are paused: %v (messages %q)", err, cs.messages())
	}
	if n := len(cs.prov.Requests()); n != 0 {
		t.Errorf("%d requests at the stand-in, want 0: the budget did not stop next edits", n)
	}
	if recs := cs.srv.requestRecord(0); len(recs.Requests) != 1 || recs.Requests[0].Surface != "explain" {
		t.Errorf("request record %+v, want only the other server's request", recs)
	}
}

// TestConfirmWithoutShowMessageRequest (#25.1): an editor that cannot ask
// (Helix answers window/showMessageRequest with "method not found") sends
// nothing, as "Cancel" does, and the user is told with a plain message
// what was not sent and why, and which setting sends it without asking.
// Before, the action only ended "not sent": the question was never seen.
func TestConfirmWithoutShowMessageRequest(t *testing.T) {
	cs, _ := newSpendSession(t, map[string]any{"budget": map[string]any{"confirmAbove": 0.05}, "prices": dearPrices}, "Send")
	cs.ed.Handle("window/showMessageRequest", func(json.RawMessage) (any, *lsptest.ResponseError) {
		return nil, &lsptest.ResponseError{Code: -32601, Message: "Method window/showMessageRequest not found"}
	})
	uri, _ := cs.file("main.go", "package main\n\nfunc add(a, b int) int {\n\treturn a + b|\n}\n")
	if end := cs.explain(uri, "e1"); !strings.Contains(end, "not sent") {
		t.Errorf("progress ended %q", end)
	}
	if n := len(cs.prov.Requests()); n != 0 {
		t.Errorf("%d requests at the stand-in, want 0", n)
	}
	var told []string
	for _, m := range cs.messages() {
		if strings.Contains(m, "estimated at $") {
			told = append(told, m)
		}
	}
	t.Logf("told: %q", told)
	if len(told) != 1 || !strings.Contains(told[0], "could not ask") || !strings.Contains(told[0], "budget.confirmAbove") {
		t.Errorf("messages %q, want one saying what was not sent, why, and the setting", cs.messages())
	}
}

// TestReviewChangesCancelStops (#25.1): Kimi: Review Changes asks before
// each changed file's request; "Cancel" stops the review there — nothing
// more is sent and nothing more is asked (before, the next file asked
// again, once per changed file, and an editor that cannot ask got one
// "not sent" message per file).
func TestReviewChangesCancelStops(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dear := map[string]any{"input": 1000, "cachedRead": 1000, "write5m": 1000, "write1h": 1000}
	cs, q := newSpendSession(t, map[string]any{"budget": map[string]any{"confirmAbove": 0.05},
		"prices": map[string]any{"kimi-k3.1-pro": dear, "kimi-k3.1-pro-highspeed": dear}}, "Cancel")
	files := map[string]string{
		"go.mod": "module example.com/m\n",
		"a.go":   "package m\n\nfunc A() int {\n\treturn 1\n}\n",
		"b.go":   "package m\n\nfunc B() int {\n\treturn 2\n}\n",
		"c.go":   "package m\n\nfunc C() int {\n\treturn 3\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(cs.dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	gitEnv := append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+cs.dir)
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = cs.dir, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	for _, name := range []string{"a.go", "b.go", "c.go"} {
		os.WriteFile(filepath.Join(cs.dir, name), []byte(strings.Replace(files[name], "return", "return 10 *", 1)), 0o644)
	}
	var reply struct {
		Job string `json:"job"`
	}
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.review", "workDoneToken": "r1", "arguments": []any{map[string]any{"diff": true}},
	}, &reply); err != nil || reply.Job == "" {
		t.Fatalf("kimi.review diff: %v", err)
	}
	end := (&jobSession{session: cs.session}).progressEnd(`"r1"`)
	if asked := q.list(); len(asked) != 1 {
		t.Errorf("asked %d times (%q), want once: Cancel stops the review", len(asked), asked)
	}
	if n := len(cs.prov.Requests()); n != 0 {
		t.Errorf("%d requests at the stand-in, want 0", n)
	}
	if !strings.Contains(end, "not sent") {
		t.Errorf("progress ended %q", end)
	}
	t.Logf("end: %s", end)
}

// TestReviewChangesBudgetSpentAsksOnce (#30.7): a review of changes whose
// budget is spent after its first file asks once whether to send, for
// every file left — "Send" sends them all without asking again (before,
// each changed file asked, and "Send" had to be pressed once per file).
func TestReviewChangesBudgetSpentAsksOnce(t *testing.T) {
	gittest.Hermetic(t)
	gittest.Need(t)
	dear := map[string]any{"input": 1000, "cachedRead": 1000, "write5m": 1000, "write1h": 1000}
	// confirmAbove is raised out of the way: only the spent budget asks.
	cs, q := newSpendSession(t, map[string]any{"budget": map[string]any{"hourly": 0.01, "confirmAbove": 1000},
		"prices": map[string]any{"kimi-k3.1-pro": dear, "kimi-k3.1-pro-highspeed": dear}}, "Send")
	files := map[string]string{
		"go.mod": "module example.com/m\n",
		"a.go":   "package m\n\nfunc A() int {\n\treturn 1\n}\n",
		"b.go":   "package m\n\nfunc B() int {\n\treturn 2\n}\n",
		"c.go":   "package m\n\nfunc C() int {\n\treturn 3\n}\n",
		"d.go":   "package m\n\nfunc D() int {\n\treturn 4\n}\n",
	}
	gittest.Repo(t, cs.dir, files, "")
	for _, name := range []string{"a.go", "b.go", "c.go", "d.go"} {
		os.WriteFile(filepath.Join(cs.dir, name), []byte(strings.Replace(files[name], "return", "return 10 *", 1)), 0o644)
	}
	var reply struct {
		Job string `json:"job"`
	}
	if err := cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
		"command": "kimi.review", "workDoneToken": "r1", "arguments": []any{map[string]any{"diff": true}},
	}, &reply); err != nil || reply.Job == "" {
		t.Fatalf("kimi.review diff: %v", err)
	}
	end := (&jobSession{session: cs.session}).progressEnd(`"r1"`)
	asked := q.list()
	// The first file's estimate already passes what is left (#30.6: it
	// asks before it is sent, "more than is left"), or the budget is
	// spent after it: either way one question, for the whole review.
	if len(asked) != 1 || !strings.Contains(asked[0], "hourly budget of $0.0100") || !strings.Contains(asked[0], "holds for every file of this review of changes") {
		t.Errorf("asked %d times (%q), want once for the review", len(asked), asked)
	}
	if n := len(cs.prov.Requests()); n != 4 {
		t.Errorf("%d requests at the stand-in, want 4 (one per changed file); ended %q", n, end)
	}
}
