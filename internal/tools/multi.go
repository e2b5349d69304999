package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/multiquery"
)

// What the search groups' tools share: the progress of their queries as
// data-query_completion (seed 000 §5.2), citation numbers, and JSON
// output.

// progress returns where a tool call's queries report: the run's sink, as
// query events of a new search round, so that the UI groups the call's
// queries. nil when the run has no sink.
func (r *Run) progress() multiquery.ProgressFunc {
	if r.sink == nil {
		return nil
	}
	round := r.NextRound()
	return func(p multiquery.Progress) {
		q := &event.Query{Query: p.Query, Index: p.Index, Total: p.Total, Status: string(p.Status), Error: p.Error, Iteration: round}
		if p.Status == multiquery.StatusCompleted {
			n := p.ResultsCount
			q.ResultsCount = &n
		}
		r.emit(event.Event{Type: event.TypeQuery, Query: q})
	}
}

// single runs a one-query search, shown as data-query_completion like the
// queries of the multi-query tools.
func single[T any](ctx context.Context, run *Run, q string, search func(ctx context.Context) ([]T, error)) ([]T, error) {
	outs := multiquery.Run(ctx, []string{q}, run.progress(), func(ctx context.Context, _ int, _ string) ([]T, error) {
		return search(ctx)
	})
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return outs[0].Results, outs[0].Err
}

// number numbers src in c (0 when c is nil).
func number(c *Citations, src sova.Source) int {
	if c == nil || src.URL == "" {
		return 0
	}
	return c.Number(src)
}

// jsonOutput is a tool's output as JSON for the model and the UI (the
// tool-result event's output), with a summary for people.
func jsonOutput(v any, summary string) (agent.Output, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return agent.Output{}, fmt.Errorf("encoding the result: %w", err)
	}
	return agent.Output{Text: string(b), Summary: summary}, nil
}

// queriesSchema bounds a queries argument to 1–5 items (000 §3.2–3.4),
// keeping the single-string form StringList accepts.
func queriesSchema(field, desc string) agent.ToolOption {
	return agent.WithSchema(func(s *jsonschema.Schema) {
		old := s.Properties[field]
		if old == nil {
			return
		}
		// A copy: the type schemas of StringList may be shared.
		p := old.CloneSchemas()
		p.Description = desc
		for _, alt := range p.AnyOf {
			if alt.Type == "array" {
				alt.MinItems, alt.MaxItems = jsonschema.Ptr(1), jsonschema.Ptr(multiquery.MaxQueries)
			}
		}
		s.Properties[field] = p
	})
}

// plural is "1 paper", "3 papers".
func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}
