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
// when there is no user file to watch. The watch itself starts once the
// initialize reply is written; if it cannot start, the log says why and
// the file read at start stays in force.
func (s *Server) watchUserFile() *userFileWatch {
	path := s.opts.UserFile
	if path == "" {
		return nil
	}
	u := &userFileWatch{started: make(chan struct{})}
	// The file as it is now, before the first message is read: a change
	// made from here on, and so once the editor has its initialize reply,
	// is seen, although the watch starts after the reply (nothing in the
	// reply needs it; on two cores its inotify descriptor, goroutine and
	// directory walk delayed the reply).
	since := watch.Identify(path)
	if !s.spawn("watch the user configuration file", func() {
		defer close(u.started)
		select {
		case <-s.life.repliedCh():
		case <-s.life.context().Done():
			return
		}
		f, err := watch.NewFile(path, watch.FileOptions{Logger: s.log, Since: since, OnChange: func() {
			s.serial.Do("reload the user configuration file", s.reloadUserFile)
		}})
		if err != nil {
			s.log.Warn("the user configuration file is read at start only", "path", path, "error", err)
			return
		}
		s.log.Debug("watching the user configuration file", "path", path)
		u.f = f
	}) {
		close(u.started)
	}
	return u
}

// userFileWatch is the user configuration file's watch, started once the
// initialize reply is written (see watchUserFile).
type userFileWatch struct {
	started chan struct{} // closed once the watch runs, failed or was not started
	f       *watch.File   // set before started is closed; nil if none
}

// Close stops the watch. The session's context must be done (or the
// reply written): it waits for the watch's start to end first.
func (u *userFileWatch) Close() {
	<-u.started
	if u.f != nil {
		u.f.Close()
	}
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
