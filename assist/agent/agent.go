// Package agent is the agent surface: a multi-turn conversation in a
// folder, in which the model reads, lists and searches the workspace and
// proposes edits that the user allows or rejects. It speaks no protocol:
// lsp/acp is its Agent Client Protocol face, and hands it a Client (the
// session's updates, the permission question) and, when the editor offers
// them, an FS (the editor's file reads and writes).
//
// A turn runs on the engine's units (assist.Engine.Converse): the budgets'
// question, the stream slot, every request reserved, recorded as surface
// "agent" and settled in the ledger, the answer streamed with the API key
// struck, the tool loop over one pending edit set, and the edit verified
// by the language's helper with one repair round (verify.onNewErrors).
// This package adds what is the agent's own:
//
//   - The conversation, whose prefix stays byte-stable across turns: the
//     tool definitions (the same in every mode), the system message, the
//     pinned context (the folder's name, languages and files, taken once
//     when the session starts), then the turns as they were sent, the
//     assistant's reasoning_content and tool calls included. A turn that
//     ends early (cancelled, failed) is closed (assist.CloseTurn) so that
//     the next request is valid and its prefix unchanged.
//   - Its own read-only tools, list_files and search_files, which see what
//     the workspace's ignore rules and secret checks let through;
//     run_command where the editor has terminals (each command asked
//     about, unless the user allowed that command line always; it runs in
//     the editor's terminal, never here); and the wrapper around every
//     call that shows it to the user (kind, title, files, status) and
//     refuses edits and commands in the "ask" mode.
//   - The landing: the turn's edits, verified, go to the user as one
//     permission question carrying each file's diff and the helper's
//     verdict; allowed, they land whole or not at all (the editor's
//     fs/write_text_file when offered, else assist.WriteChanges, the
//     confined writer); rejected or unanswered, nothing is written.
//
// Invariants: a session runs one turn at a time; nothing is written
// without the user's allow for that edit, and no command runs without the
// user's allow for it; no file outside the session's folder, inside .git,
// or secret is read, listed, searched or written.
package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/model"
	"github.com/kimi-lsp/kimi-lsp/assist/provider"
	"github.com/kimi-lsp/kimi-lsp/assist/redact"
	"github.com/kimi-lsp/kimi-lsp/assist/spend"
	"github.com/kimi-lsp/kimi-lsp/assist/tools"
	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// Mode is a session's mode.
type Mode string

// The modes.
const (
	// ModeCode lets the model edit (every edit asks the user first).
	ModeCode Mode = "code"
	// ModeAsk offers the same tools but refuses every edit call: the
	// model reads and answers.
	ModeAsk Mode = "ask"
)

// ModeInfo describes a mode for the editor's menu.
type ModeInfo struct {
	ID          Mode
	Name        string
	Description string
}

// Modes are the session modes, the default first.
var Modes = []ModeInfo{
	{ModeCode, "Code", "Reads, searches and proposes edits; each edit is verified and lands only when you allow it."},
	{ModeAsk, "Ask", "Reads and searches only: edits are refused, nothing is written."},
}

// StopReason is how a turn ended.
type StopReason string

// The stop reasons (ACP's).
const (
	StopEndTurn   StopReason = "end_turn"
	StopCancelled StopReason = "cancelled"
	StopMaxTokens StopReason = "max_tokens"
	StopMaxRounds StopReason = "max_turn_requests"
	StopRefusal   StopReason = "refusal"
)

// ErrBusy: a turn is already running in the session.
var ErrBusy = errors.New("a turn is already running in this session")

// ErrUnknownMode and ErrUnknownModel: a mode or model the session does not
// offer.
var (
	ErrUnknownMode  = errors.New("unknown mode")
	ErrUnknownModel = errors.New("unknown model")
)

// Options make a Session.
type Options struct {
	// Engine runs the turns (one per session: its configuration is the
	// session folder's, its helpers verify the session's edits).
	Engine *assist.Engine
	// Ledger is the engine's ledger, for the spend shown at a turn's end.
	Ledger *provider.Ledger
	// Folders holds the session's folder (its disk view, ignore rules and
	// secret checks); Root is that folder's path.
	Folders *workspace.Folders
	Root    string
	// Config is the session's configuration (the engine's).
	Config config.Config
	// FS, if set, is the editor's file access: reads see unsaved buffers,
	// writes land in the editor. Nil: the disk, through the confined
	// reader and writer.
	FS FS
	// Terminals, if set, runs commands in the editor's terminals: the
	// session offers run_command. Nil: no command is ever run.
	Terminals Terminals
	// Logger receives the session's log (nil: slog.Default()).
	Logger *slog.Logger
}

