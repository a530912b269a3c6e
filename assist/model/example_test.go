package model_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// Streaming an answer: text arrives as events while the model writes.
func ExampleClient_Stream() {
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Default: &modeltest.Rule{
		Reasoning: "Simple question.", Content: "Prefix caching reuses the unchanged start of a prompt.", Chunks: 3,
	}}})
	defer srv.Close()

	c := model.New(model.Options{BaseURL: srv.URL, APIKey: srv.Key})
	s, err := c.Stream(context.Background(), &model.Request{
		Model:               model.ModelHighspeed,
		Messages:            []model.Message{model.UserMessage("What is prefix caching?")},
		ReasoningEffort:     model.EffortLow,
		MaxCompletionTokens: 4096,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	var acc model.Accumulator
	for ev, err := range s.Events() {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Kind == model.EventContent {
			fmt.Printf("%q\n", ev.Text)
		}
		acc.Add(ev)
	}
	fmt.Println(acc.FinishReason(), acc.Usage().ReasoningTokens > 0)
	// Output:
	// "Prefix caching reu"
	// "ses the unchanged "
	// "start of a prompt."
	// stop true
}

// A web search turn: the provider asks for its built-in $web_search; the
// client sends the call's arguments back as the tool result and asks again.
func ExampleRequest_AnswerBuiltinCalls() {
	srv := modeltest.NewServer(modeltest.Config{Script: &modeltest.Script{Rules: []modeltest.Rule{
		{LastRole: "tool", Content: "The official homepage is https://www.kimi.com."},
		{Match: "web search", Reasoning: "I need to search.", ToolCalls: []modeltest.ScriptToolCall{
			{Type: "builtin_function", Name: "$web_search", Arguments: `{"search_result":{"search_id":"s1"}}`}}},
	}}})
	defer srv.Close()
	c := model.New(model.Options{BaseURL: srv.URL, APIKey: srv.Key})

	req := &model.Request{
		Model:    model.ModelPro,
		Messages: []model.Message{model.UserMessage("Use web search to find the official Kimi homepage URL.")},
		Tools:    []model.Tool{model.WebSearchTool()},
	}
	for turn := 0; turn < 4; turn++ {
		resp, err := c.Complete(context.Background(), req)
		if err != nil {
			fmt.Println(err)
			return
		}
		if resp.FinishReason != model.FinishToolCalls {
			fmt.Println(strings.TrimSpace(resp.Message.Content))
			return
		}
		req.AppendAssistant(resp.Message)
		fmt.Println("answered", req.AnswerBuiltinCalls(), "builtin call(s)")
	}
	// Output:
	// answered 1 builtin call(s)
	// The official homepage is https://www.kimi.com.
}
