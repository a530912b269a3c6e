// Package complete is inline completion: the text the model suggests at the
// cursor as the user types, shown as ghost text (or as a completion item in
// editors without inline completion). It knows nothing of LSP; the lsp
// package converts positions and replies at the edge.
//
//	c := complete.New(complete.Options{Config: currentConfig})
//	s, err := c.Complete(ctx, complete.Request{Key: uri, Path: "main.go", Doc: snap, Offset: off})
//	// s.Text replaces the bytes [s.Start, off): insert s.Insert at the cursor.
//
// # Never one request per keystroke
//
// A Completer runs at most one provider stream per document (and
// MaxStreams for all documents), outside the job engine's queue: a
// completion is worth something for a second, not after queued edits. A
// request:
//
//  1. supersedes every older request on its document (they end with no
//     suggestion);
//  2. is answered from the latest suggestion, without a provider request,
//     when the user has typed its first characters (type-ahead: the text
//     around the suggestion's place is unchanged and what was typed there is
//     a prefix of it); the answer replaces what was typed with the whole
//     suggestion, so editors that filter by the typed text keep showing it;
//  3. joins the document's running stream when the document is that
//     stream's text with something typed at its place; otherwise the stream
//     is hung up (nobody can use it) and, after completion.debounceMs
//     without a newer request (none for an explicit request), a new one
//     starts;
//  4. leaves the stream when it is cancelled ($/cancelRequest), and the last
//     request to leave hangs the stream up at once: closing the HTTP body is
//     what the provider sees.
//
// A failed stream pauses completion after a rate limit (until Retry-After,
// else 10 s: ErrPaused) and stops it after a refused key until the key
// changes; a missing key is config.ErrNoAPIKey. The caller reports these
// once, never as a popup per keystroke.
//
// # Prompts the provider's cache serves
//
// Each document has its own cache.Session, with the completion System
// message (a constant that holds the instruction too) and no tools. The
// active file is shown as a window of whole lines around the cursor (three
// quarters above it; a line too long for it, as in a minified file, is cut
// inside, and the request block shows at most 200 bytes on each side of the
// cursor), sized so that the whole prompt stays within
// completion.maxContextTokens whatever the line lengths: the system message, the window, room for the
// edit log to grow to a quarter of the budget, the related snippets (at most
// a quarter: relevance.Choose, the definitions the code around the cursor
// uses, chosen with the window and kept while it lasts) and the request
// block. The window is named by line numbers
// counted from both ends of the file, so typing inside it only changes its
// text, which the session turns into blocks of its append-only edit log;
// when the cursor comes near an edge the file goes on past, the window moves
// and the whole prompt is laid out afresh (its project block names the
// window, so the session sees a new project). The request block repeats one
// line above and below the cursor with the <|cursor|> marker. Over a typing
// session each request therefore shares everything up to the previous
// request's edit log with it: the cache serves about 0.9 of the prompt
// tokens (0.92 with 16-token cache blocks, 0.895 with 256-token ones, in
// bench/README.md's "Inline completion"). Typing on in the line the log's
// last block changed replaces that block rather than adding one per
// request, so the log stays short and rarely reaches its limit (a quarter
// of the budget), past which the session re-snapshots the window, which
// rewrites it all. TestTypingSessionCacheHits holds the ratio at 0.90 over
// 20 requests typing in one function of a Go and of a Python file, and at
// 0.925 over 40.
//
// # What is inserted
//
// Normalize turns the answer into exactly the text to insert: fences and an
// echoed prefix of the line go, text already after the cursor is not
// repeated, and the suggestion ends at maxLines lines and at the end of the
// enclosing block. An answer with nothing left is no suggestion.
//
// A suggestion continues what is before the cursor, or it is not shown. An
// answer that repeats the line's text before the cursor (exactly, without
// its indentation, or from one of its tokens on, with any indentation) is
// trimmed to what follows the repetition: with "\tfmt.Pr" typed, the answer
// "\tfmt.Println(x)" inserts "intln(x)". An answer that repeats the line
// from one of its tokens up to the identifier at the cursor, or its
// indentation, and then writes another identifier than the one typed
// contradicts the typed characters and is dropped: with "\tfmt.Px" typed,
// "\tfmt.Println(x)", "fmt.Println(x)" and "fmt.Sprintf(…)" are no
// suggestion, where inserting them would give "fmt.Px\tfmt.Println(x)".
// After other text on an indented line, an answer that starts with the
// line's indentation and then a name starts the line over too ("\tfoo("
// answered "\tbar(1)"), and is dropped; one that starts with the
// indentation and a comment ("\t// …") may follow code, and is kept. An
// answer that only starts with the same letters as the typed identifier is
// a continuation ("ad" answered "apter" gives "adapter"): nothing in it
// says it started over.
//
// # Next edits
//
// NextEdits is the other as-you-type surface: after an edit burst and a
// pause of nextEdit.debounceMs, the change that comes next elsewhere in the
// file (the uses of a renamed parameter, a new field in the constructor). It
// follows completion's rules: at most one provider stream per document, and
// a newer edit hangs it up; the fast model; its own cache.Session per
// document with a constant system message (NextSystem, which holds the
// instruction), the window of the file around the edit (a third of it
// above the cursor: what follows an edit is mostly below it; a file larger
// than the window is shown in pages appended after the edit log as the
// cursor reaches them, pages.go), the
// relevance snippets, and the append-only edit log, which is what shows
// the model the edit the user just made. The log begins when the document
// is opened (Opened) and again at a reload (editlog.go): each prompt passes
// the log's base as the active document's cache.Document.Base, so a
// prompt laid out afresh — a document's first, one whose window moved —
// shows the file as of the base and the edits since, never the file
// already edited without its edit; the model client, stream slots, rate-limit
// pause and refused-key state it shares with completion through their
// Services (see "Surfaces"). No request for a file over
// context.maxFileSize, one the caller's secret check refuses, without a
// key, while an edit of ours to the document is in flight (Busy), or when
// the budget says no (Allow). Only the user's typing asks (nextgate.go,
// D79): Kimi's own edits (a job's, an accepted suggestion), their undo or
// redo, a reload from disk, a format on save and an edit the editor made
// for another server end their burst without a request (NotTyped).
//
// Where the helper language server of the file runs (NextOptions.Check:
// the engine's verifier, as edits are verified), a suggestion is checked
// there between the answer and being shown, and dropped when it adds an
// error (Broken); where none runs, it is shown unchecked, as before.
//
// The model answers a unified diff of the active file, or nothing ("@@"
// hunks without a file header are that file's; an answer mixing them with
// headed ones is refused). The diff is placed by assist/patch on the text
// the prompt was built from; the suggestion is kept only if it applies
// cleanly, changes that file only, leaves the lines the burst wrote alone
// (it must not undo them, nor insert lines inside a block of them), changes
// at most nextEdit.maxLines lines (a replaced line counts once) and does not
// write the API key. A document has at most one suggestion. When the user
// edits again, a change inside the suggestion, or on the line before or
// after it, drops it as stale; any other change re-places it
// (patch.Rebase); a change that turns the text into the suggestion's result
// accepts it, however it was applied.
//
// An editor with its own next-edit UI (Copilot's copilotInlineEdit) asks for
// the suggestion with Await, which waits for the pending pause and request
// and never sends one of its own, and says what it did with Displayed and
// Accepted (nexteditor.go): a suggestion is accepted once, whether the
// didChange, the editor's word or both said so.
//
// # Surfaces
//
// Completion (complete.go, Completer) and next edits (nextedit.go,
// NextEdits) are the package's two model surfaces, each its own unit: its
// type, its per-document state under its own lock, its prompt's
// differences, its delivery (Complete's return; Current and Changed). What
// they share they get through one *Services (surface.go, NewServices; the
// server makes one per session): the model client made from the
// configuration, the pause after a rate limit and the refused key, the
// budget gate (provider.Ledger's Background and ReserveBackground), the
// MaxStreams slots, the streams' context (StreamTimeout under the
// session's end), the goroutines streams and pauses run on (goStream,
// afterFunc: Close stops the pending pauses, hangs the streams up and
// waits for them), and the sending and accounting of a request; a Surface
// names each for the budgets and the record. The prompt layout they share
// is layout.go's (docPrompt.build: the session, the window, the related
// snippets, the edit log, the request block), each passing a promptSpec.
// A surface never reads another's fields or takes its lock.
package complete
