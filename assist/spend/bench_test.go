package spend

import (
	"testing"
	"time"
)

// BenchmarkAdd is the cost of recording one request (lock, append,
// unlock), the file growing to its bound and being rewritten as it goes.
func BenchmarkAdd(b *testing.B) {
	l, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r := rec(time.Now(), 0.001, File{Path: "assist/engine.go", Bytes: 30000}, File{Path: "cache/session.go", Bytes: 40000})
	b.ReportAllocs()
	for b.Loop() {
		if err := l.Add(r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSpend is the budget check before a completion request when
// nothing was recorded since the last one (one lstat), and after one new
// line (a small read).
func BenchmarkSpend(b *testing.B) {
	l, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	r := rec(time.Now(), 0.001, File{Path: "a.go", Bytes: 100})
	for range 900 {
		l.Add(r)
	}
	l.Spend(time.Now())
	b.Run("unchanged", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			l.Spend(time.Now())
		}
	})
	b.Run("one new line", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			l.Add(r)
			b.StartTimer()
			l.Spend(time.Now())
		}
	})
}
