package assist_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/cache"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// minified returns one line of about n bytes of distinct statements (each
// unit names its index, so a repeated part of the line can be counted).
func minified(n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "var v%d=f(%d);", i, i)
	}
	return b.String()
}

// TestExplainInsideHugeLine: an explain with a selection inside a one-line
// file of 900 KB (under context.maxFileSize: shown whole) and of 2 MB (over
// it: cut to a window) sends the file's text at most once, and the prompt
// stays within what the file's shown part, the context budget and the
// request take; the request block used to repeat the whole line.
func TestExplainInsideHugeLine(t *testing.T) {
	for _, size := range []int{900 << 10, 2 << 20} {
		t.Run(fmt.Sprint(size>>10, "KB"), func(t *testing.T) {
			line := minified(size)
			f := newFixture(t, map[string]string{"min.js": line + "\n"},
				modeltest.Rule{Match: `action="explain"`, Content: "It calls f."})
			docs := workspace.NewDocuments()
			uri := workspace.FileURI(filepath.Join(f.dir, "min.js"))
			if err := docs.Open(uri, "javascript", 1, line+"\n"); err != nil {
				t.Fatal(err)
			}
			snap, _ := docs.Snapshot(uri)
			sel := "var v5000=f(5000);"
			start := strings.Index(line, sel)
			tk, err := assist.BuildTask(f.cfg, f.folders, assist.TaskRequest{
				Action: config.ActionExplain, Document: snap, Start: start, End: start + len(sel), Open: []*workspace.Snapshot{snap},
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.engine.Run(context.Background(), *tk, &recorder{}); err != nil {
				t.Fatal(err)
			}
			reqs := f.srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			body := reqs[0].Body
			t.Logf("request body %d bytes, prompt %d bytes, %d tokens at the stand-in", len(body), len(reqs[0].Prompt), reqs[0].Usage.PromptTokens)
			// The request block repeats the selection with a little of the
			// line around it, not the line.
			prompt := string(reqs[0].Prompt)
			tail := prompt[strings.LastIndex(prompt, "<request action="):]
			if max := len(sel) + 2*cache.DefaultWindowBytes + 1024; len(tail) > max {
				t.Errorf("the request block is %d bytes, want at most %d", len(tail), max)
			}
			shown := min(len(line), int(config.DefaultMaxFileSize))
			overhead := int(float64(assist.ContextBudget(f.cfg.Context.MaxTokens)+4000) * cache.DefaultCharsPerToken)
			if len(body) > shown+overhead {
				t.Errorf("request body of %d bytes for a file shown in %d bytes: over the budget of %d bytes besides it", len(body), shown, overhead)
			}
			if !strings.Contains(tail, "<|selection|>"+sel+"<|/selection|>") {
				t.Errorf("the request block does not mark the selection")
			}
		})
	}
}
