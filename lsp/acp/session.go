package acp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/agent"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Config option ids of a session.
const (
	optionModel = "model"
	optionMode  = "mode"
)

// NewSession makes a session in the working directory p.Cwd: its folder
// (scanned for the pinned context, at most scanBound), its configuration
// (the folder's workspace file), its engine (its helpers verify edits in
// that folder, restricted unless the user trusts it).
func (a *server) NewSession(_ context.Context, p sdk.NewSessionRequest) (_ sdk.NewSessionResponse, err error) {
	defer a.guard("session/new", &err)
	root, err := CheckFolder(p.Cwd)
	if err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	cfg, problems := a.opts.Config(root)
	for _, pr := range problems {
		a.log.Warn("configuration", "problem", pr.Error())
	}
	s, err := a.makeSession(root, cfg)
	if err != nil {
		return sdk.NewSessionResponse{}, err
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		s.close()
		return sdk.NewSessionResponse{}, errors.New("the agent is shutting down")
	}
	a.next++
	s.id = fmt.Sprintf("kimi-%d", a.next)
	a.sessions[s.id] = s
	a.mu.Unlock()
	trusted, why := cfg.TrustOf(root)
	a.log.Info("session started", "session", s.id, "folder", root, "trust", why, "trusted", trusted)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(s.id), Modes: modeState(s.agent), Models: modelState(s.agent),
		ConfigOptions: configOptions(s.agent)}, nil
}

