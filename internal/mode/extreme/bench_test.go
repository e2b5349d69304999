package extreme

import (
	"context"
	"errors"
	"testing"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/sandbox"
	"github.com/sova-ai/sova/internal/sovatest"
	"github.com/sova-ai/sova/internal/tools"
)

// BenchmarkCodeRunnerCell is one codeRunner cell as an extreme run pays
// for it: the sandbox's start-up and the code (a matplotlib bar chart,
// sovatest.ExtremeCode), then the chart checked and kept as a run file and
// the cell's parts emitted. docs/benchmarks.md has the figures.
func BenchmarkCodeRunnerCell(b *testing.B) {
	sb, err := sandbox.New(context.Background(), sandbox.Config{})
	if errors.Is(err, sandbox.ErrUnavailable) {
		b.Skipf("the code sandbox cannot run here: %v (install bubblewrap and python3-matplotlib)", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	s := &session{
		cfg: Config{}.withDefaults(), in: mode.Input{RunID: "run_1"}, sink: event.Discard, parts: newParts(event.Discard),
		files: tools.NewCodeFiles(0), ws: newMemFiles(), charts: map[string][]byte{},
	}
	s.cfg.Providers.Sandbox = sb
	for b.Loop() {
		s.files = tools.NewCodeFiles(0) // a run's worth of charts each time
		run := tools.CodeInterpreter(sb, tools.CodeOptions{Name: CodeRunnerName, Files: s.files}).(agent.Runner)
		if _, err := s.runCode(b.Context(), run, tools.CodeArgs{Title: "GDP growth by decade", Code: sovatest.ExtremeCode}); err != nil {
			b.Fatal(err)
		}
		if c := s.cells[len(s.cells)-1]; len(c.charts) != 1 || c.charts[0].URL == "" {
			b.Fatalf("cell %+v", c)
		}
	}
}
