package spaces

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestUploadPeakMemory measures the heap an upload of each text format
// takes in this process, from the file in memory to its chunks written
// (BM25 only, no embedding model). It runs with SOVA_UPLOAD_MEMORY_MB set
// to the file size in MiB; the figures are in docs/benchmarks.md:
//
//	SOVA_UPLOAD_MEMORY_MB=49 go test -count=1 -run TestUploadPeakMemory -v ./internal/spaces
func TestUploadPeakMemory(t *testing.T) {
	mb := os.Getenv("SOVA_UPLOAD_MEMORY_MB")
	if mb == "" {
		t.Skip("set SOVA_UPLOAD_MEMORY_MB (e.g. 49) to measure")
	}
	var size int
	if _, err := fmt.Sscan(mb, &size); err != nil || size < 1 {
		t.Fatalf("SOVA_UPLOAD_MEMORY_MB=%q", mb)
	}
	para := "Пример абзаца о бюджете города, в котором есть цифры 1930 и 2024, и ещё немного текста для длины. "
	for _, tc := range []struct{ name, ext, head, sep string }{
		{"markdown", ".md", "## Раздел %d\n\n", "\n\n"},
		{"text", ".txt", "Раздел %d\n\n", "\n\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for i := 0; b.Len() < size<<20; i++ {
				if i%20 == 0 {
					fmt.Fprintf(&b, tc.head, i/20)
				}
				b.WriteString(para)
				b.WriteString(tc.sep)
			}
			data := []byte(b.String())
			b = strings.Builder{}
			e := newEnv(t, Config{}, nil, nil)
			sp := e.space(t, "big")
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			var peak atomic.Uint64
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				var m runtime.MemStats
				for {
					runtime.ReadMemStats(&m)
					if m.HeapInuse > peak.Load() {
						peak.Store(m.HeapInuse)
					}
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			start := time.Now()
			res := e.add(t, sp.ID, BytesFile("big"+tc.ext, data))
			took := time.Since(start)
			close(stop)
			<-done
			extra := float64(peak.Load()-base.HeapInuse) / (1 << 20)
			t.Logf("%s: %d MiB file, %d chunks, peak heap %.0f MiB above the start (%.1f× the file), %s",
				tc.name, len(data)>>20, res[0].Document.ChunkCount, extra, extra/float64(len(data)>>20), took.Round(time.Second))
		})
	}
}
