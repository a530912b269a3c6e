package spend

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestProbeOddFiles(t *testing.T) {
	for _, kind := range []string{"fifo", "symlink", "readonly", "dir"} {
		t.Run(kind, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "kimi-lsp")
			os.MkdirAll(dir, 0o700)
			p := filepath.Join(dir, FileName)
			other := filepath.Join(t.TempDir(), "other")
			os.WriteFile(other, []byte(`{"time":"2026-12-01T10:00:00Z","surface":"x","costUSD":5}`+"\n"), 0o600)
			switch kind {
			case "fifo":
				syscall.Mkfifo(p, 0o600)
			case "symlink":
				os.Symlink(other, p)
			case "readonly":
				os.WriteFile(p, nil, 0o400)
			case "dir":
				os.Mkdir(p, 0o700)
			}
			l, err := Open(dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() {
				defer close(done)
				err := l.Add(Record{Surface: "explain", CostUSD: 0.5})
				t.Logf("add: %v", err)
				t.Logf("spend: %+v", l.Spend(time.Now()))
				r, err := l.Records(0)
				t.Logf("records: %v %v", r, err)
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("hung")
			}
			b, _ := os.ReadFile(other)
			t.Logf("other: %s", b)
		})
	}
}
