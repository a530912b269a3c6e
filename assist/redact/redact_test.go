package redact

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

const key = "sk-live-9f8e7d6c5b4a39281706ABCD"

// The one suite of every form a secret takes on its way out.

func TestString(t *testing.T) {
	r := New("secret-aaaa", "secret-aaaa-longer", "abc", "  padded-key  ")
	tests := []struct{ in, want string }{
		{"nothing here", "nothing here"},
		{"secret-aaaa", "[REDACTED]"},
		{"x secret-aaaa-longer y", "x [REDACTED] y"}, // the longer secret whole
		{"abc is too short to be a secret", "abc is too short to be a secret"},
		{"a padded-key inside", "a [REDACTED] inside"},
		{"Authorization: Bearer tok_0123456789", "Authorization: Bearer [REDACTED]"},
		{"authorization: BEARER  eyJhbGciOi.J9.x-_~+/= rest", "authorization: BEARER  [REDACTED] rest"},
		{"Bearer short", "Bearer short"},
		{"bearer_token=1; Bearer", "bearer_token=1; Bearer"},
		{"Bearer secret-aaaa", "Bearer [REDACTED]"},
		{"Bearer x\nBearer 0123456789abcdef Bearer 0123456789abcdef", "Bearer x\nBearer [REDACTED] Bearer [REDACTED]"},
	}
	for _, tt := range tests {
		if got := r.String(tt.in); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	var nilR *Redactor
	if got := nilR.String("Bearer 0123456789abcdef"); got != "Bearer [REDACTED]" {
		t.Errorf("nil Redactor: %q", got)
	}
	if got := String("key "+key, key); got != "key [REDACTED]" {
		t.Errorf("String(…, key) = %q", got)
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.String("a log line with nothing secret in it at all") }); n != 0 {
		t.Errorf("String allocates %v times with nothing to redact", n)
	}
}

// Keys strikes the known secrets only: the model's code may say Bearer.
func TestKeys(t *testing.T) {
	r := New(key)
	in := `req.Header.Set("Authorization", "Bearer abcdefghijklmnop") // ` + key
	want := `req.Header.Set("Authorization", "Bearer abcdefghijklmnop") // [REDACTED]`
	if got := r.Keys(in); got != want {
		t.Errorf("Keys = %q, want %q", got, want)
	}
}

// TestJSONEscaped: a key inside a JSON string, with escapes on both sides,
// and a key holding characters JSON escapes, as it appears in a JSON
// document (with and without HTML escaping).
func TestJSONEscaped(t *testing.T) {
	plain := New(key)
	doc, _ := json.Marshal(map[string]string{"error": "line one\n\t\"" + key + "\"\\ line two"})
	if got := plain.String(string(doc)); strings.Contains(got, key) || !strings.Contains(got, `\"[REDACTED]\"\\`) {
		t.Errorf("key inside escapes: %s", got)
	}
	odd := `sk-a"b\c<d>&e` + "\tf"
	r := New(odd)
	for _, html := range []bool{true, false} {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(html)
		enc.Encode(map[string]string{"key": odd, "msg": "the key " + odd + " was refused"})
		got := r.String(b.String())
		if strings.Count(got, Marker) != 2 {
			t.Errorf("html=%v: %s → %s", html, b.String(), got)
		}
		var back map[string]string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back["key"] != Marker {
			t.Errorf("html=%v: the struck document is no longer the same JSON: %v %q", html, err, got)
		}
	}
	if got := r.String("raw " + odd); got != "raw "+Marker {
		t.Errorf("raw form: %q", got)
	}
}

// TestStream: a key split across chunks, anywhere and in any number of
// pieces, is struck; what is held back is released by the next chunk or by
// Flush.
func TestStream(t *testing.T) {
	r := New(key, "short-key-2")
	text := "The key is " + key + ", and again:" + key + ". Also short-key-2 and a partial " + key[:10] + " end sk-live"
	want := r.Keys(text)
	for size := 1; size <= len(text); size++ {
		s := r.Stream()
		var out strings.Builder
		for i := 0; i < len(text); i += size {
			piece := s.Write(text[i:min(i+size, len(text))])
			if strings.Contains(out.String()+piece, key) {
				t.Fatalf("size %d: the key was passed on", size)
			}
			out.WriteString(piece)
		}
		out.WriteString(s.Flush())
		if out.String() != want {
			t.Fatalf("size %d: %q, want %q", size, out.String(), want)
		}
	}
	s := New("").Stream() // no key: nothing held
	if got := s.Write("sk-"); got != "sk-" || s.Flush() != "" {
		t.Errorf("without a key the stream held %q", got)
	}
}

type detailed struct{ err error }

