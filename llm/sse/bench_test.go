package sse

import (
	"fmt"
	"strings"
	"testing"
)

// cerebrasStream is a realistic gpt-oss-120b answer as Cerebras streams
// it: a role chunk, reasoning chunks, content chunks, a finish chunk with
// usage and time_info, and [DONE].
func cerebrasStream(tokens int) string {
	var b strings.Builder
	const head = `{"id":"chatcmpl-2f6a3f0e-9a1c-4a5e-9a43-0d2c1b7e8f11","choices":[{"delta":`
	const tail = `,"index":0}],"created":1764441600,"model":"gpt-oss-120b","system_fingerprint":"fp_3a8c2e1f","object":"chat.completion.chunk"}`
	fmt.Fprintf(&b, "data: %s{\"role\":\"assistant\"}%s\n\n", head, tail)
	for i := range tokens {
		field := "content"
		if i < tokens/4 {
			field = "reasoning"
		}
		fmt.Fprintf(&b, "data: %s{\"%s\":\" tok%d\"}%s\n\n", head, field, i, tail)
	}
	fmt.Fprintf(&b, "data: %s{},\"finish_reason\":\"stop\"%s\n\n", head, strings.Replace(tail, "}],", `}],"usage":{"prompt_tokens":40,"completion_tokens":1000,"total_tokens":1040,"prompt_tokens_details":{"cached_tokens":0}},"time_info":{"queue_time":0.0001,"prompt_time":0.002,"completion_time":0.33,"total_time":0.34,"created":1764441600.1},`, 1))
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// loopReader serves the same bytes forever, in reads of at most chunk
// bytes, as a network body would.
type loopReader struct {
	data  []byte
	off   int
	chunk int
}

func (r *loopReader) Read(p []byte) (int, error) {
	if r.off == len(r.data) {
		r.off = 0
	}
	n := copy(p[:min(len(p), r.chunk)], r.data[r.off:])
	r.off += n
	return n, nil
}

// BenchmarkReader decodes one event per op from an endless Cerebras
// stream, so allocs/op is allocations per event.
func BenchmarkReader(b *testing.B) {
	stream := cerebrasStream(1000)
	for _, chunk := range []int{512, 32 << 10} {
		b.Run(fmt.Sprintf("read=%d", chunk), func(b *testing.B) {
			r := NewReader(&loopReader{data: []byte(stream), chunk: chunk})
			var bytes int
			b.ReportAllocs()
			for b.Loop() {
				e, err := r.Next()
				if err != nil {
					b.Fatal(err)
				}
				bytes += len(e.Data)
			}
			b.SetBytes(int64(len(stream)) / 1002)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
			if bytes == 0 {
				b.Fatal("no data decoded")
			}
		})
	}
}

func TestCerebrasStreamDecodes(t *testing.T) {
	got, err := decodeAll(t, strings.NewReader(cerebrasStream(10)))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 13 || got[12].Data != "[DONE]" {
		t.Fatalf("got %d events, last %q", len(got), got[len(got)-1].Data)
	}
}
