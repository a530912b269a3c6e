// Command kimi-standin runs the modeltest stand-in provider from a script
// file, for end-to-end tests that start the real kimi-lsp binary against it
// (Neovim, the Node harness):
//
//	kimi-standin -addr 127.0.0.1:0 -key KEY -script FILE.json [-log FILE] [-usage-when-asked]
//
// Once it listens it prints exactly one line, the base URL
// (http://127.0.0.1:PORT), on stdout. It serves until it is killed
// (SIGINT, SIGTERM) or, when stdin is a pipe, until stdin closes — so a test
// harness that dies takes the stand-in with it. With -log, each request body
// received is appended to FILE as one JSON line, for tests to assert what
// reached the provider. With -usage-when-asked, streams carry usage only
// when the request asks with stream_options (modeltest.Config.UsageWhenAsked).
// The script format is in the modeltest package doc.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "kimi-standin:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin *os.File, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("kimi-standin", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	key := fs.String("key", modeltest.DefaultKey, "bearer key to accept")
	script := fs.String("script", "", "script file (JSON; see the modeltest package doc); none: every reply is OK")
	logPath := fs.String("log", "", "append each request body to this file as one JSON line")
	verbose := fs.Bool("v", false, "log each request to stderr")
	usageWhenAsked := fs.Bool("usage-when-asked", false, "send usage in a stream only when stream_options.include_usage asks for it")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	cfg := modeltest.Config{Addr: *addr, Key: *key, UsageWhenAsked: *usageWhenAsked}
	if *script != "" {
		sc, err := modeltest.LoadScript(*script)
		if err != nil {
			return err
		}
		cfg.Script = sc
	}
	if *logPath != "" {
		f, err := os.OpenFile(*logPath, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		cfg.RequestLog = f
	}
	if *verbose {
		cfg.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	srv, err := modeltest.Start(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	if _, err := fmt.Fprintln(stdout, srv.URL); err != nil {
		return err
	}

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	stdinClosed := make(chan struct{})
	if fi, err := stdin.Stat(); err == nil && fi.Mode()&(os.ModeNamedPipe|os.ModeSocket) != 0 {
		go func() {
			io.Copy(io.Discard, bufio.NewReader(stdin))
			close(stdinClosed)
		}()
	}
	select {
	case <-stop:
	case <-stdinClosed:
	}
	return nil
}
