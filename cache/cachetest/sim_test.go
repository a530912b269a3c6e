package cachetest_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kimi-lsp/kimi-lsp/cache/cachetest"
)

func TestTokenize(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"func main() {", []string{"func", " main", "()", " ", "{"}},
		{"ServeHTTP", []string{"ServeH", "TTP"}},
		{"a_b1", []string{"a_b1"}},
		{"  x", []string{"  ", "x"}},
		{"x := 1\n\t\treturn", []string{"x", " ", ":=", " 1", "\n\t\t", "return"}},
		{"}}}\n", []string{"}}", "}", "\n"}},
		{"                  ", []string{"        ", "        ", "  "}},
		{"héllo", []string{"h", "é", "llo"}},
		{"日本", []string{"日", "本"}},
		{"a\xffb", []string{"a", "\xff", "b"}},
		{"\r\n", []string{"\r\n"}},
	}
	for _, tt := range tests {
		toks := cachetest.Tokenize([]byte(tt.in))
		var got []string
		for _, tok := range toks {
			got = append(got, tt.in[tok.Start:tok.End])
		}
		if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
			t.Errorf("Tokenize(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if n := cachetest.Count([]byte(tt.in)); n != len(tt.want) {
			t.Errorf("Count(%q) = %d, want %d", tt.in, n, len(tt.want))
		}
		if n := cachetest.CountString(tt.in); n != len(tt.want) {
			t.Errorf("CountString(%q) = %d, want %d", tt.in, n, len(tt.want))
		}
		b := cachetest.AppendBoundaries(nil, []byte(tt.in))
		if len(b) != len(toks) {
			t.Fatalf("AppendBoundaries(%q) has %d ends, want %d", tt.in, len(b), len(toks))
		}
		for i, tok := range toks {
			if b[i] != tok.End {
				t.Errorf("AppendBoundaries(%q)[%d] = %d, want %d", tt.in, i, b[i], tok.End)
			}
		}
	}
}

// goSources returns the non-test Go files of $GOROOT/src/net/http.
func goSources(t testing.TB) [][]byte {
	t.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		t.Fatalf("go env GOROOT: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "src", "net", "http")
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no Go files in %s: %v", dir, err)
	}
	var srcs [][]byte
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, b)
	}
	return srcs
}

func TestTokenizeGoSourceRatio(t *testing.T) {
	var bytesTotal, tokens int
	for _, src := range goSources(t) {
		bytesTotal += len(src)
		tokens += cachetest.Count(src)
	}
	ratio := float64(bytesTotal) / float64(tokens)
	t.Logf("net/http: %d bytes, %d tokens, %.2f bytes/token", bytesTotal, tokens, ratio)
	if ratio < 3 || ratio > 4 {
		t.Errorf("got %.2f bytes per token on Go source, want between 3 and 4", ratio)
	}
}

func TestTokenizePrefixStable(t *testing.T) {
	src := goSources(t)[0]
	full := cachetest.AppendBoundaries(nil, src)
	for _, cut := range []int{1, 17, 100, len(src) / 2, len(src) - 1} {
		part := cachetest.AppendBoundaries(nil, src[:cut])
		// Every token of the prefix but the last is a token of the whole.
		for i := 0; i < len(part)-1; i++ {
			if part[i] != full[i] {
				t.Fatalf("cut %d: token %d ends at %d, in the whole text at %d", cut, i, part[i], full[i])
			}
		}
	}
}

// text returns n tokens of text: " w0000 w0001 ...", one token per word.
func text(from, n int) []byte {
	var b []byte
	for i := from; i < from+n; i++ {
		b = fmt.Appendf(b, " w%04d", i)
	}
	return b
}

func TestObserve(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	a := text(0, 100) // 100 tokens: 6 blocks of 16 + 4
	if n := cachetest.Count(a); n != 100 {
		t.Fatalf("fixture has %d tokens, want 100", n)
	}
	b := append(append([]byte{}, a[:cachetestBoundary(a, 40)]...), text(5000, 60)...)

	type step struct {
		name                       string
		at                         time.Duration
		prompt                     []byte
		ttl                        time.Duration
		prompt2, cached2, written2 int
	}
	steps := []step{
		{"first request writes every whole block", 0, a, 5 * time.Minute, 100, 0, 96},
		{"same prompt is cached but the partial block", time.Minute, a, 5 * time.Minute, 100, 96, 0},
		{"shared prefix of 40 tokens caches 2 whole blocks", 2 * time.Minute, b, 5 * time.Minute, 100, 32, 64},
		// a was refreshed at 1m, so it lives until 6m.
		{"read refreshed a until 6m", 5*time.Minute + 30*time.Second, a, 5 * time.Minute, 100, 96, 0},
		{"expired after the ttl", 11*time.Minute + 30*time.Second, a, time.Hour, 100, 0, 96},
		{"1h write lives past 5m", 40 * time.Minute, a, 5 * time.Minute, 100, 96, 0},
		// The 5m read at 40m did not shorten the 1h lifetime written at 11m30s.
		{"a 5m read never shortens a 1h entry", 71 * time.Minute, a, 5 * time.Minute, 100, 96, 0},
	}
	sim := cachetest.New(cachetest.Config{BlockTokens: 16})
	for _, st := range steps {
		p, c, w := sim.Observe(t0.Add(st.at), st.prompt, st.ttl)
		if p != st.prompt2 || c != st.cached2 || w != st.written2 {
			t.Errorf("%s: got prompt %d cached %d written %d, want %d %d %d", st.name, p, c, w, st.prompt2, st.cached2, st.written2)
		}
	}
	tot := sim.Totals()
	if tot.Requests != int64(len(steps)) || tot.PromptTokens != 700 || tot.CachedTokens != 96*4+32 || tot.WriteTokens != 96*2+64 {
		t.Errorf("Totals() = %+v", tot)
	}
}

