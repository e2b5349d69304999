package search

import (
	"context"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/mode"
)

// BenchmarkSearchRun is one whole `search` run (rewrite, 3+2 queries over
// 2 iterations, 4 pages read and summarised, streamed synthesis) against
// instant local fakes: what remains is Sova's own orchestration, HTTP to
// the fakes on loopback and HTML extraction. DESIGN §6 budget: < 50 ms.
func BenchmarkSearchRun(b *testing.B) {
	e := newSearchEnvTB(b)
	m := e.mode(b)
	in := mode.Input{Question: "How did presidents describe the economy in the 1930s?", Now: time.Now()}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := m.Run(context.Background(), in, event.Discard); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchFanOut runs `search` against fakes that add latency
// (model 40 ms per call, search 100 ms, page 100 ms) and reports the
// run's wall-clock over its critical path. The critical path is the chain
// of steps that cannot overlap: rewrite, query generation, search,
// follow-ups, search, read, summarise, synthesise = 5 model calls + 2
// searches + 1 page. DESIGN §6 budget: ≤ 1.2.
func BenchmarkSearchFanOut(b *testing.B) {
	const model, searchLat, page = 40 * time.Millisecond, 100 * time.Millisecond, 100 * time.Millisecond
	e := newSearchEnvTB(b)
	e.model.Latency = model
	e.sx.SetDelay(searchLat)
	e.site.SetDelay(page)
	m := e.mode(b)
	in := mode.Input{Question: "How did presidents describe the economy in the 1930s?", Now: time.Now()}
	critical := 5*model + 2*searchLat + page
	var total time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		if _, err := m.Run(context.Background(), in, event.Discard); err != nil {
			b.Fatal(err)
		}
		total += time.Since(start)
	}
	b.ReportMetric(float64(total)/float64(b.N)/float64(critical), "x-critical-path")
}
