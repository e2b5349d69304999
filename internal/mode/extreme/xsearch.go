package extreme

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/provider/xai"
)

// XSearchArgs are xSearch's arguments (seed 000 §2.3).
type XSearchArgs struct {
	Query      string   `json:"query" jsonschema:"what to look for in posts on X"`
	StartDate  string   `json:"startDate,omitempty" jsonschema:"first day of the posts, YYYY-MM-DD (default 15 days ago)"`
	EndDate    string   `json:"endDate,omitempty" jsonschema:"last day of the posts, YYYY-MM-DD (default today)"`
	XHandles   []string `json:"xHandles,omitempty" jsonschema:"only posts by these handles, at most 10"`
	MaxResults int      `json:"maxResults,omitempty" jsonschema:"posts to find (default 15, at most 50)"`
}

func (s *session) xSearchTool() agent.Tool {
	return agent.NewTool(XSearchName,
		"Search posts on X (Twitter) for real-time discussions, of the last 15 days unless dates are given; optionally only by some handles. "+
			"Returns what the posts say and the numbered posts to cite.",
		s.xSearch,
		agent.WithTitle(func(a XSearchArgs) string { return "Searching X for “" + a.Query + "”" }))
}

// xSearch is one search of X through xAI (seed 000 §2.3), started and
// completed as x_search parts; each post becomes a citable source.
func (s *session) xSearch(ctx context.Context, a XSearchArgs) (agent.Output, error) {
	q := strings.TrimSpace(a.Query)
	if q == "" {
		return agent.Text("Error: the query is empty."), nil
	}
	part := XPart{Kind: KindX, XSearchID: partID(ctx, "x_"), Query: q, StartDate: a.StartDate, EndDate: a.EndDate, Handles: a.XHandles, Status: QueryStarted}
	id := "x-" + part.XSearchID
	s.parts.emit(id, part)
	fail := func(err error) (agent.Output, error) {
		part.Status, part.Error = QueryError, err.Error()
		s.parts.emit(id, part)
		return agent.Output{}, err
	}
	if s.cfg.Providers.X == nil {
		return fail(errors.New("searching X needs XAI_API_KEY"))
	}
	req := xai.Request{Queries: []string{q}, StartDate: a.StartDate, EndDate: a.EndDate, IncludeHandles: a.XHandles, Now: s.in.Now}
	if a.MaxResults > 0 {
		req.MaxResults = []int{min(a.MaxResults, xai.MaxResults)}
	}
	res, err := xai.Run(ctx, s.cfg.Providers.X, req, nil)
	if err != nil {
		if ctx.Err() != nil {
			return agent.Output{}, ctx.Err()
		}
		return fail(err)
	}
	if len(res.Searches) == 0 {
		return fail(errors.New("the search of X returned nothing"))
	}
	found := res.Searches[0]
	result := &XResult{Content: found.Content, Citations: found.Citations, Sources: []XSource{}}
	for _, p := range found.Sources {
		n := s.addSource(sova.Source{URL: p.Link, Title: p.Title, Snippet: mode.Clip(p.Text, 300), Kind: sova.SourceWeb}, mode.Clip(p.Text, s.cfg.ContentChars))
		result.Sources = append(result.Sources, XSource{Text: p.Text, Link: p.Link, Title: p.Title, Number: n})
	}
	s.mu.Lock()
	s.posts += len(result.Sources)
	s.mu.Unlock()
	part.Status, part.Result = QueryCompleted, result
	part.StartDate, part.EndDate, part.Handles = res.DateRange.FromDate, res.DateRange.ToDate, res.Handles.Included
	s.parts.emit(id, part)
	text, err := json.Marshal(map[string]any{
		"content": found.Content, "citations": found.Citations, "sources": result.Sources,
		"dateRange": res.DateRange, "handles": res.Handles.Included,
	})
	if err != nil {
		return agent.Output{}, err
	}
	return agent.Output{Text: string(text), Summary: fmt.Sprintf("%d posts", len(result.Sources))}, nil
}
