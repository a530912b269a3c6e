package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

// TestRun starts the stand-in as the editor tests do: one URL line on
// stdout, requests served from the script and logged, exit when stdin
// closes.
func TestRun(t *testing.T) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdinR.Close()
	outR, outW := io.Pipe()
	logPath := filepath.Join(t.TempDir(), "requests.jsonl")
	done := make(chan error, 1)
	go func() {
		done <- run([]string{"-key", "k-test-1", "-script", "testdata/editor.json", "-log", logPath}, stdinR, outW, io.Discard)
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("first line %q", line)
	}
	go io.Copy(io.Discard, outR) // nothing else may be printed, but do not block

	body := `{"model":"kimi-k3.1-pro","messages":[{"role":"user","content":"Fix the bug"}]}`
	req, _ := http.NewRequest(http.MethodPost, url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer k-test-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var reply struct {
		Choices []struct{ Message struct{ Content string } }
	}
	json.NewDecoder(resp.Body).Decode(&reply)
	resp.Body.Close()
	if len(reply.Choices) != 1 || !strings.Contains(reply.Choices[0].Message.Content, "+\treturn a + b") {
		t.Errorf("reply %+v", reply)
	}

	stdinW.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("did not stop when stdin closed")
	}
	log, _ := os.ReadFile(logPath)
	if strings.TrimSpace(string(log)) != body {
		t.Errorf("log %q", log)
	}
}

// TestEditorScript: the script the editor tests use is valid.
func TestEditorScript(t *testing.T) {
	if _, err := modeltest.LoadScript("testdata/editor.json"); err != nil {
		t.Fatal(err)
	}
}

func TestRunBadFlags(t *testing.T) {
	for _, args := range [][]string{{"-script", "testdata/missing.json"}, {"-nope"}, {"extra"}} {
		if err := run(args, os.Stdin, io.Discard, io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
}
