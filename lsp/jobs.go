package lsp

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
)

// job is one running command: a model call and what follows it. It outlives
// the executeCommand request that started it (that request is answered at
// once with the job id).
type job struct {
	id     string
	key    string // document range the job works on; "" for none
	title  string
	reqID  string // raw id of the executeCommand request, for $/cancelRequest
	cancel context.CancelCauseFunc
	done   chan struct{}

	// mu guards token, set once progress is created.
	mu    sync.Mutex
	token json.RawMessage
}

func (j *job) setToken(tok json.RawMessage) {
	j.mu.Lock()
	j.token = tok
	j.mu.Unlock()
}

func (j *job) hasToken(tok json.RawMessage) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.token) > 0 && sameJSON(j.token, tok)
}

// Cancellation causes, so the progress end message can say why.
type cancelCause string

func (c cancelCause) Error() string { return string(c) }

const (
	causeUser       cancelCause = "cancelled"
	causeSuperseded cancelCause = "cancelled: superseded by a newer request for the same range"
	causeShutdown   cancelCause = "cancelled: the server is shutting down"
)

// jobs tracks running jobs. A new job for the same key supersedes (cancels)
// the older one.
type jobs struct {
	// mu guards the fields below.
	mu   sync.Mutex
	seq  int
	byID map[string]*job
}

func newJobs() *jobs { return &jobs{byID: make(map[string]*job)} }

// start registers a job and returns it with its context. ctx should not be
// the request's context (the job outlives the request).
func (js *jobs) start(ctx context.Context, key, title, reqID string) (*job, context.Context) {
	jctx, cancel := context.WithCancelCause(ctx)
	js.mu.Lock()
	js.seq++
	j := &job{id: strconv.Itoa(js.seq), key: key, title: title, reqID: reqID, cancel: cancel, done: make(chan struct{})}
	var superseded []*job
	if key != "" {
		for _, old := range js.byID {
			if old.key == key {
				superseded = append(superseded, old)
			}
		}
	}
	js.byID[j.id] = j
	js.mu.Unlock()
	for _, old := range superseded {
		old.cancel(causeSuperseded)
	}
	return j, jctx
}

// finish removes a job once its work is over.
func (js *jobs) finish(j *job) {
	js.mu.Lock()
	delete(js.byID, j.id)
	js.mu.Unlock()
	close(j.done)
}

// cancel cancels the job with the given id, or every job when id is "".
// It returns how many jobs it cancelled.
func (js *jobs) cancel(id string, cause error) int {
	return js.cancelWhere(func(j *job) bool { return id == "" || j.id == id }, cause)
}

func (js *jobs) cancelWhere(pred func(*job) bool, cause error) int {
	js.mu.Lock()
	var hit []*job
	for _, j := range js.byID {
		if pred(j) {
			hit = append(hit, j)
		}
	}
	js.mu.Unlock()
	for _, j := range hit {
		j.cancel(cause)
	}
	return len(hit)
}

// running returns the ids of running jobs.
func (js *jobs) running() []*job {
	js.mu.Lock()
	defer js.mu.Unlock()
	out := make([]*job, 0, len(js.byID))
	for _, j := range js.byID {
		out = append(out, j)
	}
	return out
}

// sameJSON compares two JSON scalars (progress tokens, ids) by value, so
// that 7 and 7.0 or "a" and "\u0061" match.
func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return string(a) == string(b)
	}
	return x == y
}
