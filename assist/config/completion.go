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

// defaultCompletion returns the built-in completion settings (the
// schema's defaults).
func defaultCompletion() Completion { return Default().Completion }

// CompletionModel returns the model completion requests use:
// completion.model, else fastModel.
func (c Config) CompletionModel() string {
	if c.Completion.Model != "" {
		return c.Completion.Model
	}
	return c.FastModel
}
