package benchkit

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model/modeltest"
	"github.com/kimi-lsp/kimi-lsp/lsp"
	"github.com/kimi-lsp/kimi-lsp/lsp/lsptest"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Serve runs kimi-lsp in process on pipes, as the replay benchmarks
// (bench/completion, bench/nextedit) drive it: the stand-in provider srv
// as its endpoint, settings as the editor's (initializationOptions and the
// answer to workspace/configuration), dir as its one workspace folder and
// explanation directory. adjust, if set, may change the initialize
// parameters (a capability) before they are sent. It returns the fake
// editor, initialized, and a stop function that ends the server and waits
// for it; ctx bounds the whole session.
func Serve(ctx context.Context, srv *modeltest.Server, dir string, settings map[string]any, logger *slog.Logger, adjust func(params map[string]any)) (*lsptest.Editor, func(), error) {
	env := map[string]string{"KIMI_API_KEY": srv.Key, "KIMI_BASE_URL": srv.URL}
	cfg, errs := config.Default().WithEnv(func(k string) string { return env[k] })
	if config.HasErrors(errs) {
		return nil, nil, fmt.Errorf("%v", errs)
	}
	raw, _ := json.Marshal(settings)
	if cfg, errs = cfg.WithEditor(raw); config.HasErrors(errs) {
		return nil, nil, fmt.Errorf("%v", errs)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	server, err := lsp.NewServer(inR, outW, inR, lsp.Options{Version: "bench", Config: cfg, Logger: logger, ExplanationDir: dir})
	if err != nil {
		return nil, nil, err
	}
	done := make(chan struct{})
	go func() {
		server.Run(ctx)
		outW.Close()
		close(done)
	}()
	stop := func() {
		inW.Close()
		<-done
	}
	ed := lsptest.New(outR, inW)
	params := lsptest.DefaultInitializeParams(string(workspace.FileURI(dir)))
	if adjust != nil {
		adjust(params)
	}
	params["initializationOptions"] = map[string]any{"kimi": settings}
	ed.Handle("workspace/configuration", func(json.RawMessage) (any, *lsptest.ResponseError) { return []any{settings}, nil })
	if _, err := ed.Initialize(ctx, params); err != nil {
		stop()
		return nil, nil, err
	}
	return ed, stop, nil
}
