package workspace

// Options are the user's settings for the disk view and context selection,
// filled by the configuration layer (section "context"). Start from
// DefaultOptions; zero numbers mean the default.
type Options struct {
	// MaxTokens is the budget of the context selection (context.maxTokens).
	MaxTokens int
	// IncludeOpen, IncludeRelated and IncludeRecent switch the kinds of
	// context on (context.include: open buffers; files in the active file's
	// directory or package and the files it imports; recently viewed files).
	IncludeOpen, IncludeRelated, IncludeRecent bool
	// Exclude are extra globs (gitignore syntax) kept out of the disk view,
	// watching and prompts (context.exclude); the .gitignore files cannot
	// re-include them.
	Exclude []string
	// NoDefaultExcludes drops ignore.DefaultExcludes (node_modules/, .git/…).
	NoDefaultExcludes bool
	// MaxFileSize is the size cap in bytes: larger files never enter a
	// prompt or a read_file result (context.maxFileSize).
	MaxFileSize int64
	// SecretGlobs are the user's extra secret globs, added to
	// DefaultSecretGlobs (context.secrets).
	SecretGlobs []string
}

// Default option values.
const (
	DefaultMaxTokens   = 16000
	DefaultMaxFileSize = 1 << 20
)

// DefaultOptions returns the defaults: a 16,000-token budget, every kind of
// context on, a 1 MiB size cap.
func DefaultOptions() Options {
	return Options{
		MaxTokens:      DefaultMaxTokens,
		IncludeOpen:    true,
		IncludeRelated: true,
		IncludeRecent:  true,
		MaxFileSize:    DefaultMaxFileSize,
	}
}

func (o Options) withDefaults() Options {
	if o.MaxTokens <= 0 {
		o.MaxTokens = DefaultMaxTokens
	}
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	return o
}
