package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.lsp.dev/protocol"

	"github.com/kimi-lsp/kimi-lsp/assist/config"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
)

// tailRunes is how much of the streamed answer a progress report shows: a
// readable tail, not the whole text (the whole text goes to the result).
const tailRunes = 240

// progress reports one job to the editor: $/progress with a work-done
// token when the client supports it. Reports are throttled: the first text
// goes out at once, later ones at most every interval, and the last one is
// flushed before end. It is safe for concurrent use.
//
// A client without progress support (eglot 1.9 declares none) gets no
// live view: the streamed text as log lines is unreadable, and a log is
// not where its user looks. It gets one window/showMessage when the job
// starts ("Kimi: Explain: asking kimi-k3…") and one at the end with the
// outcome, unless the answer itself was shown in a window/showMessage
// (see Answered): then the outcome goes to window/logMessage, so the
// answer is the last message and stays in view. Nothing else of the job
// is sent to such a client.
type progress struct {
	s        *Server
	token    json.RawMessage // nil when the client has no progress support
	interval time.Duration
	thinking bool                // show the reasoning tail while the model thinks
	guard    func(func()) func() // wraps the timer's callback (jobs.Job.Guard)
	// ctx is the job's context, uncancelled: the throttled reports go out
	// on it from the timer (a report already due is sent whole; End says
	// how the job ended).
	ctx context.Context

	// mu guards the fields below.
	mu       sync.Mutex
	title    string
	content  strings.Builder // the answer so far, of this model call
	reason   tailBuffer      // the end of the reasoning so far, of this call
	status   string          // a short status line, e.g. "retrying"
	pin      string          // why this call is made (Round), kept in view
	lastSent time.Time
	dirty    bool
	timer    *time.Timer
	ended    bool
	answered bool // the answer went out in a window/showMessage
}

// newProgress prepares progress for a job. clientToken is the workDoneToken
// the client sent with executeCommand, if any; otherwise a token is created
// with window/workDoneProgress/create when the client supports progress.
func (s *Server) newProgress(ctx context.Context, clientToken json.RawMessage, j *jobs.Job, maxPerSecond int, thinking bool) *progress {
	if maxPerSecond <= 0 {
		maxPerSecond = 10
	}
	p := &progress{s: s, interval: time.Second / time.Duration(maxPerSecond), thinking: thinking, guard: j.Guard, ctx: context.WithoutCancel(ctx)}
	switch {
	case len(clientToken) > 0 && string(clientToken) != "null":
		p.token = clientToken
	case s.clientCaps().Window.WorkDoneProgress:
		tok, _ := json.Marshal("kimi-job-" + j.ID)
		err := s.call(ctx, "window/workDoneProgress/create", workDoneProgressCreateParams{Token: tok}, nil)
		if err != nil {
			s.log.Warn("client refused a progress token; falling back to log messages", "error", err)
		} else {
			p.token = tok
		}
	}
	return p
}

// Token returns the progress token, or nil.
func (p *progress) Token() json.RawMessage { return p.token }

func (p *progress) send(ctx context.Context, value any) {
	p.s.notify(ctx, "$/progress", progressParams{Token: p.token, Value: value})
}

// Begin starts the progress with a title such as "Kimi: Explain".
func (p *progress) Begin(ctx context.Context, title, message string) {
	p.mu.Lock()
	p.title = title
	p.mu.Unlock()
	if p.token == nil {
		p.s.showMessage(ctx, protocol.MessageTypeInfo, title+": "+message)
		return
	}
	p.send(ctx, &protocol.WorkDoneProgressBegin{Kind: protocol.WorkDoneProgressKindBegin, Title: config.CleanText(title), Cancellable: true, Message: config.CleanLines(message)})
}

// Content adds answer text; Reasoning adds reasoning text; Status sets a
// short status line. Each schedules a throttled report.
func (p *progress) Content(delta string) {
	p.mu.Lock()
	if p.content.Len() == 0 && delta != "" {
		// The first answer text goes out at once, even if a "thinking…"
		// report just did.
		p.lastSent = time.Time{}
	}
	p.content.WriteString(delta)
	p.status = ""
	p.scheduleLocked()
	p.mu.Unlock()
}

func (p *progress) Reasoning(delta string) {
	if !p.thinking {
		return
	}
	p.mu.Lock()
	p.reason.Write(delta)
	p.scheduleLocked()
	p.mu.Unlock()
}

func (p *progress) Status(msg string) {
	p.mu.Lock()
	p.status = msg
	p.scheduleLocked()
	p.mu.Unlock()
}

// Round starts another model call of the job: what the last call streamed
// is no longer shown (the repair round does not show the broken diff
// again), and a non-empty note stays above the rest of the job's reports.
func (p *progress) Round(note string) {
	p.mu.Lock()
	p.content.Reset()
	p.reason = tailBuffer{}
	if note != "" {
		p.pin = note
	}
	p.status = ""
	p.mu.Unlock()
}

