package lsp

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The choices of the question about an edit that brings new errors.
const (
	choiceApply   = "Apply anyway"
	choiceDiscard = "Discard"
	choiceShow    = "Show the errors"
)

// decideVerified applies verify.onNewErrors to an edit as verified (the
// one policy, Verification.Decide): the server asks with
// window/showMessageRequest.
func (s *Server) decideVerified(ctx context.Context, cfg config.Config, t *assist.Task, out *assist.Outcome) assist.Verdict {
	v := out.Verification
	vd := v.Decide(ctx, cfg.Verify.OnNewErrors, func(ctx context.Context) (bool, error) { return s.askNewErrors(ctx, t, v) })
	if vd.AskErr != nil {
		s.log.Info("the editor did not ask whether to apply an edit that brings new errors", "error", vd.AskErr)
	}
	return vd
}

// askNewErrors asks the user, with window/showMessageRequest, whether to
// apply an edit that brings new errors: apply anyway, discard, or show
// the errors (then asked again). No answer discards it; err is the
// request's failure, when the editor could not ask.
func (s *Server) askNewErrors(ctx context.Context, t *assist.Task, v *assist.Verification) (bool, error) {
	r := v.Result
	// The action's title starts "Kimi: " already: said once.
	msg := "Kimi: " + strings.TrimPrefix(t.Action.Title, "Kimi: ") + " — the edit brings " + r.ErrorSummary() + " (" + strings.Join(r.Helpers, ", ") + ")"
	if v.Repaired {
		msg += ", after one repair round"
	}
	msg += ". Apply it anyway?"
	items := []messageActionItem{{Title: choiceApply}, {Title: choiceDiscard}, {Title: choiceShow}}
	for range 3 {
		var res *messageActionItem
		err := s.call(ctx, "window/showMessageRequest", showMessageRequestParams{
			Type: protocol.MessageTypeWarning, Message: s.redact(msg), Actions: items,
		}, &res)
		if err != nil {
			return false, err
		}
		if res == nil {
			return false, nil
		}
		switch res.Title {
		case choiceApply:
			return true, nil
		case choiceShow:
			var b strings.Builder
			b.WriteString("Kimi: the errors the edit brings (" + strings.Join(r.Helpers, ", ") + "):")
			for _, e := range r.NewErrors {
				b.WriteString("\n" + s.displayPath(e.URI) + ":" + strconv.Itoa(e.Line+1) + ": " + e.Message)
			}
			s.showMessage(ctx, protocol.MessageTypeInfo, b.String())
			continue
		}
		return false, nil
	}
	return false, nil
}

// diskChanged passes the folders' disk changes to the helper language
// servers (workspace.Hooks.DiskChanged), which do not watch the disk, and
// reloads the workspace configuration files when one of them changed on
// disk (written by another program: the editor's save is didSave's).
func (s *Server) diskChanged(changes []workspace.DiskChange) {
	if told := s.engine.DiskChanged(changes); told != nil {
		s.hook("diskChanged", told)
	}
	for _, c := range changes {
		if path, err := c.URI.Path(); err == nil && filepath.Base(path) == config.WorkspaceFileName {
			s.reloadWorkspaceConfig()
			return
		}
	}
}
