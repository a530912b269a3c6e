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