func (d detailed) Error() string { return "short" }
func (d detailed) Unwrap() error { return d.err }
func (d detailed) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('+') {
		fmt.Fprintf(f, "short: detail: %+v", d.err)
		return
	}
	fmt.Fprint(f, d.Error())
}

// TestError: the text and every fmt form of a wrapped error are struck, and
// the chain stays.
func TestError(t *testing.T) {
	r := New(key)
	base := errors.New("401: key " + key + " rejected")
	err := r.Error(fmt.Errorf("model: %w", base))
	if !errors.Is(err, base) {
		t.Errorf("Is(base) = false")
	}
	for _, f := range []string{"%v", "%+v", "%s", "%q", "%#v"} {
		if s := fmt.Sprintf(f, err); strings.Contains(s, key) || !strings.Contains(s, Marker) && f != "%#v" {
			t.Errorf("%s: %s", f, s)
		}
	}
	if s := fmt.Sprintf("%v", fmt.Errorf("outer: %w", err)); strings.Contains(s, key) {
		t.Errorf("wrapped again: %s", s)
	}
	// A %+v that adds detail is struck too, even when Error() is clean.
	d := r.Error(detailed{base})
	if s := fmt.Sprintf("%+v", d); strings.Contains(s, key) || !strings.Contains(s, "detail") {
		t.Errorf("%%+v of a detailed error: %s", s)
	}
	if d.Error() != "short" {
		t.Errorf("Error() = %q", d.Error())
	}
	plain := errors.New("fine")
	if r.Error(plain) != plain || r.Error(nil) != nil {
		t.Errorf("Error changed an error with nothing to redact")
	}
	if e := Error(base, key); strings.Contains(e.Error(), key) {
		t.Errorf("Error(base, key) = %q", e)
	}
}

// TestShortKeys: a key under MinKeyLen is not struck anywhere.
func TestShortKeys(t *testing.T) {
	r := New("x", "abc")
	if got := r.String("x marks abc"); got != "x marks abc" {
		t.Errorf("String = %q", got)
	}
	s := r.Stream()
	if got := s.Write("ab"); got != "ab" {
		t.Errorf("a short key was held back: %q", got)
	}
}

// TestConcurrentSet changes the secrets while other goroutines redact; run
// with -race.
func TestConcurrentSet(t *testing.T) {
	r := New(key)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if strings.Contains(r.String("msg "+key), key) {
					t.Error("key passed")
					return
				}
			}
		}()
	}
	for i := range 200 {
		r.Set(key, fmt.Sprintf("rotating-%08d", i))
	}
	wg.Wait()
}

func FuzzRedact(f *testing.F) {
	f.Add("line with sk-0123456789 inside", "sk-0123456789", 3)
	f.Add("Authorization: Bearer abcdefgh12345678", "zzzz", 1)
	f.Add("bearerbearer Bearer  Bearer x", "Bearer", 2)
	f.Add(`{"k":"a\"b"}`, `a"b!`, 4)
	f.Add("", "", 0)
	f.Fuzz(func(t *testing.T, s, secret string, size int) {
		r := New(secret)
		got := r.String(s)
		secret = strings.TrimSpace(secret)
		held := len(secret) >= MinKeyLen && !strings.ContainsAny(secret, "[]") && !strings.Contains(secret, "REDACTED")
		// The only way back in is through the marker's letters.
		if held && strings.Contains(strings.ReplaceAll(got, Marker, "\x00"), secret) {
			t.Fatalf("String(%q) = %q still holds %q", s, got, secret)
		}
		if size <= 0 || size > 64 {
			size = 7
		}
		st := r.Stream()
		var out strings.Builder
		for i := 0; i < len(s); i += size {
			out.WriteString(st.Write(s[i:min(i+size, len(s))]))
		}
		out.WriteString(st.Flush())
		if out.String() != r.Keys(s) && held {
			// Chunks may strike a secret that overlaps the marker's
			// letters differently; they never pass the secret on.
			if strings.Contains(strings.ReplaceAll(out.String(), Marker, "\x00"), secret) {
				t.Fatalf("stream of %q in %d-byte chunks = %q holds %q", s, size, out.String(), secret)
			}
		}
	})
}

func BenchmarkStringClean(b *testing.B) {
	r := New(key)
	s := "POST https://direct.evolink.ai/v1/chat/completions: 200 OK in 812ms, 4096 prompt tokens"
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(s)
	}
}

func BenchmarkStringHit(b *testing.B) {
	r := New(key)
	s := "POST https://direct.evolink.ai/v1/chat/completions with Authorization: Bearer " + key
	b.ReportAllocs()
	for b.Loop() {
		_ = r.String(s)
	}
}
