// Command nullserver is the least a language server in Go can be: it
// answers initialize with empty capabilities and shutdown with null,
// ignores notifications, and exits on exit or at the end of its input.
// bench/startup runs it beside kimi-lsp, so that kimi-lsp's start-up is
// stated as a multiple of what any Go server pays (the runtime's start,
// the pipes, one JSON round trip):
//
//	go build -o /tmp/nullserver ./bench/nullserver
//	go run ./bench/startup -server null=/tmp/nullserver -server kimi-lsp=/tmp/kimi-lsp -buffers 8 -edits 2000 -n 21
//
// It answers every other request with an error (method not found), as a
// server without features would, so bench/startup's closing request is
// answered too.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

func main() {
	r := bufio.NewReader(os.Stdin)
	w := bufio.NewWriter(os.Stdout)
	for {
		body, err := read(r)
		if err != nil {
			return
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		if m.Method == "exit" {
			return
		}
		if len(m.ID) == 0 {
			continue // a notification
		}
		var reply string
		switch m.Method {
		case "initialize":
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"capabilities":{}}}`, m.ID)
		case "shutdown":
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":null}`, m.ID)
		default:
			reply = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32601,"message":"method not found"}}`, m.ID)
		}
		fmt.Fprintf(w, "Content-Length: %d\r\n\r\n%s", len(reply), reply)
		if w.Flush() != nil {
			return
		}
	}
}

// read reads one Content-Length frame's body.
func read(r *bufio.Reader) ([]byte, error) {
	n := -1
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length:"); ok {
			n, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	if n < 0 || n > 1<<28 {
		return nil, fmt.Errorf("bad frame length %d", n)
	}
	body := make([]byte, n)
	_, err := io.ReadFull(r, body)
	return body, err
}
