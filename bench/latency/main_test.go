package main

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestWordsSplitOnePerChunk(t *testing.T) {
	w := words("c", 3)
	if w != "c0001 c0002 c0003 " {
		t.Errorf("words = %q", w)
	}
}

func TestNewest(t *testing.T) {
	for _, c := range []struct {
		msg  string
		kind byte
		n    int
	}{
		{"…c0040 c0041 c0042", 'c', 42},
		{"thinking… r0007 r0008", 'r', 8},
		{"c0001", 'c', 1},
		{"asking kimi-k3.1-pro…", 0, 0},
		{"abc0001", 0, 0}, // not a word of its own
	} {
		k, n := newest(c.msg)
		if k != c.kind || n != c.n {
			t.Errorf("newest(%q) = %c %d, want %c %d", c.msg, k, n, c.kind, c.n)
		}
	}
}

// TestRelay: the relay passes bytes both ways unchanged and notes each
// marker once, also when a write cuts it in two.
func TestRelay(t *testing.T) {
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		c, err := up.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 5)
		io.ReadFull(c, buf) // "hello"
		for _, part := range []string{`data: {"content":"c00`, `01 "}` + "\n\n", `data: {"content":"c0002 "}` + "\n\n", `"c0001 "`} {
			c.Write([]byte(part))
			time.Sleep(20 * time.Millisecond)
		}
	}()
	rl, err := newRelay(up.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Close()
	c, err := net.Dial("tcp", rl.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("hello"))
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if want := `data: {"content":"c0001 "}` + "\n\n" + `data: {"content":"c0002 "}` + "\n\n" + `"c0001 "`; string(got) != want {
		t.Errorf("relayed %q, want %q", got, want)
	}
	arr := rl.arrivals()
	if len(arr) != 2 {
		t.Fatalf("arrivals %v, want c0001 and c0002", arr)
	}
	if !arr["c0001"].Before(arr["c0002"]) {
		t.Errorf("c0001 at %v, not before c0002 at %v (the later repeat must not count)", arr["c0001"], arr["c0002"])
	}
	if strings.Contains(string(got), "hello") {
		t.Errorf("the request came back")
	}
}
