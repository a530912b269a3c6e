package main

import (
	"strings"
	"testing"
)

func TestServerFlag(t *testing.T) {
	var s serverFlags
	if err := s.Set("copilot=/x/copilot-language-server --stdio"); err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || s[0].name != "copilot" || strings.Join(s[0].argv, "|") != "/x/copilot-language-server|--stdio" {
		t.Errorf("got %+v", s)
	}
	for _, bad := range []string{"", "name", "=cmd", "name=", "name=   "} {
		if err := s.Set(bad); err == nil {
			t.Errorf("Set(%q): no error", bad)
		}
	}
}

func TestLimitedBufferKeepsTheEnd(t *testing.T) {
	b := &limitedBuffer{max: 8}
	b.Write([]byte("0123456789"))
	b.Write([]byte("ab"))
	if got := b.tail(100); got != "456789ab" {
		t.Errorf("tail = %q, want the last 8 bytes", got)
	}
	if got := b.tail(3); got != "9ab" {
		t.Errorf("tail(3) = %q", got)
	}
}

func TestServerFlagEnv(t *testing.T) {
	var s serverFlags
	if err := s.Set("ha=OPENAI_API_KEY=sk-x FOO=1 /tmp/helix-assist --flag a=b"); err != nil {
		t.Fatal(err)
	}
	if strings.Join(s[0].env, "|") != "OPENAI_API_KEY=sk-x|FOO=1" || strings.Join(s[0].argv, "|") != "/tmp/helix-assist|--flag|a=b" {
		t.Errorf("got %+v", s[0])
	}
	if err := s.Set("only=A=B"); err == nil {
		t.Errorf("a server with an environment but no command was accepted")
	}
}

// TestTypist: the incremental changes and the full texts agree, and a
// burst typed then deleted leaves the text as it was.
func TestTypist(t *testing.T) {
	texts := []string{"package a\n\nfunc A() {}\n", "package b\n// é😀\nvar x = 1\n\n"}
	uris := []string{"file:///a.go", "file:///b.go"}
	inc, full := newTypist(uris, texts, false), newTypist(uris, texts, true)
	applied := append([]string(nil), texts...)
	for i := 0; i < 4*2*burst; i++ {
		p, f := inc.next(), full.next()
		b := 0
		if p["textDocument"].(map[string]any)["uri"] == uris[1] {
			b = 1
		}
		c := p["contentChanges"].([]any)[0].(map[string]any)
		r := c["range"].(map[string]any)
		line := r["start"].(map[string]any)["line"].(int)
		c1, c2 := r["start"].(map[string]any)["character"].(int), r["end"].(map[string]any)["character"].(int)
		st := lineStart(applied[b], line)
		applied[b] = applied[b][:st+c1] + c["text"].(string) + applied[b][st+c2:]
		if got := f["contentChanges"].([]any)[0].(map[string]any)["text"]; got != applied[b] {
			t.Fatalf("change %d: full text %q, incremental gives %q", i, got, applied[b])
		}
		if v := p["textDocument"].(map[string]any)["version"]; v != f["textDocument"].(map[string]any)["version"] {
			t.Fatalf("versions differ: %v", v)
		}
	}
	for i := range texts {
		if applied[i] != texts[i] {
			t.Errorf("buffer %d after whole bursts: %q, want the original", i, applied[i])
		}
	}
}
