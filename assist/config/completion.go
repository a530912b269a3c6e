package config

// Completion defaults.
const (
	// DefaultCompletionDebounceMS is how long a completion request waits for
	// the next keystroke before it asks the provider. Chosen by replaying
	// typing sessions (bench/README.md, "Inline completion"): below it the
	// pauses after a space or a bracket start streams that the next key
	// hangs up (17 provider requests per 100 keystrokes at 200 ms, 4 at
	// 300 ms); past it the requests barely fall while every suggestion
	// comes later.
	DefaultCompletionDebounceMS = 300
	// DefaultCompletionTokens is completion.maxCompletionTokens: thinking (at
	// low effort) and a suggestion of at most maxLines lines.
	DefaultCompletionTokens = 2048
	// DefaultCompletionContextTokens is completion.maxContextTokens, the
	// whole prompt's budget.
	DefaultCompletionContextTokens = 4096
	// DefaultCompletionMaxLines is completion.maxLines.
	DefaultCompletionMaxLines = 12
)

// Values of completion.items.
const (
	// ItemsAuto offers textDocument/completion items only to clients that
	// do not support textDocument/inlineCompletion (Helix, eglot, Kakoune).
	ItemsAuto = "auto"
	// ItemsAlways offers them to every client.
	ItemsAlways = "always"
	// ItemsNever never offers them.
	ItemsNever = "never"
)

// Completion tunes inline completion (ghost text, or completion items for
// clients without inline completion).
type Completion struct {
	// Enable turns completion on or off.
	Enable bool
	// Items is ItemsAuto, ItemsAlways or ItemsNever.
	Items string
	// DebounceMS is how long an as-you-type request waits for the next
	// keystroke before it asks the provider (0: no wait).
	DebounceMS int
	// Model is the completion model; empty means FastModel (see
	// Config.CompletionModel).
	Model string
	// ReasoningEffort for completion requests.
	ReasoningEffort Effort
	// MaxCompletionTokens bounds thinking and answer.
	MaxCompletionTokens int
	// MaxContextTokens bounds the whole prompt.
	MaxContextTokens int
	// MaxLines bounds a suggestion's lines.
	MaxLines int
}

// CompletionModel returns the model completion requests use:
// completion.model, else fastModel.
func (c Config) CompletionModel() string {
	if c.Completion.Model != "" {
		return c.Completion.Model
	}
	return c.FastModel
}

// Next-edit defaults.
const (
	// DefaultNextEditDebounceMS is how long after the last edit of a burst
	// a next-edit suggestion is asked for. Chosen by replaying edit
	// sessions (bench/README.md, "Next-edit suggestions"): the shortest
	// pause tried with one provider request per burst and none hung up
	// (800 ms: 1.11 requests per burst, a hesitation mid-word starts a
	// stream the next key hangs up; 500 ms: 1.42; 300 ms: 1.91); longer
	// ones only make every suggestion later.
	DefaultNextEditDebounceMS = 1000
	// DefaultNextEditContextTokens is nextEdit.maxContextTokens: with the
	// pages appended after the edit log, 3,072 cost the least an hour of
	// dense editing on real-size files (D106; 4,096 before).
	DefaultNextEditContextTokens = 3072
	// DefaultNextEditMaxLines is nextEdit.maxLines.
	DefaultNextEditMaxLines = 20
	// DefaultNextEditTokens bounds thinking and the diff of one next-edit
	// answer.
	DefaultNextEditTokens = 2048
)

// NextEdit tunes next-edit suggestions: after an edit burst and a pause,
// the change that comes next, elsewhere in the file.
type NextEdit struct {
	// Enable turns next-edit suggestions on or off.
	Enable bool
	// DebounceMS is the pause after the last edit before the provider is
	// asked.
	DebounceMS int
	// Model is the model; empty means FastModel (see
	// Config.NextEditModel).
	Model string
	// ReasoningEffort for next-edit requests.
	ReasoningEffort Effort
	// MaxContextTokens bounds the whole prompt.
	MaxContextTokens int
	// MaxLines bounds the lines a suggestion changes.
	MaxLines int
}

// NextEditModel returns the model next-edit requests use: nextEdit.model,
// else fastModel.
func (c Config) NextEditModel() string {
	if c.NextEdit.Model != "" {
		return c.NextEdit.Model
	}
	return c.FastModel
}
