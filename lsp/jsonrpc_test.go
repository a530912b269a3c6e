package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
)

func TestEncodeResponse(t *testing.T) {
	tests := []struct {
		id     string
		result any
		err    error
		want   string
	}{
		{`7`, map[string]int{"a": 1}, nil, `{"jsonrpc":"2.0","id":7,"result":{"a":1}}`},
		{`4294967296`, nil, nil, `{"jsonrpc":"2.0","id":4294967296,"result":null}`},
		{`"x\u0079"`, json.RawMessage(`[1]`), nil, `{"jsonrpc":"2.0","id":"x\u0079","result":[1]}`},
		{`1e3`, nil, rpcError(codeInvalidParams, "bad %s", "thing"), `{"jsonrpc":"2.0","id":1e3,"error":{"code":-32602,"message":"bad thing"}}`},
		// A plain error is an internal error, never code 0 (PITFALLS #5).
		{`2`, nil, errors.New("boom"), `{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"boom"}}`},
		{`3`, func() {}, nil, `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"cannot encode the result: json: unsupported type: func()"}}`},
	}
	for _, tt := range tests {
		got, err := encodeResponse(json.RawMessage(tt.id), tt.result, tt.err)
		if err != nil || string(got) != tt.want {
			t.Errorf("encodeResponse(%s) = %s, %v; want %s", tt.id, got, err, tt.want)
		}
	}
}

// TestConnCall: our request to the editor gets its result, its error
// (as *rpcErr), and ends when the connection does.
func TestConnCall(t *testing.T) {
	srvIn, edOut := io.Pipe()
	edIn, srvOut := io.Pipe()
	st := newStream(srvIn, srvOut, srvIn, slog.New(slog.DiscardHandler))
	c := newConn(st)
	go c.run(context.Background(), func(context.Context, *request, replier) {})
	edr := bufio.NewReader(edIn)
	answer := func(body string) {
		t.Helper()
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		frame, err := lsptest.ReadFrame(edr)
		if err != nil || json.Unmarshal(frame, &m) != nil {
			t.Errorf("reading our request: %v %s", err, frame)
			return
		}
		reply := `{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + body + `}`
		io.WriteString(edOut, "Content-Length: "+strconv.Itoa(len(reply))+"\r\n\r\n"+reply)
	}

	go answer(`"result":{"applied":true}`)
	var res struct{ Applied bool }
	if err := c.call(context.Background(), "workspace/applyEdit", map[string]any{}, &res); err != nil || !res.Applied {
		t.Fatalf("call = %v, %+v", err, res)
	}

	go answer(`"error":{"code":-32601,"message":"no"}`)
	err := c.call(context.Background(), "client/registerCapability", nil, nil)
	var re *rpcErr
	if !errors.As(err, &re) || re.Code != codeMethodNotFound || re.Message != "no" {
		t.Fatalf("call error = %#v, want the editor's -32601", err)
	}

	done := make(chan error, 1)
	go func() { done <- c.call(context.Background(), "window/showMessageRequest", nil, nil) }()
	if _, err := lsptest.ReadFrame(edr); err != nil {
		t.Fatal(err)
	}
	edOut.Close() // the editor goes away without answering
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("call succeeded on a closed connection")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("call still waiting after the connection ended")
	}
}