// scheduleLocked sends a report now if the interval has passed since the
// last one, else arms a timer for the rest of it.
// Precondition: p.mu is held.
func (p *progress) scheduleLocked() {
	if p.ended || p.token == nil {
		return
	}
	p.dirty = true
	wait := p.interval - time.Since(p.lastSent)
	if wait <= 0 {
		p.flushLocked()
		return
	}
	if p.timer == nil {
		p.timer = time.AfterFunc(wait, p.guard(func() {
			p.s.hook("progress", p)
			p.mu.Lock()
			defer p.mu.Unlock()
			p.timer = nil
			if p.dirty && !p.ended {
				p.flushLocked()
			}
		}))
	}
}

// flushLocked sends the current tail as a report.
// Precondition: p.mu is held.
func (p *progress) flushLocked() {
	p.dirty = false
	p.lastSent = time.Now()
	msg := config.CleanLines(p.messageLocked()) // the answer's text: see showMessage
	if msg == "" {
		return
	}
	p.send(p.ctx, &protocol.WorkDoneProgressReport{Kind: protocol.WorkDoneProgressKindReport, Message: msg})
}

// messageLocked is the report text: the status, or the answer's tail, or
// "thinking…" with the reasoning's tail. Under a pinned note (Round) it is
// the note and the last line of that: an editor showing the last few
// lines of a report keeps the note in view.
// Precondition: p.mu is held.
func (p *progress) messageLocked() string {
	var body string
	switch {
	case p.status != "":
		body = p.status
	case p.content.Len() > 0:
		body = tail(p.content.String(), tailRunes)
	case p.reason.String() != "":
		body = "thinking… " + tail(p.reason.String(), tailRunes/2)
	}
	if p.pin == "" {
		return body
	}
	if i := strings.LastIndex(body, " ⏎ "); i >= 0 {
		body = "…" + body[i+len(" ⏎ "):]
	}
	if body == "" {
		return p.pin
	}
	return p.pin + " ⏎ " + body
}

// Answered records that the job's answer was shown in a
// window/showMessage: for a client without progress support, End then
// logs its outcome instead of showing it over the answer.
func (p *progress) Answered() {
	p.mu.Lock()
	p.answered = true
	p.mu.Unlock()
}

// End finishes the progress with a one-line outcome. For clients without
// progress support, the outcome is shown with window/showMessage, or
// logged with window/logMessage when the answer was (Answered).
func (p *progress) End(ctx context.Context, outcome string, failed bool) {
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		return
	}
	p.ended = true
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if p.dirty {
		p.flushLocked()
	}
	title, answered := p.title, p.answered
	p.mu.Unlock()
	if p.token == nil {
		typ := protocol.MessageTypeInfo
		if failed {
			typ = protocol.MessageTypeError
		}
		if answered {
			p.s.notify(ctx, "window/logMessage", &protocol.LogMessageParams{Type: typ, Message: p.s.redact(title + ": " + outcome)})
			return
		}
		p.s.showMessage(ctx, typ, title+": "+outcome)
		return
	}
	p.send(ctx, &protocol.WorkDoneProgressEnd{Kind: protocol.WorkDoneProgressKindEnd, Message: config.CleanLines(outcome)})
}

// tail returns about the last n runes of s, starting at a line or word
// boundary when one is near, with newlines folded to " ⏎ " so the editor's
// one-line progress display stays readable.
func tail(s string, n int) string {
	// Only the end matters: never scan a long answer whole on every report.
	if max := 4 * n; len(s) > max {
		cut := len(s) - max
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		s = s[cut:]
	}
	if utf8.RuneCountInString(s) > n {
		cut := len(s)
		for i := 0; i < n && cut > 0; i++ {
			_, size := utf8.DecodeLastRuneInString(s[:cut])
			cut -= size
		}
		s = s[cut:]
		if i := strings.IndexAny(s, " \n"); i >= 0 && i < 24 {
			s = s[i+1:]
		}
		s = "…" + s
	}
	s = strings.TrimSpace(s)
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", " ⏎ ")), " ")
}

// tailBuffer keeps the last few KB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(s string) {
	const keep = 4096
	t.b = append(t.b, s...)
	if len(t.b) > 2*keep {
		cut := len(t.b) - keep
		for cut < len(t.b) && !utf8.RuneStart(t.b[cut]) {
			cut++
		}
		t.b = append(t.b[:0], t.b[cut:]...)
	}
}

func (t *tailBuffer) String() string { return string(t.b) }

// outcomeLine makes a one-line outcome for End.
func outcomeLine(format string, args ...any) string {
	s := fmt.Sprintf(format, args...)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 300 {
		s = string([]rune(s)[:299]) + "…"
	}
	return s
}
