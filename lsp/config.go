package lsp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
)

// settings is the configuration part of the server: the effective
// configuration, the order of its updates, the editor's settings pulls and
// the problems told to the user. It is safe for concurrent use.
type settings struct {
	// updMu serialises configuration updates from computing the new
	// configuration to applying it (engine, folders, OnConfig), so they end
	// on the newest one (update).
	updMu sync.Mutex

	// pullMu guards pulling (a workspace/configuration request is in
	// flight) and pullAgain (another was asked for meanwhile).
	pullMu    sync.Mutex
	pulling   bool
	pullAgain bool

	// mu guards cfg, the effective configuration, and the problems found
	// before the client was ready (initialized) to be told.
	mu              sync.Mutex
	cfg             config.Config
	clientReady     bool
	pendingProblems []*protocol.ShowMessageParams
	// toldProblems is the problem message last shown for each source
	// ("what" of updateConfig), so that a source read again with the
	// same problems (an editor answering the settings pull twice) is not
	// announced again.
	toldProblems map[string]string
}

// init sets the configuration the session starts with.
func (st *settings) init(cfg config.Config) { st.cfg = cfg }

// current returns the effective configuration.
func (st *settings) current() config.Config {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.cfg
}

// update runs one configuration update: change computes the next
// configuration from the current one, apply passes it on. Updates run one
// at a time from computing to applying.
func (st *settings) update(change func(config.Config) config.Config, apply func(config.Config)) {
	st.updMu.Lock()
	defer st.updMu.Unlock()
	next := change(st.current())
	st.mu.Lock()
	st.cfg = next
	st.mu.Unlock()
	apply(next)
}

// tell records msg as what source what said, and reports whether to
// show it now: not when the source said the same the last time, and not
// before the client is ready (it is kept for ready then). A nil msg (no
// problems) forgets what the source said.
func (st *settings) tell(what string, msg *protocol.ShowMessageParams) (show bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	told := st.toldProblems[what]
	if msg == nil {
		delete(st.toldProblems, what)
		return false
	}
	if st.toldProblems == nil {
		st.toldProblems = map[string]string{}
	}
	st.toldProblems[what] = msg.Message
	if told == msg.Message {
		return false
	}
	if !st.clientReady {
		// Before initialized: show it once the client is ready.
		st.pendingProblems = append(st.pendingProblems, msg)
		return false
	}
	return true
}

// ready marks the client ready (initialized) and returns the messages
// kept until then.
func (st *settings) ready() []*protocol.ShowMessageParams {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.clientReady = true
	pending := st.pendingProblems
	st.pendingProblems = nil
	return pending
}

// askPull asks for a pull of the editor's settings: start is called to
// start one when none is in flight (it reports whether it started);
// otherwise another is asked for when the one in flight returns.
func (st *settings) askPull(start func() bool) {
	st.pullMu.Lock()
	defer st.pullMu.Unlock()
	if st.pulling {
		st.pullAgain = true
		return
	}
	st.pulling = start()
}

// pulled ends a pull and reports whether another is to be sent (one was
// asked for meanwhile, and live: the session goes on).
func (st *settings) pulled(live bool) (again bool) {
	st.pullMu.Lock()
	defer st.pullMu.Unlock()
	again = st.pullAgain && live
	st.pullAgain = false
	st.pulling = again
	return again
}

// config returns the effective configuration.
func (s *Server) config() config.Config {
	return s.settings.current()
}

// updateConfig computes a new configuration with change, keeps the last good
// one for every source that has errors (the config package does that), shows
// the problems to the user, and passes the result on. change may read files:
// readers of the configuration (s.config) never wait for it. Updates run one
// at a time from computing to applying, so the engine, the folders and
// OnConfig always end on the newest configuration. It runs off the read loop
// (s.serial, or tests).
func (s *Server) updateConfig(ctx context.Context, what string, change func(config.Config) (config.Config, []error)) {
	var errs []error
	s.settings.update(func(c config.Config) config.Config {
		next, e := change(c)
		errs = e
		return next
	}, func(next config.Config) {
		s.reportConfigProblems(ctx, what, errs)
		s.configChanged(next)
		s.tellStartOnly(ctx, next)
	})
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
	var msg *protocol.ShowMessageParams
	if shown := config.Report(errs); len(shown) > 0 {
		msg = &protocol.ShowMessageParams{Type: protocol.MessageTypeWarning, Message: "kimi-lsp: configuration problems: " + strings.Join(shown, "; ")}
	}
	if s.settings.tell(what, msg) {
		s.notify(ctx, "window/showMessage", msg)
	}
}

// showPendingProblems marks the client ready (initialized) and shows the
// configuration problems found before.
func (s *Server) showPendingProblems(ctx context.Context) {
	for _, m := range s.settings.ready() {
		s.notify(ctx, "window/showMessage", m)
	}
}

// configChanged passes a new configuration to the parts that depend on it.
// Precondition: it runs in settings.update's apply (so applies happen in
// order).
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
	s.secrets.configChanged()
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
	s.settings.askPull(func() bool { return s.spawn("pull the editor's settings", s.pullLoop) })
}

// pullLoop sends workspace/configuration until no pull is pending.
func (s *Server) pullLoop() {
	for {
		var result []json.RawMessage
		params := &configurationParams{Items: []configurationItem{{Section: "kimi"}}}
		ctx := s.life.context()
		if err := s.call(ctx, "workspace/configuration", params, &result); err != nil {
			if ctx.Err() == nil {
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
		if !s.settings.pulled(ctx.Err() == nil) {
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
