package benchkit

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

func TestOrderStatistics(t *testing.T) {
	xs := []float64{5, 1, 4, 2, 3}
	for _, c := range []struct {
		p    float64
		want float64
	}{{0, 1}, {20, 1}, {21, 2}, {50, 3}, {99, 5}, {100, 5}} {
		if got := Percentile(xs, c.p); got != c.want {
			t.Errorf("Percentile(%v, %v) = %v, want %v", xs, c.p, got, c.want)
		}
	}
	if got := Median(xs); got != 3 {
		t.Errorf("Median(%v) = %v, want 3", xs, got)
	}
	if got := Median([]float64{4, 1, 3, 2}); got != 2.5 {
		t.Errorf("Median of an even count = %v, want 2.5", got)
	}
	if !slices.Equal(xs, []float64{5, 1, 4, 2, 3}) {
		t.Errorf("the input was reordered: %v", xs)
	}
	if !math.IsNaN(Median(nil)) || !math.IsNaN(Percentile(nil, 50)) {
		t.Errorf("no values must give NaN")
	}
	if lo, hi := MinMax(xs); lo != 1 || hi != 5 {
		t.Errorf("MinMax = %v, %v, want 1, 5", lo, hi)
	}
}

func TestBuffers(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.go", strings.Repeat("line a 123\n", 30))    // 330 bytes
	write("b/b.go", strings.Repeat("line bb 45\n", 30))  // 330 bytes
	write("testdata/x.go", strings.Repeat("skip\n", 99)) // skipped
	write("c.txt", strings.Repeat("skip\n", 99))         // not Go
	bufs, err := Buffers(dir, 3, 200)
	if err != nil {
		t.Fatal(err)
	}
	if len(bufs) != 3 {
		t.Fatalf("got %d buffers, want 3", len(bufs))
	}
	for i, b := range bufs {
		if len(b) > 200 || len(b) < 200-11 || !strings.HasSuffix(b, "\n") {
			t.Errorf("buffer %d: %d bytes ending %q, want 189..200 bytes cut at a line end", i, len(b), b[len(b)-1:])
		}
		if strings.Contains(b, "skip") {
			t.Errorf("buffer %d holds text from testdata or a non-Go file", i)
		}
	}
	if !strings.HasPrefix(bufs[0], "line a") || !strings.Contains(bufs[1]+bufs[2], "line bb") {
		t.Errorf("buffers are not in path order: %q…", bufs[0][:20])
	}
	again, _ := Buffers(dir, 3, 200)
	if !slices.Equal(bufs, again) {
		t.Errorf("two reads of the same corpus differ")
	}
	if _, err := Buffers(dir, 10, 200); err == nil {
		t.Errorf("asking for more buffers than the corpus holds: no error")
	}
}

func TestReadMemAndDescendants(t *testing.T) {
	m, err := ReadMem(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.HWM < m.RSS || m.Threads < 1 {
		t.Errorf("ReadMem(self) = %+v, want RSS > 0, HWM ≥ RSS, threads ≥ 1", m)
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep command:", err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if !slices.Contains(Descendants(os.Getpid()), cmd.Process.Pid) {
		t.Errorf("Descendants(self) = %v, want it to hold the child %d", Descendants(os.Getpid()), cmd.Process.Pid)
	}
	tree, n, err := TreeMem(os.Getpid())
	if err != nil || n < 2 || tree.Threads <= m.Threads {
		t.Errorf("TreeMem(self) = %+v, %d processes, %v; want the child counted", tree, n, err)
	}
	if _, err := ReadMem(-1); err == nil {
		t.Errorf("ReadMem(-1): no error")
	}
}

// TestMinorFaults: touching 4 MiB of memory the process never touched
// (a fresh mapping) takes at least one fault per 64 KiB, and the count is
// the process's (a fault in another thread counts too).
func TestMinorFaults(t *testing.T) {
	before, err := MinorFaults(os.Getpid())
	if err != nil || before <= 0 {
		t.Fatalf("MinorFaults(self) = %d, %v", before, err)
	}
	mem, err := syscall.Mmap(-1, 0, 4<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		t.Skip("mmap:", err)
	}
	defer syscall.Munmap(mem)
	done := make(chan struct{})
	go func() {
		for i := 0; i < len(mem); i += 4096 {
			mem[i] = 1
		}
		close(done)
	}()
	<-done
	after, err := MinorFaults(os.Getpid())
	if err != nil || after-before < 64 {
		t.Errorf("MinorFaults after touching 4 MiB: %d → %d (%v), want at least 64 more", before, after, err)
	}
	if _, err := MinorFaults(-1); err == nil {
		t.Errorf("MinorFaults(-1): no error")
	}
}

// TestExeResidency: the test binary's own text is partly resident (it is
// running) and never more than its size.
func TestExeResidency(t *testing.T) {
	secs, err := ExeResidency(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var text *SectionResidency
	for i := range secs {
		if secs[i].Resident > secs[i].Size || secs[i].Resident < 0 {
			t.Errorf("%s: %d KiB resident of %d", secs[i].Name, secs[i].Resident, secs[i].Size)
		}
		if secs[i].Name == ".text" {
			text = &secs[i]
		}
	}
	if text == nil || text.Resident == 0 {
		t.Fatalf("no resident .text among %+v", secs)
	}
}