// makeSession builds a session's parts in root.
func (a *server) makeSession(root string, cfg config.Config) (*session, error) {
	folders := workspace.NewFolders(assist.WorkspaceOptions(cfg), workspace.Hooks{Logger: a.log})
	if err := folders.Add(workspace.FileURI(root), filepath.Base(root)); err != nil {
		_ = folders.Close()
		return nil, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	ctx, cancel := context.WithTimeout(a.base, scanBound)
	err := folders.Ready(ctx)
	cancel()
	if err != nil {
		a.log.Warn("the folder's scan is not complete; the session starts with the files found so far", "folder", root, "error", err)
	}
	s := &session{root: root, folders: folders, ledger: a.opts.Ledger}
	engine, err := assist.NewEngine(assist.Options{Config: cfg, Logger: a.log, HTTPClient: a.opts.HTTPClient, Ledger: a.opts.Ledger,
		StatsFile: a.opts.StatsFile, ExplanationDir: a.opts.ExplanationDir, VerifyEnv: a.opts.VerifyEnv,
		VerifyFolders: func() []workspace.URI { return []workspace.URI{workspace.FileURI(root)} },
		Confirm:       func(ctx context.Context, q string) bool { return a.confirm(ctx, s, q) }})
	if err != nil {
		_ = folders.Close()
		return nil, err
	}
	s.engine = engine
	var fs agent.FS
	var terms agent.Terminals
	a.mu.Lock()
	caps := a.caps
	a.mu.Unlock()
	if caps.Fs.ReadTextFile && caps.Fs.WriteTextFile {
		fs = &editorFS{a: a, s: s}
	}
	if caps.Terminal {
		terms = &terminals{a: a, s: s}
	}
	s.agent, err = agent.New(agent.Options{Engine: engine, Ledger: a.opts.Ledger, Folders: folders, Root: root, Config: cfg,
		FS: fs, Terminals: terms, Logger: a.log})
	if err != nil {
		engine.Close()
		_ = folders.Close()
		return nil, err
	}
	return s, nil
}

// Prompt runs one turn of the session.
func (a *server) Prompt(ctx context.Context, p sdk.PromptRequest) (_ sdk.PromptResponse, err error) {
	defer a.guard("session/prompt", &err)
	s, err := a.lookup(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	a.turns.Add(1)
	defer a.turns.Done()
	// The turn ends with its request (session/cancel, $/cancel_request)
	// and with Serve.
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	defer s.running(&turnStop{stop: stop})()
	unbind := context.AfterFunc(a.base, stop)
	defer unbind()
	text, err := promptText(s, p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	c := &client{a: a, s: s, ctx: ctx}
	res, err := s.agent.Turn(ctx, text, c)
	if err != nil {
		c.Message("\n\nkimi-lsp: " + err.Error())
		return sdk.PromptResponse{}, err
	}
	c.usage(res.Usage)
	return sdk.PromptResponse{StopReason: sdk.StopReason(res.Stop), Usage: usageOf(res.Usage)}, nil
}

// promptText is the user's message of a prompt's blocks: the text, each
// embedded file quoted (a secret one left out), each linked file named for
// the model to read.
func promptText(s *session, blocks []sdk.ContentBlock) (string, error) {
	var b strings.Builder
	for _, bl := range blocks {
		switch {
		case bl.Text != nil:
			b.WriteString(bl.Text.Text)
		case bl.Resource != nil && bl.Resource.Resource.TextResourceContents != nil:
			r := bl.Resource.Resource.TextResourceContents
			path, ok := filePath(r.Uri)
			if ok && s.folders.IsSecret(path) {
				fmt.Fprintf(&b, "\n(the user attached %s, a secret file: left out)\n", r.Uri)
				continue
			}
			fmt.Fprintf(&b, "\n<file uri=%q>\n%s\n</file>\n", r.Uri, r.Text)
		case bl.ResourceLink != nil:
			fmt.Fprintf(&b, "\n(the user points to %s; read it with read_file if you need it)\n", bl.ResourceLink.Uri)
		}
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", errors.New("the prompt holds no text")
	}
	return b.String(), nil
}

// filePath is the path of a file URI.
func filePath(uri string) (string, bool) {
	u, err := workspace.ParseURI(uri)
	if err != nil {
		return "", false
	}
	p, err := u.Path()
	return p, err == nil
}

// Cancel: the SDK has cancelled the session's running prompt (its
// context); nothing else runs.
func (a *server) Cancel(_ context.Context, p sdk.CancelNotification) error {
	a.log.Info("turn cancelled", "session", p.SessionId)
	return nil
}

// SetSessionMode sets the mode of the next turns.
func (a *server) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (_ sdk.SetSessionModeResponse, err error) {
	defer a.guard("session/set_mode", &err)
	s, err := a.lookup(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	if err := s.agent.SetMode(agent.Mode(p.ModeId)); err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return sdk.SetSessionModeResponse{}, nil
}

// UnstableSetSessionModel sets the model of the next turns.
func (a *server) UnstableSetSessionModel(_ context.Context, p sdk.UnstableSetSessionModelRequest) (_ sdk.UnstableSetSessionModelResponse, err error) {
	defer a.guard("session/set_model", &err)
	s, err := a.lookup(p.SessionId)
	if err != nil {
		return sdk.UnstableSetSessionModelResponse{}, err
	}
	if err := s.agent.SetModel(string(p.ModelId)); err != nil {
		return sdk.UnstableSetSessionModelResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return sdk.UnstableSetSessionModelResponse{}, nil
}

// SetSessionConfigOption sets the session's "model" or "mode".
func (a *server) SetSessionConfigOption(_ context.Context, p sdk.SetSessionConfigOptionRequest) (_ sdk.SetSessionConfigOptionResponse, err error) {
	defer a.guard("session/set_config_option", &err)
	v := p.ValueId
	if v == nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "the options are selects: send a value id"})
	}
	s, err := a.lookup(v.SessionId)
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, err
	}
	switch string(v.ConfigId) {
	case optionModel:
		err = s.agent.SetModel(string(v.Value))
	case optionMode:
		err = s.agent.SetMode(agent.Mode(v.Value))
	default:
		err = fmt.Errorf("unknown option %q (the options: model, mode)", v.ConfigId)
	}
	if err != nil {
		return sdk.SetSessionConfigOptionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	return sdk.SetSessionConfigOptionResponse{ConfigOptions: configOptions(s.agent)}, nil
}

// CloseSession ends a session: its running turn is cancelled (the SDK
// does not), its helpers stop.
func (a *server) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (_ sdk.CloseSessionResponse, err error) {
	defer a.guard("session/close", &err)
	a.mu.Lock()
	s, ok := a.sessions[string(p.SessionId)]
	delete(a.sessions, string(p.SessionId))
	a.mu.Unlock()
	if ok {
		s.close()
	}
	return sdk.CloseSessionResponse{}, nil
}

// ListSessions and ResumeSession are not offered (sessions live as long
// as the process).
func (a *server) ListSessions(context.Context, sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

// ResumeSession is not offered.
func (a *server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

// modeState is the session's modes for session/new.
func modeState(s *agent.Session) *sdk.SessionModeState {
	st := &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(s.Mode())}
	for _, m := range agent.Modes {
		desc := m.Description
		st.AvailableModes = append(st.AvailableModes, sdk.SessionMode{Id: sdk.SessionModeId(m.ID), Name: m.Name, Description: &desc})
	}
	return st
}

// modelState is the session's models for session/new.
func modelState(s *agent.Session) *sdk.SessionModelState {
	st := &sdk.SessionModelState{CurrentModelId: sdk.ModelId(s.Model())}
	for _, m := range s.AvailableModels() {
		st.AvailableModels = append(st.AvailableModels, sdk.ModelInfo{ModelId: sdk.ModelId(m), Name: m})
	}
	return st
}

// configOptions are the session's select options: its model and mode.
func configOptions(s *agent.Session) []sdk.SessionConfigOption {
	var models, modes sdk.SessionConfigSelectOptionsUngrouped
	for _, m := range s.AvailableModels() {
		models = append(models, sdk.SessionConfigSelectOption{Name: m, Value: sdk.SessionConfigValueId(m)})
	}
	for _, m := range agent.Modes {
		modes = append(modes, sdk.SessionConfigSelectOption{Name: m.Name, Value: sdk.SessionConfigValueId(m.ID)})
	}
	catModel, catMode := sdk.SessionConfigOptionCategoryModel, sdk.SessionConfigOptionCategoryMode
	return []sdk.SessionConfigOption{
		{Select: &sdk.SessionConfigOptionSelect{Id: optionModel, Name: "Model", Category: &catModel, Type: "select",
			CurrentValue: sdk.SessionConfigValueId(s.Model()), Options: sdk.SessionConfigSelectOptions{Ungrouped: &models}}},
		{Select: &sdk.SessionConfigOptionSelect{Id: optionMode, Name: "Mode", Category: &catMode, Type: "select",
			CurrentValue: sdk.SessionConfigValueId(s.Mode()), Options: sdk.SessionConfigSelectOptions{Ungrouped: &modes}}},
	}
}