// cachetestBoundary returns the end offset of the n-th token of b.
func cachetestBoundary(b []byte, n int) int {
	return cachetest.AppendBoundaries(nil, b)[n-1]
}

func TestObserveMinTokensAndBlockSize(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := text(0, 600)
	sim := cachetest.New(cachetest.Config{BlockTokens: 256, MinTokens: 1024})
	if _, c, w := sim.Observe(t0, p, 0); c != 0 || w != 0 {
		t.Errorf("short prompt: got cached %d written %d, want 0 0", c, w)
	}
	if _, c, _ := sim.Observe(t0, p, 0); c != 0 {
		t.Errorf("short prompt again: got cached %d, want 0", c)
	}
	long := text(0, 1100)
	if _, c, w := sim.Observe(t0, long, 0); c != 0 || w != 1024 {
		t.Errorf("long prompt: got cached %d written %d, want 0 1024", c, w)
	}
	// The zero ttl means the default 5 minutes.
	if _, c, w := sim.Observe(t0.Add(4*time.Minute), long, 0); c != 1024 || w != 0 {
		t.Errorf("long prompt at 4m: got cached %d written %d, want 1024 0", c, w)
	}
	if _, c, _ := sim.Observe(t0.Add(10*time.Minute), long, 0); c != 0 {
		t.Errorf("long prompt at 10m: got cached %d, want 0", c)
	}
}

func TestObserveChainNotBlock(t *testing.T) {
	// The same block after a different prefix is not a hit.
	t0 := time.Unix(0, 0)
	x, y, z := text(0, 16), text(100, 16), text(200, 16)
	sim := cachetest.New(cachetest.Config{BlockTokens: 16})
	sim.Observe(t0, append(append([]byte{}, x...), z...), 0)
	if _, c, w := sim.Observe(t0, append(append([]byte{}, y...), z...), 0); c != 0 || w != 32 {
		t.Errorf("got cached %d written %d, want 0 32", c, w)
	}
}

func TestPeekAndFlush(t *testing.T) {
	t0 := time.Unix(0, 0)
	p := text(0, 64)
	sim := cachetest.New(cachetest.Config{})
	if _, c, w := sim.Peek(t0, p); c != 0 || w != 64 {
		t.Errorf("Peek before: got cached %d written %d, want 0 64", c, w)
	}
	if sim.Len() != 0 || sim.Totals().Requests != 0 {
		t.Errorf("Peek had side effects: Len %d Totals %+v", sim.Len(), sim.Totals())
	}
	sim.Observe(t0, p, 0)
	if _, c, _ := sim.Peek(t0, p); c != 64 {
		t.Errorf("Peek after: got cached %d, want 64", c)
	}
	sim.Flush()
	if _, c, _ := sim.Observe(t0, p, 0); c != 0 {
		t.Errorf("after Flush: got cached %d, want 0", c)
	}
}

func TestSweepDropsExpired(t *testing.T) {
	t0 := time.Unix(0, 0)
	sim := cachetest.New(cachetest.Config{})
	for i := 0; i < 300; i++ {
		sim.Observe(t0.Add(time.Duration(i)*time.Hour), text(i*10, 32), time.Minute)
	}
	if n := sim.Len(); n > 2*50 {
		t.Errorf("Len() = %d after 300 requests an hour apart, want expired entries swept", n)
	}
}

func TestConcurrent(t *testing.T) {
	t0 := time.Unix(0, 0)
	sim := cachetest.New(cachetest.Config{})
	p := text(0, 160)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				sim.Observe(t0, p, 0)
				sim.Peek(t0, p)
			}
		}()
	}
	wg.Wait()
	tot := sim.Totals()
	if tot.Requests != 400 || tot.WriteTokens != 160 || tot.CachedTokens != 399*160 {
		t.Errorf("Totals() = %+v, want one write and 399 full hits", tot)
	}
}

func BenchmarkObserve(b *testing.B) {
	srcs := goSources(b)
	p := bytes.Join(srcs, nil)
	if len(p) > 1<<20 {
		p = p[:1<<20]
	}
	sim := cachetest.New(cachetest.Config{BlockTokens: 16})
	t0 := time.Unix(0, 0)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		sim.Observe(t0, p, 0)
	}
}
