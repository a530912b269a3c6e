// Package lsp is the only package that speaks the Language Server Protocol:
// it owns the JSON-RPC connection, the handlers, capabilities, position
// encoding negotiation, progress and workspace/applyEdit. Handlers are thin:
// they take a snapshot, call into workspace or assist, and convert the
// result. Workarounds for go.lsp.dev/protocol v0.12.0 and jsonrpc2 v0.10.0
// live here, each with a test.
package lsp
