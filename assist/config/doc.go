// Package config reads kimi-lsp's configuration from its sources, checks it,
// and remembers where every effective value came from.
//
// # Sources and precedence
//
// From lowest to highest precedence:
//
//  1. built-in defaults (Default);
//  2. the user file, $XDG_CONFIG_HOME/kimi-lsp/config.toml, else
//     ~/.config/kimi-lsp/config.toml (UserFilePath, Config.WithUserFile);
//  3. workspace files, .kimi-lsp.toml at the root of a workspace folder
//     (WorkspaceFileName, Config.WithWorkspaceFiles), a later folder over an
//     earlier one;
//  4. the environment: KIMI_API_KEY, KIMI_BASE_URL, KIMI_MODEL
//     (Config.WithEnv);
//  5. the editor's "kimi" settings section (Config.WithEditor), from
//     initializationOptions, workspace/didChangeConfiguration or
//     workspace/configuration.
//
// The order of the With calls does not matter: a Config remembers the last
// good layer of every source and composes them in the order above, and each
// With call replaces one source's layer (so a setting the user removes from
// the editor falls back to the lower sources). A source with errors is not
// applied; the Config keeps that source's previous good layer, and every
// problem is returned as a *Problem naming the source, the key and the
// accepted values. The endpoint is the exception: the highest source that
// sets baseURL decides it even when that source is refused, so that an
// invalid value (Config.BaseURLError), or a file that sets baseURL but is
// not valid TOML, stops every request instead of leaving your code and key
// to a lower source's endpoint or the default one. Warnings (unknown keys,
// keys a workspace file may not set, an action dropped) do not stop the
// rest of the source from applying.
//
// A workspace file is checked into a repository that the user may have just
// cloned, so it may only tune actions, context, models, reasoning effort,
// completion tokens, cacheTTL, progress and completion: apiKey and baseURL
// are ignored with a warning (a repository must not be able to send your
// key or your code to another host), and so are waitTimeout,
// jobs.maxConcurrent, prices, logLevel, allowInvalidGo, webSearch and
// completion.debounceMs; completion.enable may only be turned off. The
// schema (schema.go) holds these rules, one per key. Glob lists (context.exclude, context.secrets) accumulate across
// sources, so that a workspace file can add to them but never drop yours.
//
// # Keys
//
// schema.go holds one entry per key: its path, environment variable,
// default and meaning (as README.md's configuration table shows them,
// which TestREADMETable holds to the schema and prints when they differ),
// what a workspace file may do with it (set it, never, or only turn it
// off), and how it is parsed, applied and listed by Sources. Parsing walks
// a source by the schema, so unknown keys are suggested from it. A new key
// is a field of Config and one entry.
//
// The same camelCase keys are used in TOML files (at the top level, or
// inside a [kimi] table) and in the editor's JSON section:
//
//	apiKey = "sk-…"                      # or KIMI_API_KEY; never in a workspace file
//	baseURL = "https://direct.evolink.ai" # or KIMI_BASE_URL; a trailing /v1 is dropped
//	model = "kimi-k3.1-pro"               # or KIMI_MODEL; edits
//	fastModel = "kimi-k3.1-pro-highspeed" # explanations
//	reasoningEffort = "high"              # every action, or per action:
//	# reasoningEffort = { explain = "low", fix = "max", default = "high" }
//	maxCompletionTokens = { explain = 8192, rewrite = 32768 } # or one number
//	cacheTTL = "5m"                       # or "1h"
//	waitTimeout = "90s"                   # wait for the provider to start answering, retries included
//	logLevel = "info"                     # debug, info, warn, error
//	allowInvalidGo = false
//	webSearch = false
//
//	[context]
//	maxTokens = 10000
//	include = { openBuffers = true, related = true, recent = true }
//	exclude = ["vendor/**", "*.pb.go"]
//	maxFileSize = 1048576
//	secrets = ["*.gpg"]
//
//	[progress]
//	showThinking = true
//	maxReportsPerSecond = 10
//
//	[jobs]
//	maxConcurrent = 4  # model streams at once; more jobs queue
//
//	[prices."kimi-k3.1-pro"]  # USD per million tokens
//	input = 2.0
//	cachedRead = 0.2
//	write5m = 2.0
//	write1h = 4.0
//	output = 8.0
//
//	[[actions]]
//	name = "review"
//	title = "Kimi: Review"
//	kind = "refactor.rewrite"           # a code action kind
//	result = "explain"                  # or "edit"
//	prompt = "Review this {{language}} code from {{file}}:\n{{selection}}"
//	model = "kimi-k3.1-pro"             # optional
//	reasoningEffort = "max"             # optional
//
// Reasoning efforts are low, high or max; the provider's aliases medium
// (high), xhigh (max), minimal and none (low) are accepted. Defaults: low
// and 8192 completion tokens for explanations, high and 32768 for edits.
// kimi-k3 accepts reasoning_effort max only (the seed's quick-start: "kimi-k3
// 仅支持 max"), so every action on kimi-k3 sends max, whatever is configured;
// Sources shows such a value as coming from the model (FromModel).
// The prices of kimi-k3.1-pro's input and cache are the provider's; the
// output price (8.00) and the other models' prices are assumptions, to be
// corrected in configuration.
//
// # Text from a repository
//
// Action titles and every problem message (which may quote a key or a
// value of a repository's file) are shown on one line without escape
// sequences, control, format or bidirectional-control characters: an
// escape sequence goes as a whole (ESC [ … final byte, ESC ] … BEL or
// ESC \, and their C1 forms), format characters (Cf, U+202A–U+202E,
// U+2066–U+2069, U+200E, U+200F, U+061C among them) are removed, other
// controls become a space. Model names refuse such characters.
//
// # Secrets
//
// The API key is held as a Secret, which prints redacted in every format;
// Config itself prints redacted with fmt and log/slog. Error messages never
// quote it.
package config
