package lsp

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/patch"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The choices of the question about an edit that brings new errors.
const (
	choiceApply   = "Apply anyway"
	choiceDiscard = "Discard"
	choiceShow    = "Show the errors"
	choiceChange  = "Show the change"
)

// jobTitle is an action's title as a message starts with it: "Kimi: Fix",
// never "Kimi: Kimi: Fix" (built-in titles already say "Kimi: ").
func jobTitle(title string) string {
	if strings.HasPrefix(title, "Kimi: ") || strings.HasPrefix(title, "Kimi:") {
		return title
	}
	return "Kimi: " + title
}

// decideVerified applies verify.onNewErrors to an edit as verified (the
// one policy, Verification.Decide): the server asks with
// window/showMessageRequest.
// While the editor asks, the job's progress says it waits for the user
// (status), not that it is still checking the edit.
func (s *Server) decideVerified(ctx context.Context, cfg config.Config, t *assist.Task, out *assist.Outcome, status func(string)) assist.Verdict {
	v := out.Verification
	vd := v.Decide(ctx, cfg.Verify.OnNewErrors, func(ctx context.Context) (bool, error) {
		status("waiting for your answer: the edit brings new errors")
		return s.askNewErrors(ctx, t, v, out.Changes)
	})
	if vd.AskErr != nil {
		s.log.Info("the editor did not ask whether to apply an edit that brings new errors", "error", vd.AskErr)
	}
	return vd
}

// askNewErrors asks the user, with window/showMessageRequest, whether to
// apply an edit that brings new errors: apply anyway, discard, or show
// the errors or the change (each then asked again). No answer discards
// it; err is the request's failure, when the editor could not ask.
func (s *Server) askNewErrors(ctx context.Context, t *assist.Task, v *assist.Verification, changes []patch.FileChange) (bool, error) {
	r := v.Result
	msg := jobTitle(t.Action.Title) + " — the edit brings " + r.ErrorSummary() + " (" + strings.Join(r.Helpers, ", ") + ")"
	if v.Repaired {
		msg += ", after one repair round"
	}
	msg += ". Apply it anyway?"
	items := []messageActionItem{{Title: choiceApply}, {Title: choiceDiscard}, {Title: choiceShow}, {Title: choiceChange}}
	for range 5 {
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
		case choiceChange:
			var b strings.Builder
			b.WriteString("Kimi: the proposed change:")
			for _, c := range changes {
				old, name := s.displayPath(workspace.FileURI(c.Path)), s.displayPath(workspace.FileURI(c.Path))
				if c.Kind == patch.RenameFile {
					old = s.displayPath(workspace.FileURI(c.OldPath))
				}
				b.WriteString("\n" + strings.TrimSuffix(patch.Unified("a/"+old, "b/"+name, c.Before, c.After, 3), "\n"))
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
