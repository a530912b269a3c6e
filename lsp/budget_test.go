package lsp

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/cache"
)

// budgetPrice is the explain model's price in TestSixteenExplainsAtOnce,
// per million tokens: the default input prices, a cheap output, so that
// one Explain of a realistic prompt is estimated at a fraction of the
// hourly budget and a few fit, not none.
var budgetPrice = cache.Price{Input: 2, CachedInput: 0.2, CacheWrite5m: 2, CacheWrite1h: 4, Output: 0.5}

// standInSpend is what the requests that reached the stand-in cost at
// price, by the usage the stand-in reported for each.
func standInSpend(reqs []modeltest.Request, price cache.Price) float64 {
	var sum float64
	for _, r := range reqs {
		in, out := price.Cost(cache.Usage{PromptTokens: r.Usage.PromptTokens, CachedTokens: r.Usage.CachedTokens,
			CacheWriteTokens: r.Usage.CacheWriteTokens, CompletionTokens: r.Usage.CompletionTokens}, false)
		sum += in + out
	}
	return sum
}

// sourceFile is a Go file of n functions, 150 bytes each, so that an
// Explain's prompt is of a realistic size (the system text and tools, the
// file, the selection): function i is on lines 2+7i to 8+7i.
func sourceFile(n int) string {
	var b strings.Builder
	b.WriteString("package main\n\n")
	for i := range n {
		fmt.Fprintf(&b, "// sum%d adds the xs that keep takes.\nfunc sum%d(xs []int, keep func(int) bool) (t int) {\n\tfor _, x := range xs {\n\t\tif keep(x) { t += x * %d }\n\t}\n\treturn t\n}\n", i, i, i+1)
	}
	return b.String() + "|"
}

// TestSixteenExplainsAtOnce (#30.6): sixteen Explains started at once
// under budget.hourly = 0.01 spend, at the provider stand-in, at most the
// cap when the editor answers Cancel: each request reserves its estimate
// when it leaves the queue, so the requests in flight see each other, and
// those that would pass what is left ask first (and are not sent). With
// the editor answering Send they are all sent. Before (main at d3fa826)
// the budget was checked before the queue, against the settled spend only:
// all sixteen went out without a question, $0.0213 against the $0.01 cap.
func TestSixteenExplainsAtOnce(t *testing.T) {
	const n, hourly = 16, 0.01
	for _, answer := range []string{"Cancel", "Send"} {
		t.Run(answer, func(t *testing.T) {
			cs, q := newSpendSession(t, map[string]any{
				"budget": map[string]any{"hourly": hourly},
				"prices": map[string]any{"kimi-k3.1-pro-highspeed": map[string]any{
					"input": budgetPrice.Input, "cachedRead": budgetPrice.CachedInput, "write5m": budgetPrice.CacheWrite5m,
					"write1h": budgetPrice.CacheWrite1h, "output": budgetPrice.Output}},
			}, answer)
			uri, _ := cs.file("sums.go", sourceFile(n))
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var reply struct {
						Job string `json:"job"`
					}
					errs[i] = cs.ed.Call(ctxT(t), "workspace/executeCommand", map[string]any{
						"command": "kimi.explain", "workDoneToken": fmt.Sprintf("x%d", i),
						"arguments": []any{map[string]any{"uri": uri, "range": rng(2+7*i, 0, 8+7*i, 1)}},
					}, &reply)
				}()
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Fatalf("kimi.explain %d: %v", i, err)
				}
			}
			js := &jobSession{session: cs.session}
			notSent := 0
			for i := range n {
				if end := js.progressEnd(fmt.Sprintf(`"x%d"`, i)); strings.Contains(end, "not sent") {
					notSent++
				}
			}
			reqs := cs.prov.Requests()
			spent := standInSpend(reqs, budgetPrice)
			st := cs.srv.stats().Spend
			t.Logf("answer %s: %d of %d sent, %d not sent, %d asked; $%.4f at the stand-in (the server recorded $%.4f, holds $%.4f)",
				answer, len(reqs), n, notSent, len(q.list()), spent, st.Hour.Spent, st.Hour.Held)
			if asked := q.list(); len(asked) > 0 {
				t.Logf("the first question: %s", asked[0])
			}
			if st.Hour.Held != 0 {
				t.Errorf("$%v still held after every job ended", st.Hour.Held)
			}
			switch answer {
			case "Cancel":
				if spent > hourly {
					t.Errorf("%d requests reached the stand-in, $%.4f: more than budget.hourly $%.2f without the user's Send", len(reqs), spent, hourly)
				}
				if len(reqs) == 0 || len(reqs) == n {
					t.Errorf("%d of %d sent: want those that fit (some, not all)", len(reqs), n)
				}
				if asked := q.list(); len(asked) != n-len(reqs) || notSent != len(asked) {
					t.Errorf("%d asked, %d not sent, %d sent: every request not sent must have asked", len(asked), notSent, len(reqs))
				} else if len(asked) == 0 || !strings.Contains(asked[0], "more than is left of the hourly budget") {
					t.Errorf("questions %q", asked)
				}
			case "Send":
				if len(reqs) != n || notSent != 0 {
					t.Errorf("answered Send: %d of %d sent, %d not sent", len(reqs), n, notSent)
				}
			}
		})
	}
}

// TestUnkeptRecordTold (#30.7): a requests.jsonl that is a FIFO keeps
// nothing, so the budgets count this session only: the server tells the
// user once (window/showMessage), however many requests go unrecorded.
func TestUnkeptRecordTold(t *testing.T) {
	cs, _ := newSpendSession(t, nil, "Send")
	if err := syscall.Mkfifo(filepath.Join(cs.spendDir, spend.FileName), 0o600); err != nil {
		t.Fatal(err)
	}
	uri, _ := cs.file("main.go", "package main\n\nfunc add(a, b int) int {\n\treturn a + b|\n}\n")
	cs.explain(uri, "e1")
	cs.change(uri, "package main\n\nfunc add(a, b int) int {\n\treturn b + a|\n}\n")
	cs.explain(uri, "e2")
	if n := len(cs.prov.Requests()); n != 2 {
		t.Fatalf("%d requests at the stand-in, want 2", n)
	}
	var told []string
	for _, m := range cs.messages() {
		if strings.Contains(m, "count this session's spend only") {
			told = append(told, m)
		}
	}
	if len(told) != 1 || !strings.Contains(told[0], "is a FIFO") {
		t.Errorf("told %q, want once, naming the FIFO (messages %q)", told, cs.messages())
	}
}
