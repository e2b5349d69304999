package research

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/event/eventtest"
	"github.com/sova-ai/sova/internal/mode"
)

// A run cut short mid-research and continued (mode.Input.Continued) goes
// on from its last checkpoint: the initial search, the clarification
// check, the analysis, the plan, the team and every task finished before
// the checkpoint are not asked of the model again, the supervisor's call
// count goes on, and the report is whole.
func TestContinuedRunGoesOnFromCheckpoint(t *testing.T) {
	e := newEnv(t)
	e.sc.tasksPerAgent = 2
	ws := NewMemWorkspace()
	in := mode.Input{Question: question, Workspace: ws, Now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}

	// The node stops while the supervisor makes its second review.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	go func() {
		for e.sc.count("supervisor") < 2 && ctx.Err() == nil {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	var rec eventtest.Recorder
	if _, err := e.mode(t).Run(ctx, in, &rec); err == nil {
		t.Fatal("the cut-short run succeeded")
	}
	doc, err := ws.Read(context.Background(), fileCheckpoint)
	if err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}
	var cp checkpoint
	if err := json.Unmarshal([]byte(doc), &cp); err != nil || cp.Phase != phaseBoard {
		t.Fatalf("checkpoint phase %q: %v", cp.Phase, err)
	}
	done := map[string]bool{}
	for i, a := range cp.Board.Agents {
		for _, td := range a.Todos {
			if td.Status == TodoDone {
				done[agentID(i)+"/"+td.Title] = true
			}
		}
	}
	if len(done) == 0 {
		t.Fatal("no task was finished before the checkpoint")
	}
	before := map[string]int{}
	for _, k := range []string{"search-pipeline", "ClarificationCheck", "QueryAnalysis", "ResearchPlan", "AgentTeam"} {
		before[k] = e.sc.count(k)
	}
	e.sc.mu.Lock()
	stepsBefore := maps.Clone(e.sc.steps)
	e.sc.mu.Unlock()

	in.Continued = true
	res, rec2 := e.run(t, in)
	if res.Report == "" || !strings.Contains(res.Report, "## Conclusion") {
		t.Fatalf("report after continuing is not whole:\n%s", res.Report)
	}
	for k, n := range before {
		if got := e.sc.count(k); got != n {
			t.Errorf("%s asked %d times after continuing, want none (was %d)", k, got-n, n)
		}
	}
	e.sc.mu.Lock()
	for task := range done {
		if e.sc.steps[task] != stepsBefore[task] {
			t.Errorf("finished task %s was worked on again: %d model calls before, %d after", task, stepsBefore[task], e.sc.steps[task])
		}
	}
	e.sc.mu.Unlock()
	if reviews := e.sc.count("supervisor"); reviews > 2+e.cfg.MaxSupervisorCalls*e.cfg.SupervisorMaxIterations {
		t.Errorf("%d supervisor calls", reviews)
	}
	stages := map[string]bool{}
	for _, ev := range rec2.Events() {
		if ev.Status != nil {
			stages[ev.Status.Stage] = true
		}
	}
	if !stages["continue"] || stages["plan"] || stages["analyze"] {
		t.Errorf("stages of the continued run: %v; want continue, not plan or analyze", stages)
	}
}

func agentID(i int) string { return "agent_" + string(rune('1'+i)) }

// A run continued after its report was written (the node stopped while
// it streamed, or before the run engine kept its end) streams that report
// again without asking the model: the same text, so the run engine can
// leave out what the client had of it.
func TestContinuedRunKeepsTheWrittenReport(t *testing.T) {
	e := newEnv(t)
	ws := NewMemWorkspace()
	in := mode.Input{Question: question, Workspace: ws, Now: time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)}
	first, _ := e.run(t, in)
	var cp checkpoint
	if doc, err := ws.Read(context.Background(), fileCheckpoint); err != nil || json.Unmarshal([]byte(doc), &cp) != nil || cp.Phase != phaseWritten || cp.Report == nil {
		t.Fatalf("checkpoint after the report: phase %q, %v", cp.Phase, err)
	}
	asked := e.sc.model.Count()

	in.Continued = true
	res, rec := e.run(t, in)
	if n := e.sc.model.Count() - asked; n != 0 {
		t.Errorf("the continued run asked the model %d times, want none", n)
	}
	if res.Text != first.Text || res.Report != first.Report || len(res.Sources) != len(first.Sources) {
		t.Errorf("report after continuing differs:\n%s\nwant\n%s", res.Text, first.Text)
	}
	text := ""
	for _, ev := range rec.Filter(event.TypeTextDelta) {
		text += ev.Text
	}
	if text != first.Text {
		t.Errorf("the continued run streamed %d characters, want the report's %d", len(text), len(first.Text))
	}
}
