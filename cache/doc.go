// Package cache lays out prompts so that their prefix stays byte-stable from
// request to request, estimates their tokens, tracks what the provider has
// probably cached, and accounts for prompt, cached and written tokens and
// their cost. ("cache" is the provider's prompt cache, not a file cache.)
//
// The provider caches prompts implicitly, by prefix: a request is served
// from cache up to the first byte where it differs from an earlier one (in
// whole blocks of tokens, within a TTL), and cached input costs a tenth of
// fresh input. A Session builds every prompt of an editing session so that
// nearly all of it is such a prefix. It knows nothing of LSP or of the model
// client: the caller passes plain documents in and converts the messages out.
//
//	s, _ := cache.NewSession(cache.Config{System: system, Tools: toolsJSON})
//	p, err := s.Build(cache.Request{Project: proj, Documents: docs, Active: "a/b.go",
//		Selection: sel, Action: "fix", Instruction: "Fix the error."})
//	// send p.Messages (with the same tools, TTL p.TTL), then:
//	s.Record(p.Handle, cache.Usage{PromptTokens: …, CachedTokens: …})
//	s.Stats() // totals for kimi.stats
//
// # Layout
//
// Messages, most stable first (the provider caches the longest prefix a
// request shares byte for byte with an earlier one, so what changes least
// comes first):
//
//  1. system: a versioned constant (DefaultSystem, or Config.System), with
//     the constant tool definitions the caller sends before it; no dates,
//     paths or ids, and no action-specific wording — every action shares it;
//  2. user, the stable context: a <project> block (name, languages,
//     conventions), then a <file> block per document with its text, least
//     recently edited first and the active document last as of the last
//     rewrite. A document is a whole file or one declaration of a file (a
//     snippet: Document.Part and Line, shown as part="…" line="N"); path
//     and part together identify it. Paths are workspace-relative;
//     attribute values are Go quoted and file blocks carry their byte
//     length, so any text is safe;
//  3. user, the volatile end: a <context> block with Request.Volatile (the
//     documents only this request needs, such as the definitions a
//     selection uses that the stable part lacks), the edit log (below),
//     then the <request> block: the action, the active file, the selected
//     lines with 5 lines around them and <|selection|> <|/selection|> (or
//     <|cursor|>) markers, at most Config.WindowBytes (2 KB) on each side
//     of the selection however long its lines are (a minified file's line
//     is cut there, never repeated whole), the diagnostics, and the
//     instruction. The
//     <context> block comes first because it changes with the selection's
//     area and the log with every edit: requests in one area keep it
//     cached up to the log's new blocks.
//
// The stable part is a ledger of what the session was asked for: a
// volatile document the stable part shows already (with the same text) is
// not repeated in <context> and stays, and when a build rewrites the
// stable part anyway (the first, a cold or project change, a new document,
// a rebase, a drop or a trim) the volatile documents join it, at its end
// in first-use order, so the next request that needs them reads them from
// the cache. Session.Shown tells the context selection what the ledger
// holds, so that it takes those first (relevance.Request.Cached); what is
// no longer asked for goes in large steps from the end (ContextBudget,
// below).
//
// Everything is rendered deterministically, whatever order the caller lists
// documents in. Switching the active document or the action changes only
// the request block: the active file is named there and is already shown.
// With Request.ExcerptActive, a large active file is not shown whole: its
// parts among the documents are (its header, the declarations around the
// selection), and its text serves the request block only.
//
// # Edits without rewriting the prefix
//
// When a document already shown changes, its block is not re-sent: the
// change since what the prompt conveys is appended to the edit log as an
// <edit path=… seq=…> block of unified-diff hunks without context lines
// (line-level Myers diff; GNU patch applies them). The log is append-only,
// so it stays part of the cached prefix and only the new block is written —
// with one exception: a change that continues the log's last block (typing
// on in the lines it changed, so that the block from the text before it is
// no longer than a new block) replaces that block, which rewrites no more
// than appending would and keeps a line typed over many requests one
// block, not one per request (the log then reaches its limit, and the
// rebase that rewrites the file, much later).
// The active file's documents (the whole file, or its parts: next edits
// show it in pages) may carry a Base (Document.Base, HasBase): an
// earlier text of each. Whenever such a block is laid out afresh (the
// session's first request, a cold cache, a new project block, a rebase,
// its first appearance)
// the block shows the base and the log begins with the change from it to
// the text, so that even a first prompt shows the edits that led to it
// (next edits pass the text at the document's open, assist/complete's
// edit log); a change from the base past half the log's limit is not
// shown, and the block shows the text.
// The tests read every prompt back into the files' current texts
// (Reconstruct, in a test file) and check that the active buffer is always
// conveyed exactly.
//
// The log is folded back into fresh snapshots (a rebase):
//   - when the cache is cold anyway (no request for longer than the TTL),
//     or the project context changed: everything is laid out afresh, free;
//   - when the log passes MaxLogTokens (default 4096): the files with edit
//     blocks are re-snapshotted and moved to the end, starting from the end
//     of the stable part and only as far back as leaves half the limit in
//     the log, because moving a file rewrites everything after its place.
//
// The limit was chosen by replaying an editing session against the cache
// simulator (cache/cachetest; bench/README.md has the tables): moving the
// edited buffer to the end at every edit gives a hit ratio of 0.75; a log
// folded past 512 tokens 0.91, 1024 0.935, 2048 0.96, 4096 0.975, 8192
// 0.986, never 0.989 (200 steps, 16-token blocks). The log itself is cheap
// (it is cached), but it is text the model must apply in its head; 4096
// tokens keeps it short while costing about 1.5% of hit ratio against never
// folding. New documents are appended after the stable context; closed ones
// stay until the next rewrite (removing one would rewrite what follows it).
//
// # Estimates and budget
//
// Estimator is the program's one token estimate: DefaultCharsPerToken (3.2)
// bytes per token, corrected by the running ratio of usage.prompt_tokens to
// the estimate observed in the replies; its Bytes converts a token budget to
// bytes for whoever fills a prompt (the context selection), with the
// correction moving in 10% steps so that the budget's margin does not
// jitter in the cached prefix (Session.Estimator). When a prompt is
// estimated over Config.BudgetTokens, the log is folded and whole files are
// dropped (never the active one) until the estimate is three quarters of
// the budget, so that trimming happens in large steps and rarely: from the
// end of the stable part (keeping the cached prefix) normally, or the least
// recently edited first right after a rewrite, when nothing is cached.
// Dropped files stay out until the next rewrite unless they become active.
//
// Request.ContextBudget bounds instead what the stable part holds besides
// the active file. Documents a request no longer lists stay there (read
// from cache) until it is passed; then they go, the last placed first, as
// few as bring the estimate to three quarters of it, since dropping one
// rewrites what follows it.
//
// # Tracking and accounting
//
// The Session remembers the prompts it built within the TTL and predicts
// the next prompt's cached tokens as its longest common prefix with any of
// them, in whole blocks (Config.BlockTokens, MinCacheTokens) — what a hash
// chain over blocks with a TTL gives, computed by direct comparison (see
// tracker). Each Prompt reports where it first diverged from the previous
// one; Record takes the provider's usage (prompt, cached, written, output
// and reasoning tokens), prices it from a per-model table (DefaultPrices:
// Kimi K3.1 Pro at 2.00 input, 0.20 cached read, 2.00 5m write, 4.00 1h
// write per million tokens; Config.Prices overrides), and logs at debug
// level the divergence of a prompt that was served less from cache than
// predicted. Stats returns the session totals (JSON-friendly).
//
// The TTL is 5m by default, 1h when configured (writes then cost the 1h
// price). There are no keep-alive pings: a thinking model bills output for
// every request, which would cost more than the writes it saves.
package cache
