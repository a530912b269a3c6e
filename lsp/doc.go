// Package lsp is the only package that speaks the Language Server Protocol:
// it owns the JSON-RPC connection, the handlers, capabilities, position
// encoding negotiation, progress and workspace/applyEdit. Handlers are thin:
// they take a snapshot, call into workspace or assist, and convert the
// result. The JSON-RPC connection is our own (jsonrpc.go, stream.go): the
// library it replaced (go.lsp.dev/jsonrpc2 v0.10.0, with go.lsp.dev/protocol)
// needed a workaround for each of the pitfalls in PITFALLS.md, and its JSON
// codec cost a third of the start-up; the tests of those pitfalls stay.
package lsp
