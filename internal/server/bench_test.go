package server_test

import (
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"
)

// BenchmarkFirstByte measures the time from sending POST /api/search to
// reading the first byte of the stream, with instant fakes: request
// decoding, validation, storing the chat and the question, and the start
// frame. DESIGN §6 budget: < 100 ms. It reports the median and p99.
func BenchmarkFirstByte(b *testing.B) {
	e := newEnvTB(b, nil)
	body := `{"group":"search","messages":[{"role":"user","content":"How did presidents describe the economy in the 1930s?"}]}`
	var firsts []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		resp, err := http.Post(e.srv.URL+"/api/search", "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		one := make([]byte, 1)
		if _, err := io.ReadFull(resp.Body, one); err != nil {
			b.Fatal(err)
		}
		firsts = append(firsts, time.Since(start))
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
	b.ReportMetric(float64(firsts[len(firsts)/2].Microseconds())/1000, "ms-first-byte-p50")
	b.ReportMetric(float64(firsts[len(firsts)*99/100].Microseconds())/1000, "ms-first-byte-p99")
}
