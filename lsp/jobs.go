package lsp

import (
	"encoding/json"
	"errors"

	"github.com/kimi-lsp/kimi-lsp/assist"
	"github.com/kimi-lsp/kimi-lsp/assist/jobs"
)

// The job engine (assist/jobs) owns each job's life; this file holds what
// lsp adds: matching jobs by the ids and tokens the editor knows them by,
// and the one-line text of a job's end.

var _ assist.Gate = (*jobs.Engine)(nil)

// progressToken is a job's tag: the raw $/progress token, matched by
// value.
type progressToken json.RawMessage

// cancelByToken cancels the job whose progress token is tok.
func (s *Server) cancelByToken(tok json.RawMessage) int {
	return s.jobs.CancelWhere(func(j *jobs.Job) bool {
		t, ok := j.Tag().(progressToken)
		return ok && len(t) > 0 && sameJSON(json.RawMessage(t), tok)
	}, jobs.ErrCancelled)
}

// cancelByRequest cancels the jobs started by the request with id key
// (fmt.Sprintf("%q", id)).
func (s *Server) cancelByRequest(key string) int {
	return s.jobs.CancelWhere(func(j *jobs.Job) bool { return j.Spec.Request == key }, jobs.ErrCancelled)
}

// cancelOutcome is the end message of a job whose context ended with
// cause.
func cancelOutcome(cause error) (msg string, failed bool) {
	switch {
	case errors.Is(cause, jobs.ErrInternal):
		return internalErrorOutcome, true
	case errors.Is(cause, jobs.ErrSuperseded), errors.Is(cause, jobs.ErrShutdown):
		return cause.Error(), false
	}
	return jobs.ErrCancelled.Error(), false
}

// internalErrorOutcome ends a job that panicked.
var internalErrorOutcome = jobs.ErrInternal.Error() + " (the details are in the server log)"

// sameJSON compares two JSON scalars (progress tokens, ids) by value, so
// that 7 and 7.0 or "a" and "\u0061" match.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return x == y
}
