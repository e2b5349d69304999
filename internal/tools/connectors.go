package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
)

// ConnectorsSearchName is the connectors group's tool (seed 000 §1.2).
const ConnectorsSearchName = "connectors_search"

// ConnectorLister lists a person's connected sources (*store.DB).
type ConnectorLister interface {
	ListConnectors(ctx context.Context, userID string) ([]sova.Connector, error)
}

// ConnectorsSearchOptions tune connectors_search.
type ConnectorsSearchOptions struct {
	// UserID owns the connected spaces.
	UserID string
	// Results is the most passages a call returns (default 8).
	Results int
	// Cite numbers the passages as citable sources.
	Cite *Citations
}

// ConnectorsSearchArgs are connectors_search's arguments.
type ConnectorsSearchArgs struct {
	Query string `json:"query" jsonschema:"what to search for in the person's connected sources: key terms, names, numbers"`
}

// ConnectorsSearch is the connectors_search tool: passages of the spaces
// the person keeps in sync with a folder or a WebDAV share, as a
// ResultList.
func ConnectorsSearch(run *Run, o ConnectorsSearchOptions) agent.Tool {
	if o.Results <= 0 {
		o.Results = 8
	}
	call := func(ctx context.Context, a ConnectorsSearchArgs) (agent.Output, error) {
		q := strings.Join(strings.Fields(a.Query), " ")
		if q == "" {
			return agent.Output{}, errors.New("the query is empty")
		}
		if run.p.Connectors == nil || run.p.Documents == nil {
			return agent.Output{}, errors.New("connected sources are not available")
		}
		conns, err := run.p.Connectors.ListConnectors(ctx, o.UserID)
		if err != nil {
			return agent.Output{}, fmt.Errorf("listing the connected sources: %w", err)
		}
		ids := make([]string, 0, len(conns))
		for _, c := range conns {
			ids = append(ids, c.SpaceID)
		}
		if len(ids) == 0 {
			return resultList(ResultList{Query: q, Results: []ResultItem{},
				Note: "No source is connected: a folder or a WebDAV share can be connected to a space in the spaces panel."}), nil
		}
		hits, err := run.p.Documents.Search(ctx, o.UserID, ids, q, o.Results)
		if err != nil {
			return agent.Output{}, err
		}
		out := ResultList{Query: q, Results: make([]ResultItem, 0, len(hits))}
		for _, h := range hits {
			src := PassageSource(h)
			item := ResultItem{Title: src.Title, Source: h.URL, Content: h.Text, Query: q,
				Kind: sova.SourceDocument, Document: h.Document, Space: h.SpaceName, Position: h.Position()}
			if o.Cite != nil {
				item.Number = o.Cite.Number(src)
			}
			out.Results = append(out.Results, item)
		}
		if len(hits) == 0 {
			out.Note = "Nothing found in the connected sources: try other words."
		}
		return resultList(out), nil
	}
	return agent.NewTool(ConnectorsSearchName, "Search the person's connected sources (folders and WebDAV/Nextcloud shares kept in sync with their spaces). Returns numbered passages with their document and position.", call,
		agent.WithTitle(func(a ConnectorsSearchArgs) string { return "Searching connected sources for “" + a.Query + "”" }))
}
