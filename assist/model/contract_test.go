package model_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// seedRequests builds, with the package's API, each request example of the
// seed OpenAPI text.
func seedRequests() map[string]*model.Request {
	ok := []model.Message{model.UserMessage("Reply with OK.")}
	base := func(m string, msgs []model.Message) *model.Request {
		return &model.Request{Model: m, Messages: msgs, ReasoningEffort: model.EffortLow, MaxCompletionTokens: 1024}
	}
	strict := true
	structured := base(model.ModelPro, []model.Message{model.UserMessage("Return a JSON object with result equal to OK.")})
	structured.ResponseFormat = &model.ResponseFormat{Type: "json_schema", JSONSchema: &model.JSONSchema{
		Name: "result", Strict: &strict,
		Schema: json.RawMessage(`{"type":"object","properties":{"result":{"type":"string"}},"required":["result"],"additionalProperties":false}`),
	}}
	web := base(model.ModelPro, []model.Message{model.UserMessage("Use web search to find the official Kimi homepage URL.")})
	web.Tools = []model.Tool{model.WebSearchTool()}
	cache := base(model.ModelPro, ok)
	cache.PromptCache = model.ImplicitCache("1h")
	streaming := base(model.ModelPro, ok)
	streaming.Stream = true
	return map[string]*model.Request{
		"simple":            base(model.ModelPro, ok),
		"highspeed":         base(model.ModelHighspeed, ok),
		"streaming":         streaming,
		"cache_1h":          cache,
		"web_search":        web,
		"structured_output": structured,
		"function_calling": {
			Model:    model.ModelPro,
			Messages: []model.Message{model.UserMessage("查询北京今天的天气。")},
			Tools: []model.Tool{model.FunctionTool("get_weather", "查询指定城市的天气",
				json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"城市名称"}},"required":["city"]}`))},
			ToolChoice: model.ToolChoiceAuto,
		},
	}
}

func readSeed(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "seed", name))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSpace(b)
}

// TestSeedExamplesMarshal: the body we marshal for each seed example is
// byte for byte the example (same keys, same order, nothing added).
func TestSeedExamplesMarshal(t *testing.T) {
	for name, req := range seedRequests() {
		t.Run(name, func(t *testing.T) {
			got, err := req.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			if want := readSeed(t, name+".json"); !bytes.Equal(got, want) {
				t.Errorf("body differs from the seed example\ngot  %s\nwant %s", got, want)
			}
			// And it reads back to the same request.
			var back model.Request
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			again, _ := back.Marshal()
			if !bytes.Equal(again, got) {
				t.Errorf("round trip changed the body:\n%s\n%s", again, got)
			}
		})
	}
}

// TestSeedExamplesOverTheWire sends each example through the client to the
// stand-in, which validates it as the seed's schema does; what arrives is
// the example.
func TestSeedExamplesOverTheWire(t *testing.T) {
	srv := modeltest.NewServer(modeltest.Config{})
	defer srv.Close()
	c := model.New(model.Options{BaseURL: srv.URL, APIKey: srv.Key})
	ctx := context.Background()
	for name, req := range seedRequests() {
		t.Run(name, func(t *testing.T) {
			srv.Reset()
			var resp *model.Response
			var err error
			if req.Stream {
				var s *model.Stream
				if s, err = c.Stream(ctx, req); err == nil {
					resp, err = model.Collect(s)
				}
			} else {
				resp, err = c.Complete(ctx, req)
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.Message.Content != "OK" || resp.FinishReason != model.FinishStop || resp.Usage == nil {
				t.Errorf("got reply %+v", resp)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("stand-in saw %d requests, want 1", len(reqs))
			}
			if want := readSeed(t, name+".json"); !bytes.Equal(reqs[0].Body, want) {
				t.Errorf("stand-in received\n%s\nwant\n%s", reqs[0].Body, want)
			}
		})
	}
}

// TestSeedSampleReply: the quick-start's sample reply parses with its
// content, reasoning and usage.
func TestSeedSampleReply(t *testing.T) {
	body := readSeed(t, "reply_003.json")
	resp, err := model.Collect(model.NewStreamReader(nopCloser{bytes.NewReader(body)}, true))
	if err != nil {
		t.Fatal(err)
	}
	want := model.Usage{PromptTokens: 24, CompletionTokens: 96, TotalTokens: 120, CachedTokens: 0, ReasoningTokens: 62}
	if resp.Usage == nil || *resp.Usage != want {
		t.Errorf("usage = %+v, want %+v", resp.Usage, want)
	}
	if got := resp.Usage.UncachedTokens(); got != 24 {
		t.Errorf("uncached tokens = %d, want 24", got)
	}
	if resp.ID != "chatcmpl-6adc72a2823cc13b156bf863" || resp.Model != model.ModelPro || resp.Created != 1792832163 {
		t.Errorf("id/model/created = %q %q %d", resp.ID, resp.Model, resp.Created)
	}
	if !strings.HasPrefix(resp.Message.Content, "上下文缓存会保存") || !strings.HasPrefix(resp.Message.ReasoningContent, "用户想用一句话") {
		t.Errorf("message = %+v", resp.Message)
	}
	if resp.FinishReason != model.FinishStop || resp.Message.Role != model.RoleAssistant {
		t.Errorf("finish = %q, role = %q", resp.FinishReason, resp.Message.Role)
	}
}

// TestSeedErrorBody: the seed's error body, answered with each status the
// seed lists, becomes an APIError with its fields and the right sentinel.
func TestSeedErrorBody(t *testing.T) {
	body := readSeed(t, "error_003.json")
	for _, tc := range []struct {
		status int
		want   error
	}{{400, model.ErrBadRequest}, {401, model.ErrUnauthorized}, {429, model.ErrRateLimited}, {500, model.ErrServer}} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tc.status)
			w.Write(body)
		}))
		c := model.New(model.Options{BaseURL: hs.URL, APIKey: "sk-seed-test", MaxAttempts: 1})
		_, err := c.Complete(context.Background(), &model.Request{Model: model.ModelPro, Messages: []model.Message{model.UserMessage("hi")}})
		hs.Close()
		var apiErr *model.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("%d: got %v, want an APIError", tc.status, err)
		}
		if apiErr.StatusCode != tc.status || apiErr.Message != "<string>" || apiErr.Type != "<string>" || apiErr.Code != "<string>" {
			t.Errorf("%d: got %+v", tc.status, apiErr)
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("%d: error %v is not %v", tc.status, err, tc.want)
		}
	}
}

type nopCloser struct{ *bytes.Reader }

func (nopCloser) Close() error { return nil }
