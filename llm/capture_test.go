package llm

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
)

// TestCaptureBodyBlocks checks the block-wise capture against the plain
// append it replaced: same bytes, same cap and note, for reads of every
// size, with the raw answer asked for in the middle of the stream too.
func TestCaptureBodyBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, total := range []int{0, 1, firstRawBlock, firstRawBlock + 1, 300 << 10, MaxRawResponse, MaxRawResponse + 5000} {
		src := make([]byte, total)
		for i := range src {
			src[i] = byte(rng.IntN(256))
		}
		b := &captureBody{r: bytes.NewReader(src)}
		var want []byte
		var held [][]byte // slices handed out earlier must not change
		var heldCopy [][]byte
		buf := make([]byte, 40<<10)
		for {
			n, err := b.Read(buf[:1+rng.IntN(len(buf))])
			if rng.IntN(10) == 0 {
				r := b.raw()
				held, heldCopy = append(held, r), append(heldCopy, bytes.Clone(r))
			}
			if n > 0 && len(want) < MaxRawResponse {
				room := MaxRawResponse - len(want)
				if n <= room {
					want = append(want, buf[:n]...)
				} else {
					want = append(want, buf[:room]...)
					want = append(want, rawCapNote...)
				}
			}
			if err == io.EOF {
				break
			}
		}
		if got := b.raw(); !bytes.Equal(got, want) {
			t.Fatalf("total %d: captured %d bytes, want %d", total, len(got), len(want))
		}
		if got := b.raw(); !bytes.Equal(got, want) {
			t.Fatalf("total %d: second raw() differs", total)
		}
		for i := range held {
			if !bytes.Equal(held[i], heldCopy[i]) {
				t.Fatalf("total %d: a raw answer handed out changed", total)
			}
		}
		if b.total != int64(total) {
			t.Fatalf("total %d counted as %d", total, b.total)
		}
	}
}
