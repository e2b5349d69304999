package tools

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/academic"
)

// AcademicSearchName is the academic group's paper search (seed 000 §3.2).
const AcademicSearchName = academic.ToolName

// AcademicOptions tune an academic_search tool.
type AcademicOptions struct {
	// Cite numbers the papers as citable sources; nil: not numbered.
	Cite *Citations
	// SummaryRunes clips each paper's summary (default 700).
	SummaryRunes int
}

// AcademicSearchArgs are academic_search's arguments (000 §3.2).
type AcademicSearchArgs struct {
	Queries    agent.StringList `json:"queries" jsonschema:"1 to 5 search queries for papers"`
	MaxResults []int            `json:"maxResults,omitempty" jsonschema:"papers per query, in the order of the queries (default 20)"`
}

// AcademicResult is academic_search's output: 000 §3.2's
// {searches: [{query, results: [{url, title, summary, publishedDate,
// authors, …}]}]}, each paper with its citation number.
type AcademicResult struct {
	Searches []AcademicQuery `json:"searches"`
}

// AcademicQuery is one query's papers.
type AcademicQuery struct {
	Query   string  `json:"query"`
	Results []Paper `json:"results"`
	Error   string  `json:"error,omitempty"`
}

// Paper is a paper found, numbered for citation.
type Paper struct {
	Number int `json:"number,omitempty"`
	academic.Paper
}

// AcademicSearch is the academic_search tool: 1–5 queries in parallel
// over the run's paper search (Exa with a key, OpenAlex and arXiv
// without), 20 papers each unless asked, de-duplicated by URL, DOI and
// arXiv id; each query shows as data-query_completion. A query that fails
// is reported in its search; the call fails when every query did.
func AcademicSearch(run *Run, o AcademicOptions) agent.Tool {
	if o.SummaryRunes <= 0 {
		o.SummaryRunes = 700
	}
	call := func(ctx context.Context, a AcademicSearchArgs) (agent.Output, error) {
		if run.p.Academic == nil {
			return agent.Output{}, errors.New("paper search is not available")
		}
		res, err := academic.Run(ctx, run.p.Academic, academic.Request{Queries: a.Queries, MaxResults: a.MaxResults}, run.progress())
		if err != nil {
			return agent.Output{}, err
		}
		out := AcademicResult{Searches: make([]AcademicQuery, len(res.Searches))}
		n := 0
		for i, s := range res.Searches {
			as := AcademicQuery{Query: s.Query, Error: s.Error, Results: make([]Paper, 0, len(s.Results))}
			for _, p := range s.Results {
				p.Summary = clip(p.Summary, o.SummaryRunes)
				src := sova.Source{URL: p.URL, Title: p.Title, Snippet: clip(p.Summary, 300), Kind: sova.SourceWeb, Published: p.PublishedDate}
				as.Results = append(as.Results, Paper{Number: number(o.Cite, src), Paper: p})
			}
			n += len(as.Results)
			out.Searches[i] = as
		}
		return jsonOutput(out, plural(n, "paper", "papers")+" for "+plural(len(out.Searches), "query", "queries"))
	}
	return agent.NewTool(AcademicSearchName,
		"Search scholarly papers (journal articles, conference papers, preprints). Give 1 to 5 queries, each a few keywords; "+
			"returns per query the papers with title, authors, date, venue, abstract and URL, each numbered for citation.",
		call,
		agent.WithTitle(func(a AcademicSearchArgs) string { return "Searching papers for " + quoteList(a.Queries) }),
		queriesSchema("queries", "1 to 5 search queries for papers, each a few keywords (in English for most fields)"))
}

// quoteList is “a”, “b” and “c”.
func quoteList(qs []string) string {
	quoted := make([]string, 0, len(qs))
	for _, q := range qs {
		if q = strings.TrimSpace(q); q != "" {
			quoted = append(quoted, "“"+q+"”")
		}
	}
	switch len(quoted) {
	case 0:
		return "nothing"
	case 1:
		return quoted[0]
	}
	if len(quoted) > 3 {
		return strings.Join(quoted[:3], ", ") + " and " + strconv.Itoa(len(quoted)-3) + " more"
	}
	return strings.Join(quoted[:len(quoted)-1], ", ") + " and " + quoted[len(quoted)-1]
}
