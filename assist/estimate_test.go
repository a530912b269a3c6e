package assist_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
)

// TestEstimateFollowsRecentAnswers (#33 item 6): after three explains of a
// real-size file (net/http's cookie.go), the question before the fourth
// names an estimate within 3× of what the fourth then cost, and says on
// what it is based; the first, with no answer recorded, says it assumed
// the default. With the old fixed 4,096 output tokens the fourth's
// estimate was about 10× its cost.
func TestEstimateFollowsRecentAnswers(t *testing.T) {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(goroot)), "src", "net", "http", "cookie.go"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(src)
	if n := strings.Count(text, "\n"); n < 300 {
		t.Fatalf("cookie.go has %d lines; the test wants a real-size file", n)
	}
	f := newFixture(t, map[string]string{"go.mod": "module example.com/m\n", "cookie.go": text})
	answer := modeltest.Rule{Reasoning: strings.Repeat("The reader checks each attribute in turn. ", 40),
		Content: strings.Repeat("It parses one cookie attribute and keeps the valid ones. ", 25)}
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{answer}}})
	defer srv.Close()
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, _ := config.Default().WithEnv(func(k string) string { return env[k] })
	cfg.Budget.ConfirmAbove = 1e-9 // every request asks: the question is what is looked at
	rec, err := spend.Open(filepath.Join(t.TempDir(), "kimi-lsp"), spend.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lg := provider.NewLedger(rec, cfg.Budget, nil)
	defer lg.Close()
	var questions []string
	engine, err := assist.NewEngine(assist.Options{Config: cfg, ExplanationDir: t.TempDir(), Ledger: lg,
		Confirm: func(ctx context.Context, q string) bool { questions = append(questions, q); return true }})
	if err != nil {
		t.Fatal(err)
	}
	for i, fn := range []string{"func readSetCookies", "func (c *Cookie) String", "func (c *Cookie) Valid", "func readCookies"} {
		task, err := engine.BuildTask(cfg, f.folders, f.request(config.ActionExplain, "cookie.go", fn, "\n}\n"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := engine.Run(context.Background(), *task, &recorder{}); err != nil {
			t.Fatalf("explain %d: %v", i+1, err)
		}
	}
	if len(questions) != 4 {
		t.Fatalf("%d questions asked, want one per explain: %q", len(questions), questions)
	}
	if !strings.Contains(questions[0], "4,096 output tokens assumed: no explain answer recorded yet") {
		t.Errorf("the first question does not say it assumed the default: %q", questions[0])
	}
	if !strings.Contains(questions[3], "as the median of the last 3 explain answers") {
		t.Errorf("the fourth question does not name its basis: %q", questions[3])
	}
	m := regexp.MustCompile(`estimated at \$([0-9.]+)`).FindStringSubmatch(questions[3])
	if m == nil {
		t.Fatalf("no estimate in %q", questions[3])
	}
	est, _ := strconv.ParseFloat(m[1], 64)
	recs, err := lg.Records(1)
	if err != nil || len(recs) != 1 {
		t.Fatalf("records: %v %v", recs, err)
	}
	cost := recs[0].CostUSD
	if cost <= 0 || est > 3*cost || est < cost/3 {
		t.Errorf("the fourth explain was estimated at $%.4f and cost $%.4f: not within 3×", est, cost)
	}
	t.Logf("fourth explain: estimated $%.4f, cost $%.4f (%d prompt, %d cached, %d output tokens)", est, cost,
		recs[0].PromptTokens, recs[0].CachedTokens, recs[0].OutputTokens)
}
