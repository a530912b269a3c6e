package lsp

import (
	"context"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/workspace/watch"
)

// watchUserFile starts watching the user configuration file
// (Options.UserFile) with fsnotify: each change is read again on s.serial
// and applied as the start's reading was (reloadUserFile). It returns nil
// when there is no user file to watch or it cannot be watched (the log
// says why; the file read at start stays in force).
func (s *Server) watchUserFile() *watch.File {
	path := s.opts.UserFile
	if path == "" {
		return nil
	}
	f, err := watch.NewFile(path, watch.FileOptions{Logger: s.log, OnChange: func() {
		s.serial.Do("reload the user configuration file", s.reloadUserFile)
	}})
	if err != nil {
		s.log.Warn("the user configuration file is read at start only", "path", path, "error", err)
		return nil
	}
	s.log.Debug("watching the user configuration file", "path", path)
	return f
}

// reloadUserFile reads the user configuration file again and applies it
// with the other sources as they stand. It reads the disk: it runs on
// s.serial.
func (s *Server) reloadUserFile(ctx context.Context) {
	s.log.Info("user configuration file changed; applying it", "path", s.opts.UserFile)
	s.updateConfig(ctx, "user configuration", func(c config.Config) (config.Config, []error) {
		return c.WithUserFile(s.opts.UserFile)
	})
}

// tellStartOnly tells the user, in one window/showMessage, which settings
// of the new configuration cfg wait for the next start (the engine fixed
// them at its first task, assist.Engine.StartOnly), once per change: the
// same list is not told again. Everything else of cfg is in force.
// Precondition: it runs in settings.update's apply.
func (s *Server) tellStartOnly(ctx context.Context, cfg config.Config) {
	if s.engine == nil {
		return
	}
	keys := s.engine.StartOnly(cfg)
	var msg *protocol.ShowMessageParams
	if len(keys) > 0 {
		msg = &protocol.ShowMessageParams{Type: protocol.MessageTypeInfo,
			Message: "kimi-lsp: the new configuration is in force, except " + strings.Join(keys, " and ") + ", which wait for the server to start again (restart it from the editor)"}
	}
	if s.settings.tell("start only", msg) {
		s.notify(ctx, "window/showMessage", msg)
	}
}
