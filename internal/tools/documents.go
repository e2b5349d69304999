package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/spaces"
)

// PassageSource is the citable source of a document passage. Its Kind
// tells it from web pages; its URL (sova://spaces/…#chunk-N) names the
// passage.
func PassageSource(h spaces.Hit) sova.Source {
	title := h.Document
	if h.Title != "" && h.Title != h.Document {
		title = h.Title + " (" + h.Document + ")"
	}
	if h.Heading != "" {
		title += " — " + h.Heading
	}
	return sova.Source{URL: h.URL, Title: title, Snippet: h.Snippet, Kind: sova.SourceDocument}
}

// SearchDocumentsOptions tune a search_documents tool.
type SearchDocumentsOptions struct {
	// UserID owns the spaces.
	UserID string
	// Spaces are the spaces searched: all of them unless a call names
	// some.
	Spaces []sova.Space
	// Results is the most passages a call returns (default 5).
	Results int
	// Calls is how many searches the tool runs; later calls are refused
	// with a note to answer with what was found. 0: no limit.
	Calls int
	// Cite numbers the passages as citable sources; nil: not numbered.
	Cite *Citations
	// Description replaces the tool's description.
	Description string
}

// SearchDocumentsArgs are search_documents' arguments.
type SearchDocumentsArgs struct {
	Query  string   `json:"query" jsonschema:"what to search for: key terms, names, numbers"`
	Spaces []string `json:"spaces,omitempty" jsonschema:"names of the spaces to search; all when omitted"`
}

// SearchDocuments is the search_documents tool: passages of the person's
// document spaces with their document, position and text, as a JSON
// ResultList.
func SearchDocuments(run *Run, o SearchDocumentsOptions) agent.Tool {
	if o.Results <= 0 {
		o.Results = 5
	}
	desc := o.Description
	if desc == "" {
		desc = "Search the person's document spaces. Returns numbered passages with their document, position and text. Use precise terms; call again with other wording if needed."
	}
	sd := &searchDocuments{run: run, o: o}
	return agent.NewTool(SearchDocumentsName, desc, sd.call,
		agent.WithTitle(func(a SearchDocumentsArgs) string { return "Searching the documents for “" + a.Query + "”" }))
}

type searchDocuments struct {
	run   *Run
	o     SearchDocumentsOptions
	calls counter
}

func (t *searchDocuments) call(ctx context.Context, a SearchDocumentsArgs) (agent.Output, error) {
	a.Query = strings.TrimSpace(a.Query)
	if a.Query == "" {
		return agent.Output{}, errors.New("the query is empty")
	}
	if _, ok := t.calls.take(t.o.Calls); !ok {
		return resultList(ResultList{Query: a.Query, Results: []ResultItem{},
			Note: fmt.Sprintf("The limit of %d document searches is reached: answer with what you found.", t.o.Calls)}), nil
	}
	var ids []string
	for _, s := range t.o.Spaces {
		ids = append(ids, s.ID)
	}
	if len(a.Spaces) > 0 {
		ids = nil
		for _, want := range a.Spaces {
			for _, s := range t.o.Spaces {
				if strings.EqualFold(s.Name, want) || s.ID == want {
					ids = append(ids, s.ID)
				}
			}
		}
		if len(ids) == 0 {
			names := make([]string, len(t.o.Spaces))
			for i, s := range t.o.Spaces {
				names[i] = s.Name
			}
			return agent.Output{}, fmt.Errorf("no space named %s; the spaces are: %s", strings.Join(a.Spaces, ", "), strings.Join(names, ", "))
		}
	}
	if len(ids) == 0 || t.run.p.Documents == nil {
		return resultList(ResultList{Query: a.Query, Results: []ResultItem{}, Note: "There are no document spaces."}), nil
	}
	hits, err := t.run.p.Documents.Search(ctx, t.o.UserID, ids, a.Query, t.o.Results)
	if err != nil {
		return agent.Output{}, err
	}
	out := ResultList{Query: a.Query, Results: make([]ResultItem, 0, len(hits))}
	for _, h := range hits {
		src := PassageSource(h)
		item := ResultItem{Title: src.Title, Source: h.URL, Content: h.Text, Query: a.Query,
			Kind: sova.SourceDocument, Document: h.Document, Space: h.SpaceName, Position: h.Position()}
		if t.o.Cite != nil {
			item.Number = t.o.Cite.Number(src)
		}
		out.Results = append(out.Results, item)
	}
	if len(hits) == 0 {
		out.Note = "Nothing found: try other words."
	}
	return resultList(out), nil
}
