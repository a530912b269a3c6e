// Package assist turns a user's request (explain, fix, rewrite, document,
// tests, user-defined actions) into model calls and results: it asks the
// cache package for the prompt, streams the model's reply as events, runs
// the tool-call loop and turns diffs and tool calls into a checked,
// all-or-nothing edit set. It never imports LSP protocol types.
package assist
