package sgr

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/llm/llmtest"
	"github.com/sova-ai/sova/internal/mode"
)

// answersIn counts the messages of the agent's stored conversation that
// carry answer as the person's answers.
func answersIn(t *testing.T, a *sova.Agent, answer string) int {
	t.Helper()
	var mem memory
	if err := json.Unmarshal(a.Context, &mem); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range mem.Conversation {
		if m.Role == "user" && m.Content == answersMessage(answer) {
			n++
		}
	}
	return n
}

// A run answered and then executed again after its node stopped (the run
// still carries the answers) goes on from its agent: the answers were
// stored with the agent as it took them, before any step, and are not
// handed to it twice; an agent that asked again meanwhile waits again.
func TestContinuedAnsweredRunGoesOnFromItsAgent(t *testing.T) {
	e := newEnv(t)
	m := e.mode(t)
	e.script(1, next(ToolClarification, map[string]any{
		"unclear_terms": []string{"presidents"}, "assumptions": []string{"US presidents", "Hoover and Roosevelt"},
		"questions": []string{"Which country?"},
	}))
	res, _, err := e.run(t, m, mode.Input{RunID: "agent-k", UserID: "ann", Question: question})
	if err != nil || res.Pause == nil {
		t.Fatalf("the question: %+v, %v", res, err)
	}
	const answer = "The US."
	resume := &mode.Resume{State: res.Pause.State, Answer: answer}

	// The node stops during the first step after the answers: the step's
	// model call finds them stored already, and the run is stopped there.
	e.sx.SetDelay(2 * time.Second)
	e.script(2, next(ToolWebSearch, map[string]any{"query": "slow", "max_results": 3}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stored := -1
	e.mu.Lock()
	step2 := e.steps[2]
	e.steps[2] = func(r *llmtest.Request) llmtest.Reply {
		if a, err := e.st.GetAgent(context.Background(), "ann", "agent-k"); err == nil {
			stored = answersIn(t, a, answer)
		}
		return step2(r)
	}
	e.mu.Unlock()
	stop := event.SinkFunc(func(ev event.Event) {
		if ev.Type == event.TypeQuery && ev.Query.Status == event.QueryStarted {
			cancel()
		}
	})
	if _, err := m.Run(ctx, mode.Input{RunID: "agent-k", UserID: "ann", Question: question, Resume: resume}, stop); err == nil {
		t.Fatal("the stopped run: no error")
	}
	if stored != 1 {
		t.Errorf("at the first step after the answers, the stored agent held them %d times, want 1", stored)
	}

	// Executed again with the same answers, it goes on and asks again.
	e.sx.SetDelay(0)
	e.script(3, next(ToolClarification, map[string]any{
		"unclear_terms": []string{"years"}, "assumptions": []string{"1930 to 1939", "the Depression years"},
		"questions": []string{"Which years?"},
	}))
	res, _, err = e.run(t, m, mode.Input{RunID: "agent-k", UserID: "ann", Question: question, Resume: resume, Continued: true})
	if err != nil || res.Pause == nil || !strings.Contains(res.Text, "Which years?") {
		t.Fatalf("the continued run: %+v, %v", res, err)
	}
	if a := e.agent(t, "agent-k"); a.State != sova.AgentWaiting || answersIn(t, a, answer) != 1 {
		t.Errorf("after the continued run: state %s, answers held %d times", a.State, answersIn(t, a, answer))
	}

	// Executed again once more (its node stopped before the run's row said
	// it waits): the agent waits for its newer question, the old answers
	// are not taken for them.
	res, _, err = e.run(t, m, mode.Input{RunID: "agent-k", UserID: "ann", Question: question, Resume: resume, Continued: true})
	if err != nil || res.Pause == nil || !strings.Contains(res.Text, "Which years?") {
		t.Fatalf("executed again while the agent waits: %+v, %v", res, err)
	}
	if n := len(e.requests(4)); n != 0 {
		t.Errorf("the waiting agent was stepped on %d times", n)
	}
}
