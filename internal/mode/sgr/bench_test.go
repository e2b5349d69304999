package sgr

import (
	"fmt"
	"testing"

	"github.com/sova-ai/sova/internal/mode"
)

// BenchmarkAgentRun measures a whole five-step agent (plan, search, read
// two pages, report, final answer) against instant local fakes: the cost
// of Sova's own work per run — schema building, structured-output
// validation, the HTTP round trips to the fakes, page extraction, citation
// checks and a SQLite write after every step.
func BenchmarkAgentRun(b *testing.B) {
	e := newEnv(b)
	e.scriptResearch(1)
	m := e.mode(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res, _, err := e.run(b, m, mode.Input{RunID: fmt.Sprintf("bench-%d", i), UserID: "ann", Question: question})
		if err != nil || res.Report == "" {
			b.Fatalf("run: %v", err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/5/1000, "ms/step")
}
