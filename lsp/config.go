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
// the problems to the user, and passes the result on. change may read files:
// readers of the configuration (s.config) never wait for it. Updates run one
// at a time from computing to applying, so the engine, the folders and
// OnConfig always end on the newest configuration. It runs off the read loop
// (s.serial, or tests).
func (s *Server) updateConfig(ctx context.Context, what string, change func(config.Config) (config.Config, []error)) {
	s.updMu.Lock()
	defer s.updMu.Unlock()
	next, errs := change(s.config())
	s.cfgMu.Lock()
	s.cfg = next
	s.cfgMu.Unlock()
	s.reportConfigProblems(ctx, what, errs)
	s.configChanged(next)
}

// reportConfigProblems logs every problem and shows errors and the
// warnings that drop something, with what they cost (config.Report), in
// one window/showMessage, unless the same source had the same problems
// the last time it was read (they were shown then).
func (s *Server) reportConfigProblems(ctx context.Context, what string, errs []error) {
	for _, err := range errs {
		if config.IsWarning(err) {
			s.log.Warn("configuration: "+what, "problem", err.Error())
		} else {
			s.log.Error("configuration: "+what, "problem", err.Error())
		}
	}
	shown := config.Report(errs)
	text := "kimi-lsp: configuration problems: " + strings.Join(shown, "; ")
	s.cfgMu.Lock()
	told := s.toldProblems[what]
	if len(shown) == 0 {
		delete(s.toldProblems, what)
	} else {
		if s.toldProblems == nil {
			s.toldProblems = map[string]string{}
		}
		s.toldProblems[what] = text
	}
	if len(shown) == 0 || told == text {
		s.cfgMu.Unlock()
		return
	}
	msg := &protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: text}
	if !s.clientReady {
		// Before initialized: show it once the client is ready.
		s.pendingProblems = append(s.pendingProblems, msg)
		s.cfgMu.Unlock()
		return
	}
	s.cfgMu.Unlock()
	s.notify(ctx, "window/showMessage", msg)
}

// showPendingProblems marks the client ready (initialized) and shows the
// configuration problems found before.
func (s *Server) showPendingProblems(ctx context.Context) {
	s.cfgMu.Lock()
	s.clientReady = true
	pending := s.pendingProblems
	s.pendingProblems = nil
	s.cfgMu.Unlock()
	for _, m := range pending {
		s.notify(ctx, "window/showMessage", m)
	}
}

// configChanged passes a new configuration to the parts that depend on it.
// Precondition: s.updMu is held (so applies happen in order).
func (s *Server) configChanged(cfg config.Config) {
	if s.opts.OnConfig != nil {
		s.opts.OnConfig(cfg)
	}
	if s.engine != nil {
		s.engine.SetConfig(cfg)
		s.ledger.SetBudget(cfg.Budget)
	}
	if s.jobs != nil {
		s.jobs.SetLimit(cfg.Jobs.MaxConcurrent)
	}
	if s.folders != nil {
		s.folders.SetOptions(assist.WorkspaceOptions(cfg))
	}
	s.secretCache.Clear()
	if s.nextEdit != nil {
		s.nextEdit.SetEnabled(cfg.NextEdit.Enable)
	}
	s.completionConfigChanged(cfg)
}

// pullConfig asks the client for the "kimi" section (workspace/configuration)
// when it supports that, and queues the answer to be applied. At most one
// such request is in flight: a pull asked for meanwhile is sent when it
// returns, so answers are applied in the order they were asked and the last
// applied is the answer to the last request, even when the editor answers
// out of order or not at all. It never blocks.
func (s *Server) pullConfig() {
	if !s.clientCaps().Workspace.Configuration {
		return
	}
	s.pullMu.Lock()
	defer s.pullMu.Unlock()
	if s.pulling {
		s.pullAgain = true
		return
	}
	if s.spawn("pull the editor's settings", s.pullLoop) {
		s.pulling = true
	}
}

// pullLoop sends workspace/configuration until no pull is pending.
func (s *Server) pullLoop() {
	for {
		var result []json.RawMessage
		params := &configurationParams{Items: []configurationItem{{Section: "kimi"}}}
		if err := s.call(s.baseCtx, "workspace/configuration", params, &result); err != nil {
			if s.baseCtx.Err() == nil {
				s.log.Warn("could not read the editor's settings", "error", err)
			}
		} else if len(result) > 0 {
			settings := result[0]
			s.serial.Do("apply the editor's settings", func(ctx context.Context) {
				s.updateConfig(ctx, "editor settings", func(c config.Config) (config.Config, []error) {
					return c.WithEditor(settings)
				})
			})
		}
		s.pullMu.Lock()
		again := s.pullAgain && s.baseCtx.Err() == nil
		s.pullAgain = false
		s.pulling = again
		s.pullMu.Unlock()
		if !again {
			return
		}
	}
}

func handleDidChangeConfiguration(s *Server, ctx context.Context, raw json.RawMessage) error {
	var p didChangeConfigurationParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return err
	}
	if s.clientCaps().Workspace.Configuration {
		// Pull: the settings in the notification may be partial or null.
		s.pullConfig()
		return nil
	}
	s.serial.Do("apply the editor's settings", func(ctx context.Context) {
		s.updateConfig(ctx, "editor settings", func(c config.Config) (config.Config, []error) {
			return c.WithEditor(p.Settings)
		})
	})
	return nil
}
