package tools_test

import (
	"context"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
)

// TestReadsCountWhatResultsQuote (#25.2): the files whose text a tool
// result carries to the provider are listed with the bytes carried:
// read_file's text, and the lines of the file a refused edit quotes (the
// nearest lines, for the model to copy) — before, a refused edit of a file
// the prompt did not hold sent its lines unlisted.
func TestReadsCountWhatResultsQuote(t *testing.T) {
	body := "package m\n\n// QUOTED-LINE-MARK\nfunc F() int {\n\treturn 1\n}\n"
	x, _ := newExecutor(t, map[string]string{"m.go": body, "r.go": "package m\n"})
	res := x.Call(tools.ReplaceText, `{"path":"m.go","old_text":"func F() int {\n\treturn 2\n}","new_text":"x"}`)
	if !res.IsError || !strings.Contains(res.Content, "QUOTED-LINE-MARK") {
		t.Fatalf("the refused edit does not quote the file: %s", res.Content)
	}
	x.Call(tools.ReadFile, `{"path":"r.go"}`)
	got := map[string]int{}
	for _, r := range x.Reads() {
		got[r.Path] = r.Bytes
	}
	if got["m.go"] == 0 || got["m.go"] > len(body)+10 || got["r.go"] != len("package m\n") {
		t.Errorf("reads %v: want m.go with the bytes its refusal quoted, r.go with its %d bytes", x.Reads(), len("package m\n"))
	}
}

// TestReadsCountARefusedReplyDiff: the correction asked after a refused
// reply diff quotes the file's nearest lines too; they are listed.
func TestReadsCountARefusedReplyDiff(t *testing.T) {
	body := "package m\n\n// QUOTED-LINE-MARK\nfunc F() int {\n\treturn 1\n}\n"
	x, _ := newExecutor(t, map[string]string{"m.go": body})
	m := &scripted{replies: []string{
		"```diff\n--- a/m.go\n+++ b/m.go\n@@ -4,3 +4,3 @@\n func F() int {\n-\treturn 2\n+\treturn 3\n }\n```",
		"```diff\n--- a/m.go\n+++ b/m.go\n@@ -4,3 +4,3 @@\n func F() int {\n-\treturn 1\n+\treturn 3\n }\n```",
	}}
	if _, err := tools.Loop(context.Background(), m, &model.Request{Model: "m", Messages: []model.Message{model.UserMessage("fix")}}, x,
		tools.LoopOptions{ReplyDiff: true, DiffRetries: 1}); err != nil {
		t.Fatal(err)
	}
	if len(m.got) != 2 || !strings.Contains(m.got[1], "QUOTED-LINE-MARK") {
		t.Fatalf("the correction does not quote the file (%d requests)", len(m.got))
	}
	if r := x.Reads(); len(r) != 1 || r[0].Path != "m.go" || r[0].Bytes == 0 {
		t.Errorf("reads %v, want m.go with the bytes the correction quoted", r)
	}
}

// scripted answers each request with the next reply, keeping what the
// last message of each request said.
type scripted struct {
	replies []string
	got     []string
}

func (s *scripted) Complete(_ context.Context, req *model.Request) (*model.Response, error) {
	s.got = append(s.got, req.Messages[len(req.Messages)-1].Content)
	r := s.replies[min(len(s.got)-1, len(s.replies)-1)]
	return &model.Response{Message: model.Message{Role: "assistant", Content: r}, FinishReason: model.FinishStop}, nil
}
