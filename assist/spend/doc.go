// Package spend keeps what left the machine and what it cost: the local
// record of every provider request's metadata, and the budgets counted on
// it.
//
// # The record
//
// Every request the program sends to the provider — an action's rounds,
// an inline completion, a next edit, a verification repair — adds one
// Record: its time, its surface (the action's name, "completion",
// "nextEdit", "repair"), the model, each file the prompt included with
// its byte count (an action's later rounds add each file the model read
// with read_file: the tool results go with every later request), the prompt, cached, written and output tokens, the cost
// and the outcome. Never a file's contents, never a prompt, never the API
// key: a Record has no field that could hold them, and its strings are cut
// short (Record.clean).
//
// The record is one file of JSON lines, requests.jsonl, in the state
// directory (StateDir: $XDG_STATE_HOME/kimi-lsp, else
// ~/.local/state/kimi-lsp), written only through the confined writer
// (workspace.Writer, files 0600, the directory 0700).
//
//   - Appending: one line per request, one write on a file opened for
//     appending, under an advisory lock (requests.lock, flock(2)) that
//     every server holds around each update. Two editors' servers append
//     to the same file and lose nothing of each other's: the lines land
//     whole, and a rewrite (below) is never interleaved with an append.
//     Where the lock cannot be had within 2 s the line is appended anyway
//     (it still lands whole) and the rewrite waits for the next request.
//   - The bound: when the file passes 1 MiB (MaxBytes) it is rewritten,
//     atomically, to the newest 1,000 requests (KeepRecords; fewer if they
//     would take more than 512 KiB). The requests dropped are folded into
//     one line per hour of spend ({"folded": {"hour", "usd", "requests"}})
//     for the last 48 hours, so that the budgets still count them. The
//     file therefore holds at least the newest 1,000 requests (unless they
//     are unusually large) and never much more than 1 MiB.
//   - A torn or corrupt file: a line that is not a record is skipped, and
//     the log says so once per file (how many lines were skipped); a last
//     line left without its newline by a crash is ended before the next
//     append, so it costs that line only. A file grown past 4 MiB by
//     something else is read from its last 4 MiB.
//
// # The budgets
//
// Budget.Hourly and Budget.Daily bound the spend (US dollars at the
// configured prices) of every surface together, across restarts and
// across concurrent servers: the Meter sums the record's costs, reading
// the file's new lines as they come (its own and other servers'). The
// windows are calendar windows in local time — the current clock hour and
// the current day — so "until when" is the next full hour or the next
// midnight, which is what a notice can say plainly; a rolling window would
// free its budget bit by bit at times no one can predict.
//
// Meter.Check says, once per window, when the spend passes 80 % of a
// budget (Status.Warn) and when it first reaches a cap (Status.Notice);
// Status.Capped holds for the rest of the window. Budget.ConfirmAbove is
// the estimated cost of one request above which an action asks first
// (Budget.Confirm, Estimate).
//
// # Reservations
//
// The record knows a request's cost only when it ends; requests in
// flight at once would each see the budget as it was before any of them
// (sixteen Explains started together under a cap of a cent all went
// out). So every request, right before it is sent — after its wait for a
// stream slot — reserves its estimate (Meter.Reserve): the check against
// what is left and the reservation are one step under the meter's lock,
// so two requests never both take the last of a budget. Every Status
// counts what is reserved (Window.Held) beside what was spent; Status.Fits
// says whether one more estimate fits in what is left of every budget,
// Status.Over which budget it would pass. When the request ends —
// answered, failed, cut off, cancelled or hung up — its Reservation is
// settled with the real cost (Reservation.Settle adds the record, then
// drops the estimate, so for a moment both count and never neither), or
// released unsent (Reservation.Release). Both are idempotent and a nil
// *Reservation does nothing: a caller defers Release right after
// reserving, and a panic or an early return cannot leak the estimate.
// Meter.Hold reserves whatever is left: a request the user chose to send
// past a budget still counts for the others.
//
// An estimate is what the question before a request names (Estimate): the
// prompt's estimated tokens at the predicted cache hit, the uncached rest
// priced as a cache write, plus the output an action expects (as long as
// its last answers, provider.Ledger.ExpectedOutput, 4,096 tokens before
// the first, within its max_completion_tokens; a completion's or a next
// edit's own token bound). It is an estimate: a prompt the provider
// counts as larger, or a cache hit that does not come, costs more than was
// reserved, and the budget can be passed by that difference.
//
// Reservations are in-process. A second server (another editor) sharing
// the record sees this one's requests only once they are settled — when
// they end and their line is appended — not while they are in flight; the
// budgets hold exactly within one process and, across processes, up to
// what is in flight at once.
//
// A record that is there but is not a regular file — a FIFO, a symbolic
// link, a directory — keeps nothing: the confined writer neither reads
// nor writes through it, every request is counted in this process only,
// and the budgets count this session's spend only. Log.Unkept says so;
// the ledger (assist/provider) tells the user once.
package spend
