package extreme

import (
	"context"
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
)

// ResearchPlan is the planning step's structured output (seed 000 §2.1).
type ResearchPlan struct {
	Plan []PlanTheme `json:"plan" jsonschema:"1 to 5 research themes, each with 3 to 5 todos; at most 15 todos in all"`
}

// Plan limits of the seed.
const (
	maxThemes       = 5
	maxTodosPerItem = 5
)

// plan writes the research plan (seed 000 §2.1) and shows it. When the
// model cannot write one, the question itself is the one todo, and the
// run goes on (a model endpoint set up wrongly fails the agent's first
// step next, with what to fix).
func (s *session) plan(ctx context.Context) ([]PlanTheme, error) {
	s.parts.emit("plan", PlanPart{Kind: KindPlan, Status: PlanStatus{Title: "Planning the research"}})
	mode.Status(s.sink, "plan", "Planning the research", "")
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: s.planPrompt()}}
	msgs = append(msgs, mode.LastMessages(s.in.History, s.cfg.HistoryLimit)...)
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: s.in.Question})
	temp := s.cfg.Temperature
	p, _, err := llm.Structured[ResearchPlan](ctx, s.m.model, llm.Request{Messages: msgs, Temperature: &temp}, llm.WithSchemaName("ExtremePlan"))
	plan := normalizePlan(p.Plan, s.cfg.MaxActions)
	if err != nil || len(plan) == 0 {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		detail := "the plan was empty"
		if err != nil {
			detail = err.Error()
		}
		mode.Status(s.sink, "plan", "Could not write a plan; researching the question directly", detail)
		plan = []PlanTheme{{Title: mode.Clip(s.in.Question, 120), Todos: []string{mode.Clip(s.in.Question, 300)}}}
	}
	s.parts.emit("plan", PlanPart{Kind: KindPlan, Status: PlanStatus{Title: "Research plan ready"}, Plan: plan})
	return plan, nil
}

// normalizePlan keeps the seed's bounds whatever the model wrote: at most
// five themes, five todos each and maxActions in all; empty themes and
// todos, and repeated todos, dropped.
func normalizePlan(in []PlanTheme, maxActions int) []PlanTheme {
	seen := map[string]bool{}
	total := 0
	var out []PlanTheme
	for _, th := range in {
		if len(out) == maxThemes || total >= maxActions {
			break
		}
		t := PlanTheme{Title: mode.Clip(th.Title, 200), Todos: []string{}}
		for _, td := range th.Todos {
			td = mode.Clip(strings.Join(strings.Fields(td), " "), 300)
			key := strings.ToLower(td)
			if td == "" || seen[key] || len(t.Todos) == maxTodosPerItem || total >= maxActions {
				continue
			}
			seen[key] = true
			t.Todos = append(t.Todos, td)
			total++
		}
		if len(t.Todos) == 0 {
			continue
		}
		if t.Title == "" {
			t.Title = t.Todos[0]
		}
		out = append(out, t)
	}
	return out
}

// planPrompt is the planning prompt of seed 000 §2.5, with the date and
// the person's language.
func (s *session) planPrompt() string {
	return fmt.Sprintf(`You are a research planning assistant.

Break down the topic into a research plan:
- 1-5 research themes
- 3-5 specific, diverse search queries per theme
- Max %d total actions
- Continue with more specific queries based on initial findings
- Add code tasks when data analysis is needed (calculations, comparisons, charts)
- Technical and specific focus

Return format:
{
  "plan": [
    {
      "title": "Research Theme",
      "todos": ["specific query 1", "specific query 2", ...]
    }
  ]
}

Write the themes and todos in %s, the language of the request. Current date: %s.`,
		s.cfg.MaxActions, s.lang.Name, mode.DateIn(s.in.Now, s.in.Timezone))
}
