package spend

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/kimi-lsp/kimi-lsp/workspace"
)

// The record's files and bounds (see the package doc).
const (
	// FileName is the record, in the state directory.
	FileName = "requests.jsonl"
	lockName = "requests.lock"
	// MaxBytes is the size past which the record is rewritten.
	MaxBytes = 1 << 20
	// KeepRecords is how many of the newest requests a rewrite keeps.
	KeepRecords = 1000
	keepBytes   = 512 << 10
	// foldHours is how long the spend of dropped requests is kept.
	foldHours = 48
	// maxRead bounds what is read of the file at once.
	maxRead = 4 << 20
	// headLen is how much of the file's start identifies it.
	headLen = 256
)

// line is one line of the record: a Record, a folded hour or a rewrite's
// header.
type line struct {
	*Record
	Folded    *folded `json:"folded,omitempty"`
	Compacted string  `json:"compacted,omitempty"`
}

// folded is the spend of the requests a rewrite dropped, for one hour.
type folded struct {
	Hour     time.Time `json:"hour"`
	USD      float64   `json:"usd"`
	Requests int       `json:"requests"`
}

// Log is the request record of one state directory. It is safe for
// concurrent use, and several processes may use the same directory.
type Log struct {
	dir string
	w   *workspace.Writer
	log *slog.Logger
	loc *time.Location
	now func() time.Time

	mu sync.Mutex
	// The part of the file read so far: the file (fi), its first bytes
	// (head, to know it again after a rewrite reused its inode), the offset
	// read up to and an unfinished last line.
	fi      fs.FileInfo
	head    []byte
	off     int64
	partial []byte
	hours   map[int64]float64 // local hour start (Unix s) → USD, read from the file
	unsaved map[int64]float64 // the same, for requests the file did not take
	badSeen bool              // the log said this file has unreadable lines
}

// Options configure a Log.
type Options struct {
	// Logger receives the record's warnings; nil means slog.Default().
	Logger *slog.Logger
	// Location is the time zone of the budget windows; nil means
	// time.Local.
	Location *time.Location
	// Now is the clock (time.Now if nil): the time of a Record without
	// one, the age of the spend a rewrite keeps, the Meter's windows.
	Now func() time.Time
}

// Open opens the record in dir, creating dir (0700) if needed.
func Open(dir string, opts Options) (*Log, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("request record: %w", err)
	}
	w, err := workspace.NewWriter(dir, 0o600)
	if err != nil {
		return nil, fmt.Errorf("request record: %w", err)
	}
	l := &Log{dir: dir, w: w, log: opts.Logger, loc: opts.Location, now: opts.Now,
		hours: map[int64]float64{}, unsaved: map[int64]float64{}}
	if l.now == nil {
		l.now = time.Now
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	if l.loc == nil {
		l.loc = time.Local
	}
	return l, nil
}

