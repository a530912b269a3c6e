// Package lsp is the only package that speaks the Language Server Protocol:
// it owns the JSON-RPC connection, the handlers, capabilities, position
// encoding negotiation, progress and workspace/applyEdit. Handlers are thin:
// they take a snapshot, call into workspace or assist, and convert the
// result. Workarounds for go.lsp.dev/protocol v0.12.0 and jsonrpc2 v0.10.0
// live here, each with a test.
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
// by the user; any other such request counts as automatic. Fix is offered
// only for a diagnostic or a non-empty selection, whatever the trigger; a
// selection or a diagnostic gets every action, automatic or not.
package lsp
