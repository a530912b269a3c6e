package model

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// benchBody returns an SSE body like the provider's: a role chunk, n
// content chunks of a few tokens each, a finish chunk with usage, [DONE].
func benchBody(n int) []byte {
	var b bytes.Buffer
	head := `{"id":"chatcmpl-6adc72a2823cc13b156bf863","object":"chat.completion.chunk","created":1792832163,"model":"kimi-k3.1-pro","choices":[{"index":0,"delta":`
	fmt.Fprintf(&b, "data: %s{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n", head)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "data: %s{\"content\":\"word%d, \\\"quoted\\\" \"},\"finish_reason\":null}]}\n\n", head, i)
	}
	fmt.Fprintf(&b, "data: %s{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":24,\"completion_tokens\":96,\"total_tokens\":120,\"prompt_tokens_details\":{\"cached_tokens\":0}}}\n\n", head)
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// BenchmarkSSEReader measures the SSE framing alone (lines, fields, events).
func BenchmarkSSEReader(b *testing.B) {
	body := benchBody(1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := newSSEReader(bytes.NewReader(body))
		n := 0
		for {
			_, err := r.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
		if n != 1003 {
			b.Fatalf("%d events", n)
		}
	}
}

// BenchmarkSSEReaderCRLFSmallReads: CRLF line ends arriving in 7-byte reads.
func BenchmarkSSEReaderCRLFSmallReads(b *testing.B) {
	body := bytes.ReplaceAll(benchBody(1000), []byte("\n"), []byte("\r\n"))
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		r := newSSEReader(&smallReader{b: body, n: 7})
		for {
			if _, err := r.next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

type smallReader struct {
	b []byte
	n int
}

func (r *smallReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), r.n)], r.b)
	r.b = r.b[n:]
	return n, nil
}

// BenchmarkStreamNext measures the whole per-event path from bytes to typed
// events: SSE framing, chunk JSON decoding, event building.
func BenchmarkStreamNext(b *testing.B) {
	body := benchBody(1000)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	events := 0
	for b.Loop() {
		s := NewStreamReader(io.NopCloser(bytes.NewReader(body)), false)
		for {
			_, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			events++
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
}

// BenchmarkAccumulator measures folding the events of a 1000-chunk reply
// into the final message.
func BenchmarkAccumulator(b *testing.B) {
	ev := Event{Kind: EventContent, Text: strings.Repeat("x", 12)}
	done := Event{Kind: EventDone, FinishReason: FinishStop}
	b.ReportAllocs()
	for b.Loop() {
		var a Accumulator
		for range 1000 {
			a.Add(ev)
		}
		a.Add(done)
		if len(a.Message().Content) != 12000 {
			b.Fatal("lost text")
		}
	}
}
