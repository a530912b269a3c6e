package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/lsp/acp"
)

// newACPFlags returns acp's flag set and the logging flags it fills.
func newACPFlags(stderr io.Writer) (*flag.FlagSet, *logFlags) {
	fs := newFlagSet("acp", stderr)
	lf := new(logFlags)
	lf.register(fs)
	return fs, lf
}

// cmdACP serves the Agent Client Protocol on stdin/stdout: an agent whose
// sessions share the configuration, the ledger and the record with the
// server (lsp/acp, assist/agent).
func cmdACP(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	fs, lf := newACPFlags(stderr)
	if _, code, ok := parseFlags(fs, args, stdout, 0); !ok {
		return code
	}
	env, err := setup(lf, stderr, getenv)
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 2
	}
	defer env.close()
	env.logProblems()
	v := version()
	env.log.Info("kimi-lsp acp starting", "version", v, "pid", os.Getpid())
	ledger := assist.OpenLedger(getenv, env.cfg.Budget, env.log)
	defer ledger.Close()
	user := env.cfg
	err = acp.Serve(ctx, stdin, stdout, acp.Options{
		Ledger:     ledger,
		Logger:     env.log,
		Version:    v,
		HTTPClient: modelHTTP,
		StatsFile:  assist.DefaultStatsFile(),
		Config: func(root string) (config.Config, []error) {
			cfg, errs := user.WithWorkspaceFiles(config.WorkspaceFile(root))
			env.onConfig(cfg)
			return cfg, errs
		},
	})
	if err != nil {
		fmt.Fprintf(stderr, "kimi-lsp: %v\n", err)
		return 1
	}
	return 0
}
