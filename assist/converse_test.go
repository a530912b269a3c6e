package assist_test

import (
	"context"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestCloseTurnMakesTheNextRequestValid: a conversation a cancel left with
// tool calls unanswered, or a user message without a reply, is closed so
// that the provider (the stand-in validates as the seed does) accepts the
// next turn, and the messages before stay as they were.
func TestCloseTurnMakesTheNextRequestValid(t *testing.T) {
	srv := modeltest.NewServer(modeltest.Config{})
	t.Cleanup(srv.Close)
	client := model.New(model.Options{BaseURL: srv.URL, APIKey: srv.Key, FallbackURL: "none"})
	call := model.ToolCall{ID: "c1", Type: model.ToolCallTypeFunction, Function: model.FunctionCall{Name: "read_file", Arguments: `{"path":"a.go"}`}}
	for name, msgs := range map[string][]model.Message{
		"pending tool call": {model.SystemMessage("s"), model.UserMessage("read a.go"),
			{Role: model.RoleAssistant, ReasoningContent: "Read it.", ToolCalls: []model.ToolCall{call}}},
		"no answer": {model.SystemMessage("s"), model.UserMessage("a slow answer")},
	} {
		t.Run(name, func(t *testing.T) {
			closed := assist.CloseTurn(msgs, "(cancelled)")
			for i := range msgs {
				if closed[i].Content != msgs[i].Content || closed[i].Role != msgs[i].Role {
					t.Fatalf("message %d changed", i)
				}
			}
			req := &model.Request{Model: model.ModelPro, Messages: append(closed, model.UserMessage("next")), MaxCompletionTokens: 100}
			if _, err := client.Complete(context.Background(), req); err != nil {
				t.Errorf("the next turn is refused: %v", err)
			}
		})
	}
}
