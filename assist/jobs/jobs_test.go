package jobs

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// wait bounds every wait of these tests: generous, never a timing claim.
const wait = 10 * time.Second

func newEngine(t *testing.T, limit int) (*Engine, *bytes.Buffer) {
	t.Helper()
	var log syncBuffer
	e := New(Options{Limit: limit, Logger: slog.New(slog.NewTextHandler(&log, nil))})
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e, &log.b
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(wait):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// TestLimitCountsStreams: with Limit 3 and 10 jobs that each take a slot,
// never more than 3 slots are held at once and all 10 jobs finish; a
// queued job is told its place.
func TestLimitCountsStreams(t *testing.T) {
	e, _ := newEngine(t, 3)
	var open, peak atomic.Int32
	release := make(chan struct{})
	var places sync.Map // job id → []int
	var wg sync.WaitGroup
	for i := 0; i < 10; i++ {
		wg.Add(1)
		_, err := e.Start(context.Background(), Spec{Title: "j"}, func(ctx context.Context, j *Job) {
			defer wg.Done()
			var seen []int
			done, err := e.Acquire(ctx, func(ahead int) { seen = append(seen, ahead) })
			if err != nil {
				t.Errorf("job %s: %v", j.ID, err)
				return
			}
			defer done()
			places.Store(j.ID, seen)
			n := open.Add(1)
			for {
				p := peak.Load()
				if n <= p || peak.CompareAndSwap(p, n) {
					break
				}
			}
			<-release
			open.Add(-1)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	// Three jobs run, seven wait.
	deadline := time.Now().Add(wait)
	for {
		active, queued := e.Streams()
		if active == 3 && queued == 7 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("streams %d, queued %d; want 3 and 7", active, queued)
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if p := peak.Load(); p != 3 {
		t.Errorf("peak open streams %d, want 3", p)
	}
	queuedJobs := 0
	places.Range(func(_, v any) bool {
		seen := v.([]int)
		if len(seen) > 0 {
			queuedJobs++
			for i := 1; i < len(seen); i++ {
				if seen[i] >= seen[i-1] {
					t.Errorf("places %v do not decrease", seen)
				}
			}
			// No "0 ahead" is promised: a job granted a slot before its
			// newest place was delivered is never told it (Acquire had
			// returned), which happens when slots free up in a burst.
			if first := seen[0]; first < 0 || first > 6 {
				t.Errorf("places %v: the first report should be 0–6 jobs ahead", seen)
			}
		}
		return true
	})
	if queuedJobs != 7 {
		t.Errorf("%d jobs were told their place, want 7", queuedJobs)
	}
}

// TestCancelWhileQueued: a queued job leaves the line at once when
// cancelled, with its cause; the jobs behind it move up.
func TestCancelWhileQueued(t *testing.T) {
	e, _ := newEngine(t, 1)
	hold := make(chan struct{})
	holding := make(chan struct{})
	e.Start(context.Background(), Spec{}, func(ctx context.Context, j *Job) {
		done, _ := e.Acquire(ctx, nil)
		defer done()
		close(holding)
		<-hold
	})
	<-holding
	type result struct {
		err    error
		places []int
	}
	results := make(chan result, 2)
	queue := func() *Job {
		placed := make(chan struct{}, 8)
		j, _ := e.Start(context.Background(), Spec{}, func(ctx context.Context, j *Job) {
			var places []int
			var mu sync.Mutex
			done, err := e.Acquire(ctx, func(ahead int) {
				mu.Lock()
				places = append(places, ahead)
				mu.Unlock()
				placed <- struct{}{}
			})
			if done != nil {
				done()
			}
			mu.Lock()
			results <- result{err, places}
			mu.Unlock()
		})
		recv(t, placed, "a place report")
		return j
	}
	first := queue()
	_ = queue()
	first.Cancel(nil)
	r := recv(t, results, "the cancelled job")
	if !errors.Is(r.err, ErrCancelled) {
		t.Errorf("cancelled queued job: err %v, want ErrCancelled", r.err)
	}
	if _, queued := e.Streams(); queued != 1 {
		t.Errorf("%d jobs queued after the cancel, want 1", queued)
	}
	close(hold)
	r = recv(t, results, "the second queued job")
	if r.err != nil {
		t.Errorf("second job: %v", r.err)
	}
	if len(r.places) < 2 || r.places[0] != 1 || r.places[len(r.places)-1] != 0 {
		t.Errorf("second job's places %v, want 1 then 0", r.places)
	}
}

// TestSupersede: the same command on the same range replaces the running
// job; another command on that range coexists.
func TestSupersede(t *testing.T) {
	e, _ := newEngine(t, 4)
	causes := make(chan error, 3)
	run := func(ctx context.Context, j *Job) {
		<-ctx.Done()
		causes <- context.Cause(ctx)
	}
	key := Key{Command: "kimi.fix", Document: "file:///a.go", Start: 1, End: 9}
	fix1, _ := e.Start(context.Background(), Spec{Key: key}, run)
	explain := key
	explain.Command = "kimi.explain"
	ex, _ := e.Start(context.Background(), Spec{Key: explain}, run)
	fix2, _ := e.Start(context.Background(), Spec{Key: key}, run)
	if c := recv(t, causes, "the superseded job"); !errors.Is(c, ErrSuperseded) {
		t.Errorf("cause %v, want ErrSuperseded", c)
	}
	select {
	case <-fix1.Done():
	case <-time.After(wait):
		t.Fatal("superseded job did not end")
	}
	for _, j := range []*Job{ex, fix2} {
		if j.Context().Err() != nil {
			t.Errorf("job %s was cancelled (%v)", j.ID, context.Cause(j.Context()))
		}
	}
	if n := e.Cancel("", nil); n != 2 {
		t.Errorf("Cancel(all) = %d, want 2", n)
	}
}

// TestPanicFailsOnlyItsJob: a panic in a job, in a goroutine it started or
// in a callback it handed out fails that job with a *PanicError, logged
// with its stack; other jobs and the engine go on.
func TestPanicFailsOnlyItsJob(t *testing.T) {
	e, log := newEngine(t, 2)
	reported := make(chan error, 1)
	other, _ := e.Start(context.Background(), Spec{}, func(ctx context.Context, j *Job) { <-ctx.Done() })
	j, _ := e.Start(context.Background(), Spec{OnPanic: func(err error) { reported <- err }}, func(ctx context.Context, j *Job) {
		panic("model reply broke the parser")
	})
	err := recv(t, reported, "OnPanic")
	var perr *PanicError
	if !errors.As(err, &perr) || !errors.Is(err, ErrInternal) || !strings.Contains(err.Error(), "broke the parser") {
		t.Errorf("OnPanic got %v, want a *PanicError matching ErrInternal", err)
	}
	<-j.Done()
	if c := context.Cause(j.Context()); !errors.Is(c, ErrInternal) {
		t.Errorf("panicked job's cause %v", c)
	}

	for _, how := range []string{"go", "guard"} {
		j, _ := e.Start(context.Background(), Spec{}, func(ctx context.Context, j *Job) {
			boom := func() { panic("boom in " + how) }
			if how == "go" {
				j.Go(boom)
			} else {
				time.AfterFunc(time.Millisecond, j.Guard(boom))
			}
			<-ctx.Done()
		})
		select {
		case <-j.Done():
		case <-time.After(wait):
			t.Fatalf("%s: the job did not end after the panic", how)
		}
		if c := context.Cause(j.Context()); !errors.Is(c, ErrInternal) {
			t.Errorf("%s: cause %v, want ErrInternal", how, c)
		}
	}
	if other.Context().Err() != nil {
		t.Errorf("another job was cancelled by the panics")
	}
	ok, _ := e.Start(context.Background(), Spec{}, func(context.Context, *Job) {})
	<-ok.Done()
	if !strings.Contains(log.String(), "jobs_test.go") {
		t.Errorf("the log has no stack:\n%s", log.String())
	}
}

// TestCloseWaits: Close cancels every job with ErrShutdown and waits for
// them and their goroutines; Start fails afterwards.
func TestCloseWaits(t *testing.T) {
	e := New(Options{Limit: 1, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	var ended atomic.Int32
	causes := make(chan error, 3)
	for i := 0; i < 3; i++ {
		e.Start(context.Background(), Spec{}, func(ctx context.Context, j *Job) {
			j.Go(func() {
				<-ctx.Done()
				time.Sleep(20 * time.Millisecond)
				ended.Add(1)
			})
			if done, err := e.Acquire(ctx, nil); err == nil {
				defer done()
			}
			<-ctx.Done()
			causes <- context.Cause(ctx)
			ended.Add(1)
		})
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if n := ended.Load(); n != 6 {
		t.Errorf("%d of 6 jobs and goroutines ended before Close returned", n)
	}
	for i := 0; i < 3; i++ {
		if c := <-causes; !errors.Is(c, ErrShutdown) {
			t.Errorf("cause %v, want ErrShutdown", c)
		}
	}
	if _, err := e.Start(context.Background(), Spec{}, func(context.Context, *Job) {}); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: %v, want ErrClosed", err)
	}
}

// TestCloseIsBounded: a job that ignores its cancellation does not hold
// Close past its timeout.
func TestCloseIsBounded(t *testing.T) {
	e := New(Options{CloseTimeout: 50 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	stuck := make(chan struct{})
	defer close(stuck)
	e.Start(context.Background(), Spec{Title: "stuck"}, func(context.Context, *Job) { <-stuck })
	err := e.Close()
	if err == nil || !strings.Contains(err.Error(), "stuck") {
		t.Errorf("Close = %v, want an error naming the stuck job", err)
	}
}

// TestSetLimit: raising the limit starts waiting jobs at once.
func TestSetLimit(t *testing.T) {
	e, _ := newEngine(t, 1)
	got := make(chan struct{}, 4)
	hold := make(chan struct{})
	for i := 0; i < 4; i++ {
		e.Start(context.Background(), Spec{}, func(ctx context.Context, j *Job) {
			done, err := e.Acquire(ctx, nil)
			if err != nil {
				return
			}
			defer done()
			got <- struct{}{}
			<-hold
		})
	}
	recv(t, got, "the first slot")
	e.SetLimit(4)
	for i := 0; i < 3; i++ {
		recv(t, got, "a slot after SetLimit")
	}
	if l := e.Limit(); l != 4 {
		t.Errorf("Limit() = %d", l)
	}
	close(hold)
}

// BenchmarkJobOverhead is the engine's cost per job: start, take a slot,
// give it back, end.
func BenchmarkJobOverhead(b *testing.B) {
	e := New(Options{Limit: 4, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	defer e.Close()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		j, err := e.Start(context.Background(), Spec{Key: Key{Command: "kimi.fix", Document: "file:///a.go", End: i}}, func(ctx context.Context, j *Job) {
			done, err := e.Acquire(ctx, nil)
			if err == nil {
				done()
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		<-j.Done()
	}
}

// BenchmarkJobOverheadParallel is BenchmarkJobOverhead with jobs started
// from several goroutines at once, contending for 4 slots.
func BenchmarkJobOverheadParallel(b *testing.B) {
	e := New(Options{Limit: 4, Logger: slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))})
	defer e.Close()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			j, err := e.Start(context.Background(), Spec{Key: Key{Command: "kimi.fix", Document: "file:///a.go"}}, func(ctx context.Context, j *Job) {
				if done, err := e.Acquire(ctx, nil); err == nil {
					done()
				}
			})
			if err != nil {
				b.Fatal(err)
			}
			<-j.Done()
		}
	})
}
