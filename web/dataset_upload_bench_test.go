package web_test

import (
	"bytes"
	"fmt"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkDatasetUpload50MB uploads a 50 MB CSV of 100,000 rows (raw
// and as a multipart file) and reports the peak of the process's live
// heap above what it was before the request (the client's copy of the
// file included), sampled every millisecond.
func BenchmarkDatasetUpload50MB(b *testing.B) {
	srv, admin := newTeam(b)
	tok := admin.makeToken("bench", "write", nil).Token
	var f bytes.Buffer
	f.WriteString("question,expected\n")
	pad := strings.Repeat("x", 480)
	for i := 0; f.Len() < 50<<20-600 && i < 100_000; i++ {
		fmt.Fprintf(&f, "q%d %s,answer %d\n", i, pad, i)
	}
	file := f.Bytes()
	b.Logf("file: %.1f MB", float64(len(file))/(1<<20))
	for _, kind := range []struct{ name, fileName, contentType string }{
		{"raw", "", "text/csv"}, {"multipart", "big.csv", ""},
	} {
		b.Run(kind.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				runtime.GC()
				base := heapLive()
				peak := base
				stop := make(chan struct{})
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					t := time.NewTicker(time.Millisecond)
					defer t.Stop()
					for {
						select {
						case <-stop:
							return
						case <-t.C:
							peak = max(peak, heapLive())
						}
					}
				}()
				a := srv.upload(b, tok, fmt.Sprintf("%s %d", kind.name, i), kind.fileName, kind.contentType, file)
				close(stop)
				wg.Wait()
				if a.status != http.StatusCreated {
					b.Fatalf("upload: %d %.300s", a.status, a.body)
				}
				b.ReportMetric(float64(peak-base)/(1<<20), "peak-heap-MB")
			}
		})
	}
}

// heapLive is the bytes of heap objects, live or not yet swept.
func heapLive() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
