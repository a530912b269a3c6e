// Package benchkit holds what the benchmark programs under bench/ share:
// deterministic buffers of real source text cut from GOROOT, memory figures
// read from /proc, order statistics (median, spread, percentiles) over
// repeated measurements, and Serve, the in-process server the replay
// benchmarks drive.
package benchkit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// GoSourceDir returns $(go env GOROOT)/src, the default corpus directory.
func GoSourceDir() (string, error) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOROOT: %w", err)
	}
	root := strings.TrimSpace(string(out))
	if root == "" {
		return "", errors.New("go env GOROOT printed nothing")
	}
	return filepath.Join(root, "src"), nil
}

// Buffers returns n buffers of real Go source of at most size bytes each,
// cut at line ends from the .go files under dir (testdata and vendor
// directories skipped) concatenated in lexical path order. The same dir
// (the same Go release) gives the same buffers on every run. Each buffer is
// at least size minus one line long.
func Buffers(dir string, n, size int) ([]string, error) {
	var (
		out []string
		cur bytes.Buffer
	)
	errEnough := errors.New("enough")
	add := func(line []byte) {
		if cur.Len()+len(line) > size && cur.Len() > 0 {
			out = append(out, cur.String())
			cur.Reset()
		}
		if len(line) > size { // a pathological line: cut it at a rune start
			cut := size
			for cut > 0 && !utf8.RuneStart(line[cut]) {
				cut--
			}
			line = line[:cut]
		}
		cur.Write(line)
	}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "testdata" || name == "vendor" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for len(b) > 0 {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				i = len(b) - 1
			}
			add(b[:i+1])
			b = b[i+1:]
			if len(out) == n {
				return errEnough
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return nil, fmt.Errorf("reading the corpus: %w", err)
	}
	if len(out) < n {
		return nil, fmt.Errorf("the corpus in %s gives only %d buffers of %d bytes, want %d", dir, len(out), size, n)
	}
	return out, nil
}

// Mem is a process's memory as /proc/PID/status reports it, in KiB.
type Mem struct {
	RSS     int64 // VmRSS: resident now
	HWM     int64 // VmHWM: peak resident
	Threads int64
	// Anon and File split RSS: anonymous memory (heap, stacks) and pages of
	// mapped files (the binary, shared libraries).
	Anon, File int64
}

// ReadMem reads VmRSS, VmHWM, RssAnon, RssFile and Threads of pid.
func ReadMem(pid int) (Mem, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Mem{}, err
	}
	defer f.Close()
	var m Mem
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(val)
		if len(fields) == 0 {
			continue
		}
		v, _ := strconv.ParseInt(fields[0], 10, 64)
		switch name {
		case "VmRSS":
			m.RSS = v
		case "VmHWM":
			m.HWM = v
		case "Threads":
			m.Threads = v
		case "RssAnon":
			m.Anon = v
		case "RssFile":
			m.File = v
		}
	}
	return m, sc.Err()
}

// MinorFaults returns the minor page faults pid has taken, all its threads
// together (minflt, field 10 of /proc/PID/stat): each first touch of a page
// of the binary (the kernel maps up to 16 around it when they are cached),
// of the heap, of a stack.
func MinorFaults(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:])) // from field 3, state
	if len(f) < 8 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	return strconv.ParseInt(f[7], 10, 64)
}

// Descendants returns pid's child processes, their children and so on
// (from /proc/PID/task/*/children).
func Descendants(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			c, err := strconv.Atoi(f)
			if err == nil {
				out = append(out, c)
				out = append(out, Descendants(c)...)
			}
		}
	}
	return out
}

// TreeMem sums ReadMem over pid and its descendants; it also returns how
// many processes that was.
func TreeMem(pid int) (Mem, int, error) {
	total, err := ReadMem(pid)
	if err != nil {
		return Mem{}, 0, err
	}
	n := 1
	for _, c := range Descendants(pid) {
		m, err := ReadMem(c)
		if err != nil {
			continue // it exited meanwhile
		}
		total.RSS += m.RSS
		total.HWM += m.HWM
		total.Threads += m.Threads
		n++
	}
	return total, n, nil
}

// LoadAvg returns the first three fields of /proc/loadavg.
func LoadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// Percentile returns the p-th percentile (0 ≤ p ≤ 100) of xs by the
// nearest-rank method on a sorted copy; NaN for no values.
func Percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	rank = min(max(rank, 1), len(s))
	return s[rank-1]
}

// Median is the middle value (the mean of the two middle ones for an even
// count); NaN for no values.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// MinMax returns the smallest and largest values; NaN, NaN for none.
func MinMax(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	return slices.Min(xs), slices.Max(xs)
}

// Ms converts a duration to float milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
