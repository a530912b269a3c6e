package lsp

import (
	"encoding/json"
	"testing"
)

// TestInitializeReplyReadsItemsFromInitOptions: the initialize reply
// advertises completion items as completion.items in initializationOptions
// says, however the key is written (an escape writes "items" too), and the
// options without that key leave it at auto; the reply skips the preview
// of the configuration only when the options cannot name the key
// (mayNameItems).
func TestInitializeReplyReadsItemsFromInitOptions(t *testing.T) {
	for _, tc := range []struct {
		name            string
		inline          bool
		opts            string
		wantCompletions bool
	}{
		{"escaped key, always", true, `{"kimi":{"completion":{"\u0069tems":"always"}}}`, true},
		{"escaped key, never", false, `{"kimi":{"completion":{"it\u0065ms":"never"}}}`, false},
		{"dotted key, always", true, `{"kimi":{"completion.items":"always"}}`, true},
		{"other keys, inline client", true, `{"editorInfo":{"name":"x","version":"1"},"kimi":{"completion":{"debounceMs":100}}}`, false},
		{"other keys, client without inline completion", false, `{"editorInfo":{"name":"x","version":"1"}}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSession(t, nil)
			p := completionInit("", tc.inline, nil)
			p["initializationOptions"] = json.RawMessage(tc.opts)
			caps := s.initialize(p)["capabilities"].(map[string]any)
			if _, ok := caps["completionProvider"]; ok != tc.wantCompletions {
				t.Errorf("completionProvider = %v, want present %v", caps["completionProvider"], tc.wantCompletions)
			}
		})
	}
}

func TestMayNameItems(t *testing.T) {
	for raw, want := range map[string]bool{
		`{"editorInfo":{"name":"vim"}}`:              false,
		`{"kimi":{"completion":{"debounceMs":1}}}`:   false,
		`{"kimi":{"completion":{"items":"never"}}}`:  true,
		`{"completion.items":"always"}`:              true,
		`{"kimi":{"completion":{"\u0069tems":"x"}}}`: true,
		`{"title":"a \"quoted\" word"}`:              true, // an escape: the preview decides
		`[null,{"kimi":{"model":"kimi-k3.1-pro"}}]`:  false,
	} {
		if got := mayNameItems(json.RawMessage(raw)); got != want {
			t.Errorf("mayNameItems(%s) = %v, want %v", raw, got, want)
		}
	}
}