// Memory returns a Log that keeps nothing on disk: its requests count for
// Spend in this process only, and Records is empty. It stands in when the
// state directory cannot be had.
func Memory(opts Options) *Log {
	l := &Log{log: opts.Logger, loc: opts.Location, now: opts.Now, hours: map[int64]float64{}, unsaved: map[int64]float64{}}
	if l.log == nil {
		l.log = slog.Default()
	}
	if l.loc == nil {
		l.loc = time.Local
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l
}

// Close releases the directory.
func (l *Log) Close() error {
	if l.w == nil {
		return nil
	}
	return l.w.Close()
}

// Unkept returns why the record cannot be kept on disk when its file is
// there but not a regular file (a FIFO, a symbolic link, a directory: the
// confined writer neither reads nor writes through them), else nil. While
// it is so, every request is counted in this process only (see Add), so
// the budgets count this session's spend only: say so (the ledger does,
// once).
func (l *Log) Unkept() error {
	if l.w == nil {
		return nil
	}
	fi, err := os.Lstat(filepath.Join(l.dir, FileName))
	if err != nil || fi.Mode().IsRegular() {
		return nil // missing (made at the first request), unreadable (the writer says why), or fine
	}
	return fmt.Errorf("%s in %s is %s: %w", FileName, l.dir, workspace.FileKind(fi.Mode()), workspace.ErrNotRegular)
}

// Dir returns the record's directory.
func (l *Log) Dir() string { return l.dir }

// Add appends r (cleaned: see Record) to the record, and rewrites the
// record to its bound when it passed MaxBytes. A request the file did not
// take (a full disk) is still counted by Spend in this process; the error
// says why it was not kept.
func (l *Log) Add(r Record) error {
	r = r.clean()
	if r.Time.IsZero() {
		r.Time = l.now()
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if l.w == nil {
		l.mu.Lock()
		l.unsaved[l.hourKey(r.Time)] += r.CostUSD
		l.mu.Unlock()
		return nil
	}
	unlock, lockErr := l.w.Lock(lockName)
	if lockErr == nil {
		defer unlock()
	}
	size, ended := l.tailState()
	if !ended {
		b = append([]byte{'\n'}, b...) // end a line torn by a crash
	}
	if err := l.w.AppendFile(FileName, b); err != nil {
		l.mu.Lock()
		l.unsaved[l.hourKey(r.Time)] += r.CostUSD
		l.mu.Unlock()
		return fmt.Errorf("request record: %w", err)
	}
	if lockErr != nil {
		l.log.Debug("request record: appended without the lock", "error", lockErr)
	} else if size+int64(len(b)) > MaxBytes {
		if err := l.compact(l.now()); err != nil {
			return fmt.Errorf("request record: rewrite: %w", err)
		}
	}
	return nil
}

// tailState returns the file's size and whether it is empty or ends with a
// newline.
func (l *Log) tailState() (size int64, ended bool) {
	last, fi, err := l.w.ReadFileAt(FileName, -1, 1)
	if err != nil {
		return 0, true
	}
	return fi.Size(), len(last) == 0 || last[0] == '\n'
}

// hourKey is the start of t's local hour, in Unix seconds.
func (l *Log) hourKey(t time.Time) int64 { return hourStart(t, l.loc).Unix() }

// hourStart is the start of t's clock hour in loc: t less its minutes,
// seconds and nanoseconds there. Not time.Date(…, t.Hour(), 0, 0, 0, loc):
// where daylight saving time ends the hour 01:00–02:00 comes twice, and
// time.Date names the first, so the second would count the first's spend
// and end before it began.
func hourStart(t time.Time, loc *time.Location) time.Time {
	t = t.In(loc)
	return t.Add(-(time.Duration(t.Minute())*time.Minute + time.Duration(t.Second())*time.Second + time.Duration(t.Nanosecond())))
}

// parse decodes the lines of data, calling rec and fold for each record and
// folded hour; it returns how many lines were unreadable.
func parse(data []byte, rec func(Record), fold func(folded)) (bad int) {
	for len(data) > 0 {
		var ln []byte
		ln, data, _ = bytes.Cut(data, []byte{'\n'})
		ln = bytes.TrimSpace(ln)
		if len(ln) == 0 {
			continue
		}
		var x line
		if err := json.Unmarshal(ln, &x); err != nil {
			bad++
			continue
		}
		switch {
		case x.Folded != nil:
			if f := *x.Folded; f.USD >= 0 && !math.IsInf(f.USD, 0) && !f.Hour.IsZero() {
				fold(f)
			} else {
				bad++
			}
		case x.Compacted != "":
		case x.Record != nil && !x.Record.Time.IsZero():
			rec(x.Record.clean()) // the file may have been edited: no control characters out
		default:
			bad++
		}
	}
	return bad
}

// Records returns the newest last records (all when last <= 0), oldest
// first.
func (l *Log) Records(last int) ([]Record, error) {
	if l.w == nil {
		return nil, nil
	}
	data, _, err := l.w.ReadFileAt(FileName, -1, maxRead)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("request record: %w", err)
	}
	data = dropTorn(data, maxRead)
	var out []Record
	bad := parse(data, func(r Record) { out = append(out, r) }, func(folded) {})
	if bad > 0 {
		l.mu.Lock()
		l.sayBad(bad)
		l.mu.Unlock()
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Time.Before(out[j].Time) })
	if last > 0 && len(out) > last {
		out = out[len(out)-last:]
	}
	return out, nil
}

// dropTorn drops the first line of data when data is the last max bytes
// of a larger file (it starts mid-line).
func dropTorn(data []byte, max int) []byte {
	if len(data) < max {
		return data
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return data[i+1:]
	}
	return nil
}

// sayBad logs, once per file, that it has unreadable lines. Precondition:
// l.mu is held.
func (l *Log) sayBad(n int) {
	if l.badSeen {
		return
	}
	l.badSeen = true
	l.log.Warn("request record: skipped unreadable lines (a torn or corrupt file); the rest is kept",
		"file", FileName, "dir", l.dir, "lines", n)
}

// Spend is what the requests cost in the windows around a time.
type Spend struct {
	// Hour and Day are the US dollars spent in the local clock hour and
	// the local day; HourEnds and DayEnds are when those windows end (the
	// next full hour, the next midnight).
	Hour, Day         float64
	HourEnds, DayEnds time.Time
}

// Now is the record's clock (Options.Now): the budget windows, and the
// time of what is recorded, go by it.
func (l *Log) Now() time.Time { return l.now() }

// Spend returns what every server's requests recorded in the directory
// cost in the hour and the day of now, reading what the file gained since
// the last call.
func (l *Log) Spend(now time.Time) Spend {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.refresh(now)
	now = now.In(l.loc)
	hour := hourStart(now, l.loc)
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, l.loc)
	s := Spend{HourEnds: hour.Add(time.Hour), DayEnds: day.AddDate(0, 0, 1)}
	for _, m := range []map[int64]float64{l.hours, l.unsaved} {
		for k, usd := range m {
			if k == hour.Unix() {
				s.Hour += usd
			}
			if k >= day.Unix() && k < s.DayEnds.Unix() {
				s.Day += usd
			}
		}
	}
	return s
}

