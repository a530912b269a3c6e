package workspace

// Options are the user's settings for the disk view and context selection,
// filled by the configuration layer (section "context"). Start from
// DefaultOptions; zero numbers mean the default.
type Options struct {
	// IncludeOpen, IncludeRelated and IncludeRecent switch the kinds of
	// context on (context.include: open buffers; the declarations the
	// selection and the active file use, the files it imports and its
	// directory or package; recently viewed files). The budget is the
	// caller's (SelectInput.Budget).
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
	DefaultMaxFileSize = 1 << 20
)

// DefaultOptions returns the defaults: every kind of context on, a 1 MiB
// size cap.
func DefaultOptions() Options {
	return Options{
		IncludeOpen:    true,
		IncludeRelated: true,
		IncludeRecent:  true,
		MaxFileSize:    DefaultMaxFileSize,
	}
}

func (o Options) withDefaults() Options {
	if o.MaxFileSize <= 0 {
		o.MaxFileSize = DefaultMaxFileSize
	}
	return o
}
