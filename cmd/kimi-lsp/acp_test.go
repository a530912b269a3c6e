package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestACPCommandAndFlag: "kimi-lsp acp" and "kimi-lsp --acp" both speak
// ACP on stdout — the initialize reply is the first line, nothing else is
// written there — and end when stdin does.
func TestACPCommandAndFlag(t *testing.T) {
	for _, args := range [][]string{{"acp"}, {"--acp"}, {"--acp", "--log-level", "debug"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			var stderr syncBuffer
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, args, inR, outW, &stderr, func(string) string { return "" })
				outW.Close()
			}()
			if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`+"\n"); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(outR)
			if !sc.Scan() {
				t.Fatalf("no reply; stderr %s", stderr.String())
			}
			var reply struct {
				ID     int `json:"id"`
				Result struct {
					ProtocolVersion int `json:"protocolVersion"`
					AgentInfo       struct {
						Name string `json:"name"`
					} `json:"agentInfo"`
				} `json:"result"`
			}
			if err := json.Unmarshal(sc.Bytes(), &reply); err != nil || reply.ID != 1 || reply.Result.ProtocolVersion != 1 || reply.Result.AgentInfo.Name != "kimi-lsp" {
				t.Fatalf("reply %s (%v)", sc.Bytes(), err)
			}
			inW.Close()
			if sc.Scan() {
				t.Errorf("more on stdout: %s", sc.Bytes())
			}
			if code := <-done; code != 0 {
				t.Errorf("exit %d; stderr %s", code, stderr.String())
			}
		})
	}
}

// syncBuffer is a strings.Builder safe for the command's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