// refresh reads what the file gained since it was last read, or all of it
// when it was replaced (a rewrite) or shrank. Precondition: l.mu is held.
func (l *Log) refresh(now time.Time) {
	if l.w == nil {
		l.prune(now)
		return
	}
	fi, err := l.w.Lstat(FileName)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.log.Debug("request record: not readable", "error", err)
		}
		if l.fi != nil && errors.Is(err, fs.ErrNotExist) {
			l.reset()
		}
		return
	}
	if l.fi != nil && os.SameFile(l.fi, fi) && fi.Size() == l.off && fi.ModTime().Equal(l.fi.ModTime()) {
		return // unchanged
	}
	same := l.fi != nil && os.SameFile(l.fi, fi) && fi.Size() >= l.off
	if same && len(l.head) > 0 {
		head, _, err := l.w.ReadFileAt(FileName, 0, len(l.head))
		same = err == nil && bytes.Equal(head, l.head)
	}
	skip := false // reading from the middle of an oversize file: skip to a line start
	if !same {
		l.reset()
		if fi.Size() > maxRead {
			l.off, skip = fi.Size()-maxRead, true
		}
	}
	for range 4 { // what a few reads bring; the rest at the next call
		data, got, err := l.w.ReadFileAt(FileName, l.off, maxRead)
		if err != nil {
			l.log.Debug("request record: not readable", "error", err)
			return
		}
		if l.off == 0 {
			l.head = slices.Clone(data[:min(len(data), headLen)])
		}
		n := len(data)
		l.fi, l.off = got, l.off+int64(n)
		if skip {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				return
			}
			data, skip = data[i+1:], false
		}
		data = append(l.partial, data...)
		end := bytes.LastIndexByte(data, '\n')
		l.partial = slices.Clone(data[end+1:])
		if end >= 0 {
			bad := parse(data[:end+1],
				func(r Record) { l.hours[l.hourKey(r.Time)] += r.CostUSD },
				func(f folded) { l.hours[l.hourKey(f.Hour)] += f.USD })
			if bad > 0 {
				l.sayBad(bad)
			}
		}
		if l.off >= got.Size() || n == 0 {
			break
		}
	}
	l.prune(now)
}

// reset forgets what was read of the file. Precondition: l.mu is held.
func (l *Log) reset() {
	l.fi, l.head, l.off, l.partial, l.badSeen = nil, nil, 0, nil, false
	clear(l.hours)
}

// prune forgets hours too old for any window. Precondition: l.mu is held.
func (l *Log) prune(now time.Time) {
	old := now.Add(-foldHours * time.Hour).Unix()
	for _, m := range []map[int64]float64{l.hours, l.unsaved} {
		for k := range m {
			if k < old {
				delete(m, k)
			}
		}
	}
}

// compact rewrites the file to its newest KeepRecords records (at most
// keepBytes of them), folding the spend of the others into one line per
// hour for the last foldHours. Precondition: the lock is held.
func (l *Log) compact(now time.Time) error {
	data, _, err := l.w.ReadFileAt(FileName, -1, maxRead)
	if err != nil {
		return err
	}
	data = dropTorn(data, maxRead)
	var recs []Record
	hours := map[int64]*folded{}
	fold := func(t time.Time, usd float64, n int) {
		if t.Before(now.Add(-foldHours * time.Hour)) {
			return
		}
		k := l.hourKey(t)
		f := hours[k]
		if f == nil {
			f = &folded{Hour: time.Unix(k, 0).In(l.loc)}
			hours[k] = f
		}
		f.USD += usd
		f.Requests += n
	}
	parse(data, func(r Record) { recs = append(recs, r) }, func(f folded) { fold(f.Hour, f.USD, f.Requests) })
	var kept [][]byte
	size := 0
	i := len(recs)
	for i > 0 && len(kept) < KeepRecords {
		b, err := json.Marshal(recs[i-1])
		if err != nil {
			return err
		}
		if size+len(b)+1 > keepBytes {
			break
		}
		size += len(b) + 1
		kept = append(kept, b)
		i--
	}
	for _, r := range recs[:i] {
		fold(r.Time, r.CostUSD, 1)
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	var out bytes.Buffer
	hdr, _ := json.Marshal(line{Compacted: now.UTC().Format(time.RFC3339Nano) + " " + hex.EncodeToString(rnd[:])})
	out.Write(hdr)
	out.WriteByte('\n')
	keys := make([]int64, 0, len(hours))
	for k := range hours {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		b, err := json.Marshal(line{Folded: hours[k]})
		if err != nil {
			return err
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	for j := len(kept) - 1; j >= 0; j-- {
		out.Write(kept[j])
		out.WriteByte('\n')
	}
	return l.w.WriteFile(FileName, out.Bytes())
}

// Read returns the newest last records of the record in dir (all when
// last <= 0) without creating anything: no directory, no record, nil.
func Read(dir string, last int, opts Options) ([]Record, error) {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	l, err := Open(dir, opts)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return l.Records(last)
}
