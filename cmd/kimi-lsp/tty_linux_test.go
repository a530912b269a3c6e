package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// openPTY returns a new pseudo-terminal: its controlling side and the
// terminal a process reads as stdin.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pty: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("naming the pty: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ptmx.Close(); tty.Close() })
	return ptmx, tty
}

// TestStdioOnATerminalSaysWhatItIs: "kimi-lsp --stdio" typed in a terminal
// prints one line saying it speaks LSP and how to try it by hand; started
// by an editor (stdin a pipe) it prints nothing.
func TestStdioOnATerminalSaysWhatItIs(t *testing.T) {
	ptmx, tty := openPTY(t)
	cmd := exec.Command(binary, "--stdio")
	cmd.Env = testEnv(t)
	cmd.Stdin = tty
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lines := make(chan string, 1)
	rest := make(chan string, 1)
	go func() {
		r := bufio.NewReader(stderr)
		line, _ := r.ReadString('\n')
		lines <- line
		more, _ := io.ReadAll(r)
		rest <- string(more)
	}()
	select {
	case line := <-lines:
		for _, want := range []string{"Language Server Protocol", "stdin", "kimi-lsp explain", "Ctrl-C or Ctrl-D quits"} {
			if !strings.Contains(line, want) {
				t.Errorf("the line on stderr %q does not say %q", line, want)
			}
		}
	case <-time.After(30 * time.Second):
		t.Fatal("kimi-lsp --stdio on a terminal printed nothing in 30 s")
	}
	// The line says Ctrl-C or Ctrl-D quits (README too): Ctrl-D, the
	// terminal's end of input, ends the server.
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if _, err := ptmx.Write([]byte{4}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after Ctrl-D: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("kimi-lsp --stdio on a terminal did not end 30 s after Ctrl-D")
	}
	// README promises one line: the log's information (starting, input
	// closed) goes to an editor as window/logMessage, not to stderr.
	if more := <-rest; more != "" {
		t.Errorf("after the one line, stderr had %q", more)
	}

	// An editor's pipe: nothing on stderr (which editors log as errors),
	// the start told to the editor as information, and the session still
	// works.
	p := start(t, testEnv(t), "--stdio")
	if _, err := p.ed.Initialize(ctxT(t), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.ed.WaitMethod(ctxT(t), "window/logMessage", func(m json.RawMessage) bool {
		return strings.Contains(string(m), "kimi-lsp starting") && strings.Contains(string(m), `"type":3`)
	}); err != nil {
		t.Errorf("the start was not logged to the editor as information: %v", err)
	}
	p.stdin.Close()
	p.wait(t)
	if p.stderr.Len() != 0 {
		t.Errorf("with stdin a pipe, stderr got %q", p.stderr)
	}
}