// Session is one agent conversation. It is safe for concurrent use; turns
// run one at a time.
type Session struct {
	opts   Options
	log    *slog.Logger
	tools  []model.Tool
	prefix []model.Message
	models []string
	// redact strikes the API key from what the tool calls show.
	redact *redact.Redactor

	// turn is held for the length of a turn.
	turn sync.Mutex

	// mu guards the fields below.
	mu     sync.Mutex
	msgs   []model.Message // the conversation after the prefix
	mode   Mode
	model  string
	cached int              // the last request's prompt tokens
	reads  []tools.FileRead // files whose text earlier requests carried
	note   string           // said to the model with the next message
	turns  int
	spent  float64 // the session's cost so far
	// always are the command lines the user allowed for the session.
	always map[string]bool
}

// New returns a session in opts.Root, its pinned context taken now from
// the folder's files.
func New(opts Options) (*Session, error) {
	if opts.Engine == nil || opts.Folders == nil {
		return nil, errors.New("agent: a session needs an engine and a folder")
	}
	key, _ := opts.Config.Key()
	s := &Session{opts: opts, log: cmp.Or(opts.Logger, slog.Default()), tools: Tools(), redact: redact.New(key),
		mode: ModeCode, model: opts.Config.Model, models: Models(opts.Config), always: map[string]bool{}}
	if opts.Terminals != nil {
		s.tools = append(slices.Clone(s.tools), commandTool())
	}
	s.prefix = []model.Message{model.SystemMessage(System), model.UserMessage(pinned(opts.Folders))}
	return s, nil
}

// Models are the models a session may choose among: the configured
// model and fastModel, then every other model with a price, sorted.
func Models(cfg config.Config) []string {
	out := []string{cfg.Model}
	if cfg.FastModel != "" && cfg.FastModel != cfg.Model {
		out = append(out, cfg.FastModel)
	}
	var more []string
	for name := range cfg.Prices() {
		if !slices.Contains(out, name) {
			more = append(more, name)
		}
	}
	slices.Sort(more)
	return append(out, more...)
}

// AvailableModels returns the models the session offers, its current one
// first in the configuration's order.
func (s *Session) AvailableModels() []string { return slices.Clone(s.models) }

// Mode returns the session's mode; Model its model.
func (s *Session) Mode() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// Model returns the model the next turn asks.
func (s *Session) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// SetMode sets the mode of the next turns.
func (s *Session) SetMode(m Mode) error {
	if !slices.ContainsFunc(Modes, func(i ModeInfo) bool { return i.ID == m }) {
		return fmt.Errorf("%w %q (the modes: code, ask)", ErrUnknownMode, m)
	}
	s.mu.Lock()
	s.mode = m
	s.mu.Unlock()
	return nil
}

// SetModel sets the model of the next turns, one of AvailableModels.
func (s *Session) SetModel(name string) error {
	if !slices.Contains(s.models, name) {
		return fmt.Errorf("%w %q (the models: %s)", ErrUnknownModel, name, strings.Join(s.models, ", "))
	}
	s.mu.Lock()
	s.model = name
	s.mu.Unlock()
	return nil
}

// Messages returns the conversation as the next request starts: the
// prefix, then the turns.
func (s *Session) Messages() []model.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append(slices.Clone(s.prefix), s.msgs...)
}

// Close ends the session once its running turn, if any, has ended (the
// caller cancels it first); the engine's helper language servers stop.
func (s *Session) Close() {
	s.turn.Lock()
	defer s.turn.Unlock()
	s.opts.Engine.Close()
}

