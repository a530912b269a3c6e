package lsp

import (
	"context"
	"encoding/json"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
)

// config returns the effective configuration.
func (s *Server) config() config.Config {
	s.cfgMu.Lock()
	defer s.cfgMu.Unlock()
	return s.cfg
}

// updateConfig computes a new configuration with change, keeps the last good
// one for every source that has errors (the config package does that), shows
// the problems to the user, and passes the result on.
func (s *Server) updateConfig(ctx context.Context, what string, change func(config.Config) (config.Config, []error)) {
	s.cfgMu.Lock()
	next, errs := change(s.cfg)
	s.cfg = next
	s.cfgMu.Unlock()
	s.reportConfigProblems(ctx, what, errs)
	s.configChanged(next)
}

// reportConfigProblems logs every problem and shows errors (not warnings)
// in one window/showMessage.
func (s *Server) reportConfigProblems(ctx context.Context, what string, errs []error) {
	var shown []string
	for _, err := range errs {
		if config.IsWarning(err) {
			s.log.Warn("configuration: "+what, "problem", err.Error())
			continue
		}
		s.log.Error("configuration: "+what, "problem", err.Error())
		shown = append(shown, err.Error())
	}
	if len(shown) == 0 {
		return
	}
	msg := &protocol.ShowMessageParams{
		Type:    protocol.MessageTypeWarning,
		Message: "kimi-lsp: configuration problems (the last good values stay in use): " + strings.Join(shown, "; "),
	}
	if s.state.Load() == stateNew {
		// During initialize: show it once the client is ready.
		s.cfgMu.Lock()
		s.pendingProblems = append(s.pendingProblems, msg)
		s.cfgMu.Unlock()
		return
	}
	s.notify(ctx, "window/showMessage", msg)
}

// showPendingProblems shows the configuration problems found during
// initialize.
func (s *Server) showPendingProblems(ctx context.Context) {
	s.cfgMu.Lock()
	pending := s.pendingProblems
	s.pendingProblems = nil
	s.cfgMu.Unlock()
	for _, m := range pending {
		s.notify(ctx, "window/showMessage", m)
	}
}

// configChanged passes a new configuration to the parts that depend on it.
func (s *Server) configChanged(cfg config.Config) {
	if s.opts.OnConfig != nil {
		s.opts.OnConfig(cfg)
	}
	if s.engine != nil {
		s.engine.SetConfig(cfg)
	}
	if s.jobs != nil {
		// The newest configuration's, not cfg's: two updates may call
		// configChanged out of order.
		s.jobs.SetLimit(s.config().Jobs.MaxConcurrent)
	}
	if s.folders != nil {
		s.folders.SetOptions(assist.WorkspaceOptions(cfg))
	}
	s.secretCache.Clear()
	s.completionConfigChanged(cfg)
}

// pullConfig asks the client for the "kimi" section (workspace/configuration)
// when it supports that, and applies it.
func (s *Server) pullConfig(ctx context.Context) {
	if !s.clientCaps().Workspace.Configuration {
		return
	}
	var result []json.RawMessage
	params := map[string]any{"items": []map[string]string{{"section": "kimi"}}}
	if err := s.call(ctx, "workspace/configuration", params, &result); err != nil {
		s.log.Warn("could not read the editor's settings", "error", err)
		return
	}
	if len(result) == 0 {
		return
	}
	s.updateConfig(ctx, "editor settings", func(c config.Config) (config.Config, []error) {
		return c.WithEditor(result[0])
	})
}

func handleDidChangeConfiguration(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p didChangeConfigurationParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if s.clientCaps().Workspace.Configuration {
		// Pull: the settings in the notification may be partial or null.
		go s.pullConfig(context.WithoutCancel(ctx))
		return nil
	}
	s.updateConfig(ctx, "editor settings", func(c config.Config) (config.Config, []error) {
		return c.WithEditor(p.Settings)
	})
	return nil
}
