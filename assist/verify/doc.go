// Package verify checks a model's edit with the language's own server
// before it lands: a private helper language server per language, started
// by kimi-lsp itself (not by the editor), that says which errors the edit
// brings.
//
// # Helpers
//
// The command table (DefaultServers, overridden per language by
// Options.Servers) maps an LSP language to its helper: gopls for Go,
// pyright-langserver --stdio (else basedpyright-langserver --stdio) for
// Python, typescript-language-server --stdio for JavaScript and
// TypeScript, rust-analyzer for Rust, clangd for C and C++. Languages that
// name the same command share one helper. A helper starts lazily, at the
// first check or Diagnostics in its language (or Warm), and only when its
// command is found on PATH; it gets the workspace folders, runs in the
// first folder, in a process group of its own, with the part of our
// environment the allow-list lets through (see Trust), plus Options.Env.
// Its stderr and its log messages go to our logger at debug level. It is
// stopped after Options.Idle without use (DefaultIdle, 10 minutes), at
// once when a configuration change no longer names it (SetServers) or
// turns verification off (Stop), and by Close: a shutdown request, the
// exit notification, then a kill of its process group, each step bounded
// by 1 s. Every goroutine the Verifier starts (a helper's start, a
// retirement, a shutdown, a warm-up) is its own (spawn): Close ends a
// retirement's wait at once, waits for all of them at most closeBound,
// kills every helper still running, and returns once their processes
// have exited and been reaped — nothing it started outlives it.
//
// The helper mirrors the editor's buffers (Options.Buffers), synchronised
// with full-text didOpen/didChange/didClose at the start of each
// operation rather than on every keystroke: a check sees the buffers as
// kimi-lsp sees them at that moment, and typing costs the helper nothing.
// The files of an edit that are not open in the editor are opened with
// the text the edit was computed against and closed again at the next
// operation that does not touch them (the helper then reads the disk).
// A helper watches nothing on disk itself: the changes kimi-lsp's own
// folder views see (FilesChanged: a checkout, a generated file, a file
// saved and closed) are sent to it as workspace/didChangeWatchedFiles at
// the start of its next operation.
//
// The workspace folders follow the editor's (FoldersChanged, called after
// its workspace/didChangeWorkspaceFolders). A helper that declares
// workspace folder support with change notifications (its initialize
// result's capabilities.workspace.workspaceFolders: gopls and pyright
// do) is sent workspace/didChangeWorkspaceFolders, the folders added and
// removed since it last heard, at the start of its next operation; its
// next diagnostics wait after an addition has ColdTimeout (it loads the
// folder). A helper that does not declare it gives way at its next
// operation to one started with the folders then. A helper is never left
// with a folder outside the workspace: the one it runs in removed, or no
// folder left, stops it at once (it would keep the removed directory as
// its working directory), and the next operation starts one in the first
// folder left. A helper that gives way ends the operation it is running
// first (within ColdTimeout), then shuts down.
//
// # Trust
//
// A helper reads the workspace, and most run some of it: an attacker who
// controls a repository the user clones chooses what. Options.Trusted
// says whether the user trusts the folders a helper runs in; nil, or no
// folders, means untrusted, and the helper starts restricted by its
// program's profile (launchFor, keyed on the program's base name, so a
// verify.servers entry naming gopls by its path gets gopls's). A
// restricted helper and a trusted one are different helpers: TrustChanged
// stops those whose trust no longer holds. In an untrusted folder:
//   - gopls runs with GOTOOLCHAIN=local: a go.mod's "go" or "toolchain"
//     line never makes the go command fetch and run a toolchain (a trusted
//     folder's gopls too, unless the user set GOTOOLCHAIN). Modules are
//     fetched from the user's GOPROXY, checked against the checksum
//     database, and no module code runs at download or in go list; cgo
//     files are preprocessed by the C compiler, with the go command's
//     allow-list of #cgo flags.
//   - pyright and basedpyright get, as the python section's pythonPath of
//     workspace/configuration, the interpreter python3 (else python) on
//     the cleaned PATH names as sys.executable when run from a temporary
//     directory (a pyenv shim picks by .python-version), never one inside
//     a workspace folder; with none, a path that does not exist, so that
//     pyright runs no interpreter and analyses with its bundled stubs only
//     ("without the workspace's environment"). A pyrightconfig.json's
//     venvPath/venv is only read (site-packages).
//   - typescript-language-server gets tsserver.path: the TypeScript node
//     resolves from its own real file (bundledTypeScript), never the
//     workspace's node_modules/typescript or .yarn/sdks; automatic type
//     acquisition off, no plugins. Without such a TypeScript it is not
//     started: the check ends unverified, saying why.
//   - rust-analyzer runs no build scripts and no proc macros and no
//     check on save, with RUSTC_WRAPPER and RUSTC_WORKSPACE_WRAPPER (and
//     their CARGO_BUILD_ forms) empty against a .cargo/config.toml's
//     wrapper, RUSTC the rustc on PATH against its build.rustc, and
//     RUSTUP_AUTO_INSTALL=0 against a rust-toolchain.toml's toolchain
//     (rustup 1.28 and later).
//   - clangd runs with --background-index=false (no .cache/clangd in the
//     work tree) and --enable-config=false (no .clangd), without any
//     --query-driver.
//
// Where the restriction narrows what a check sees (all but gopls's), the
// end line says so: "verified by pyright (untrusted folder: without the
// workspace's environment): no new errors" (Result.Restricted,
// Result.Restriction). In a trusted folder a helper runs as the editor's
// own would.
//
// Trusted or not, a helper's environment is an allow-list (allowedEnv):
// PATH, HOME, USER, LOGNAME, SHELL, LANG, LC_*, TZ, TMPDIR, TERM, XDG_*,
// the proxy and CA certificate variables, CC/CXX, the go command's GO*
// and CGO_*, NODE_* (NODE_OPTIONS included: the user's own), CARGO_*,
// RUSTUP_*, RUST_*, and in a trusted folder PYTHON*, VIRTUAL_ENV and
// CONDA_*; never a variable named like a credential (*_TOKEN, *_KEY,
// *SECRET*, *PASSWORD*, *PASSWD*, *CREDENTIAL*, AWS_*, KIMI_*) whatever
// its prefix. Its PATH, which its program is also looked up on, has no
// relative entry and none inside a workspace folder (cleanPath): a
// repository's own gopls or python3 is never run by name. D66 in
// docs/decisions.md records these choices.
//
// # A check
//
// Check takes each touched file's diagnostics with the texts before the
// edit, then puts the candidate texts of all of them in the helper
// (didChange, in the helper only: never on disk, never in the editor),
// takes each file's diagnostics again, and puts the texts before back. A
// file is diagnosed only once every file of the edit holds its text: one
// may use what another declares. Diagnostics are pulled with
// textDocument/diagnostic where the helper offers it
// (serverCapabilities.diagnosticProvider; gopls does when asked, see
// goplsOptions); otherwise they are the helper's next publishDiagnostics
// for the version we sent (pyright publishes with versions), or, from a
// helper that publishes without versions, the first publish after our
// change once 300 ms passed without another of that document
// (settleWindow; other documents' publications do not count). The
// diagnostics before the edit are kept while nothing the helper holds
// changes, so a repeated check of a file costs one diagnosis.
//
// A new error is a diagnostic of error severity (or of none) after the
// edit that no error before it matches: the same message, on the line the
// old error's line became through the edit (a line map from
// workspace/linediff's diff of the two texts; a changed line maps to the
// lines that replaced it). Warnings and hints never count, nor an import
// the helper cannot resolve of a module that a file the edit creates
// provides (pyright resolves imports from the disk only; importOfCreated).
// Only the touched files are looked at: an error the edit causes in
// another file (the callers of a function it removed) is not found, so
// that a check costs one diagnosis per touched file.
//
// # Definitions
//
// Definitions asks the helper where the names at some offsets of a file
// are declared (textDocument/definition, one request per name, all sent at
// once), with the editor's buffers and that file's text as its documents,
// for the context of an action (assist, D65 in docs/decisions.md). It
// never waits for a helper to start: one that is not running is started in
// the background and the call returns at once, saying so.
//
// # Bounds
//
// A check never blocks its caller for long and never fails: whatever it
// could not do, it reports in Result.Reason, and the edit goes on
// unverified. Every wait is bounded:
//   - start and initialize: StartTimeout, 15 s (measured: gopls 0.3 s,
//     pyright 1.2 s at a load average of 15 on 2 cores);
//   - the first diagnostics of a new helper: ColdTimeout, 20 s (it loads
//     the workspace then: gopls with an empty cache 5.8 s for a 50-file
//     module importing fmt and strings, pyright 8 s for its builtins);
//   - each later diagnostics wait: DiagTimeout, 5 s (a warm check of that
//     module: p50 56 ms, p90 140 ms; bench/README.md);
//   - the definitions of one selection's names, the operation slot
//     included: DefinitionTimeout, 1 s (a warm gopls: p50 3.9 ms for the
//     21 names of a file of that module);
//   - each write to the helper: 5 s (a helper that stops reading);
//   - a helper giving way after a folder change: its running operation,
//     at most ColdTimeout, then the shutdown's 2 s (in the background;
//     Close cuts the wait short);
//   - Close: closeBound (3.5 s) for the helpers' shutdowns and the
//     Verifier's goroutines, then a kill and at most 2 × 1 s more;
//   - a check of n files in all: at most StartTimeout + ColdTimeout +
//     (2n−1) × DiagTimeout with a new helper, 2n × DiagTimeout with a
//     warm one (plus the writes' bounds).
//
// Checks on one helper run one at a time (they change its documents); a
// second check waits for the first within its own context. A helper that
// exits is started again at the next check. A helper that times out is
// killed and not started again for RetryAfter (1 minute): checks
// meanwhile end at once, "not verified (gopls did not answer within 5s)".
// The one exception is a helper's first diagnostics: a timeout there
// means it is still loading, so it is left running for the next check,
// once.
//
// The package imports no LSP library: the few wire types it needs are its
// own, over its own Content-Length framed JSON-RPC client (rpc.go).
package verify