// Turn runs one turn: prompt is the user's message. The answer, the
// reasoning and each tool call stream to c; the turn's edits, verified,
// are put to the user through c.Permission and land when allowed. The
// result holds the turn's usage and cost. Cancelling ctx ends the provider
// stream and every tool call, and the turn with StopCancelled.
func (s *Session) Turn(ctx context.Context, prompt string, c Client) (Result, error) {
	if !s.turn.TryLock() {
		return Result{}, ErrBusy
	}
	defer s.turn.Unlock()
	s.mu.Lock()
	mode, mdl, cached, note := s.mode, s.model, s.cached, s.note
	s.note = ""
	s.turns++
	tr := &turnRun{s: s, c: c, mode: mode, n: s.turns}
	msgs := append(append(slices.Clone(s.prefix), s.msgs...), model.UserMessage(userText(mode, note, prompt)))
	s.mu.Unlock()
	a, _ := s.opts.Config.ActionFor(config.ActionRewrite) // an edit's effort and answer budget
	res, err := s.opts.Engine.Converse(ctx, assist.Turn{
		Surface: spend.SurfaceAgent, Model: mdl, Effort: a.ReasoningEffort, MaxCompletionTokens: a.MaxCompletionTokens,
		Messages: msgs, Tools: s.tools, Files: s.files(ctx), Call: tr.call, Reads: tr.allReads, CachedTokens: cached,
	}, sinkFor(c))
	if res != nil {
		msgs = res.Messages
	}
	stop, why, err := s.ended(ctx, msgs, res, err)
	if why != "" {
		c.Message("\n\nkimi-lsp: " + why)
	}
	if err == nil && stop == StopEndTurn && len(res.Changes) > 0 {
		landed := tr.land(ctx, res)
		if ctx.Err() != nil {
			stop = StopCancelled
		}
		s.mu.Lock()
		s.note = landed
		s.mu.Unlock()
	}
	return Result{Stop: stop, Usage: tr.usage(res)}, err
}

// ended keeps the conversation after a turn's model work (msgs, closed
// when the turn ended early) and says how the turn ends: an error that
// has a stop reason (cut off, too many rounds, a budget) is that reason and
// a line for the user (why); any other is returned.
func (s *Session) ended(ctx context.Context, msgs []model.Message, res *assist.TurnResult, err error) (stop StopReason, why string, _ error) {
	stop = StopEndTurn
	switch {
	case err == nil:
	case ctx.Err() != nil:
		stop, err = StopCancelled, nil
	case errors.Is(err, model.ErrCutOff), errors.Is(err, model.ErrNoAnswer):
		stop, why, err = StopMaxTokens, err.Error(), nil
	case errors.Is(err, tools.ErrTooManyRounds):
		stop, why, err = StopMaxRounds, err.Error(), nil
	case errors.Is(err, provider.ErrBudget):
		stop, why, err = StopRefusal, err.Error(), nil
	}
	if stop != StopEndTurn || err != nil {
		why := "the user cancelled this turn"
		if stop != StopCancelled {
			why = "this turn ended early: " + string(stop)
			if err != nil {
				why = "this turn failed"
			}
		}
		msgs = assist.CloseTurn(msgs, "("+why+"; nothing of it was applied)")
	}
	s.mu.Lock()
	s.msgs = slices.Clone(msgs[len(s.prefix):])
	if res != nil && res.LastPromptTokens > 0 {
		s.cached = res.LastPromptTokens
	}
	if res != nil {
		s.reads = addReads(s.reads, res.Reads)
	}
	s.mu.Unlock()
	return stop, why, err
}

// userText is a turn's user message: the mode, what became of the last
// turn's edit, then the prompt.
func userText(mode Mode, note, prompt string) string {
	var b strings.Builder
	if mode == ModeAsk {
		b.WriteString("[mode: ask — answer and explain; edit tools are refused in this mode]\n")
	}
	if note != "" {
		b.WriteString("[" + note + "]\n")
	}
	b.WriteString(prompt)
	return b.String()
}

// addReads adds more to reads, summing the bytes of a file read again.
func addReads(reads, more []tools.FileRead) []tools.FileRead {
	out := slices.Clone(reads)
	for _, m := range more {
		if i := slices.IndexFunc(out, func(r tools.FileRead) bool { return r.Path == m.Path }); i >= 0 {
			out[i].Bytes += m.Bytes
			continue
		}
		out = append(out, m)
	}
	return out
}
