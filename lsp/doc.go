// Package lsp is the only package that speaks the Language Server Protocol:
// it owns the JSON-RPC connection, the handlers, capabilities, position
// encoding negotiation, progress and workspace/applyEdit. Handlers are thin:
// they take a snapshot, call into workspace or assist, and convert the
// result. Workarounds for go.lsp.dev/protocol v0.12.0 and jsonrpc2 v0.10.0
// live here, each with a test.
//
// # Commands and actions
//
// What an action is (its name, menu title, result, and for a user-defined
// one its prompt and kind) belongs to assist/config: the CLI runs actions
// by name and titles its progress with their titles. Its LSP face is one
// table here, commands in commands.go: per command its id, the built-in
// action it runs and the code action kind of its menu entry, or how it is
// answered when it runs no action (kimi.cancel, kimi.stats). The code
// action menu, executeCommandProvider's list and workspace/executeCommand's
// dispatch are derived from it; a user-defined action runs through
// kimi.action with its name as the argument.
//
// # Protocol types and requests
//
// The params and results the server reads and writes are in protocol.go,
// with struct tags and no hand-written encoding: params are decoded by
// encoding/json, results encoded by jsonrpc2's codec, the initialize result
// by encoding/json before it (a hand encoder saved instructions that no
// wall clock showed, see bench/README.md).
// A request's handler gets its params, the document view the read loop
// took when the request arrived and the key its jobs are cancelled by as
// one *request parameter, never through its context.
//
// # Code actions at a bare cursor
//
// A code action request on an empty range without diagnostics gets Kimi's
// actions only when the user asked for the menu: context.triggerKind 1.
// An automatic request (triggerKind 2, a lightbulb) gets none, so no bulb
// is lit on every line. A request without triggerKind (clients before LSP
// 3.17) counts as the user's when it names kinds in context.only (a
// client's "rewrite" or "quick fix" command), or when it comes from Neovim
// before 0.8 (clientInfo), whose requests are all vim.lsp.buf.code_action()
// by the user, or from eglot (clientInfo "Eglot"; eglot 1.9 sends none and
// is known by its empty capabilities.experimental), whose M-x
// eglot-code-actions sends no triggerKind while its automatic requests send
// 2; any other such request counts as automatic. Fix is offered
// only for a diagnostic or a non-empty selection, whatever the trigger; a
// selection or a diagnostic gets every action, automatic or not.
package lsp
