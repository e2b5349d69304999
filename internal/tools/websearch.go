package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/search"
)

// Names of the shared tools, as the seeds name them.
const (
	WebSearchName       = "web_search"
	RetrieveName        = "retrieve"
	SearchDocumentsName = "search_documents"
)

// Format is how a search tool shows its results to the model.
type Format int

const (
	// JSON is {"query", "results": [{number, title, source, content,
	// query, kind, …}], "note"}: the shape seed 003's source parser reads
	// back (ResultList). Results are numbered when the tool has Citations.
	JSON Format = iota
	// Text is a numbered list of titles, URLs and snippets with advice on
	// what to do next: deep_research's researchers read it.
	Text
)

// WebSearchOptions tune a web_search tool.
type WebSearchOptions struct {
	// Results is the most results a call returns (default 5).
	Results int
	// Calls is how many searches the tool runs; later calls are refused
	// with a note to answer with what was found. 0: no limit.
	Calls int
	// Reformulations is how many searches the tool runs after the first
	// (deep_research's limit per task). 0: no limit.
	Reformulations int
	// MaxQueryRunes refuses longer queries: search engines reject or
	// mangle them, and a model writing paragraphs into the query box
	// should be told. 0: no limit.
	MaxQueryRunes int
	Language      string
	BlockList     search.BlockList
	Format        Format
	// Cite numbers the results as citable sources; nil: not numbered.
	Cite *Citations
	// Found records the results seen; nil: not recorded.
	Found *Found
	// ReadTool and DoneTool name the tools the Text format's advice
	// points to (scrape_url, done); empty: not mentioned.
	ReadTool, DoneTool string
	// Description replaces the tool's description.
	Description string
}

// WebSearchArgs are web_search's arguments.
type WebSearchArgs struct {
	Query string `json:"query" jsonschema:"a natural web search query, as a person would type it into a browser"`
}

// WebSearch is the web_search tool: a search of the run's provider whose
// results, deduplicated and without blocked sites, go back to the model.
// In a run with a sink, the query shows as data-query_completion and the
// results as sources.
func WebSearch(run *Run, o WebSearchOptions) agent.Tool {
	if o.Results <= 0 {
		o.Results = 5
	}
	desc := o.Description
	if desc == "" {
		desc = "Search the web. Returns numbered results with title, URL and content."
		if o.Format == Text {
			desc = "Search the web. Returns results with title, url and snippet."
		}
	}
	ws := &webSearch{run: run, o: o}
	return agent.NewTool(WebSearchName, desc, ws.call,
		agent.WithTitle(func(a WebSearchArgs) string { return "Searching the web for “" + a.Query + "”" }))
}

type webSearch struct {
	run   *Run
	o     WebSearchOptions
	calls counter
}

// take counts a search against the limits; it returns the refusal when
// one is reached, and the reformulations left after this search.
func (w *webSearch) take() (refusal string, left int, ok bool) {
	limit := w.o.Calls
	if r := w.o.Reformulations; r > 0 && (limit == 0 || r+1 < limit) {
		limit = r + 1
	}
	n, ok := w.calls.take(limit)
	switch {
	case ok:
		return "", w.o.Reformulations - (n - 1), true
	case w.o.Calls > 0 && n >= w.o.Calls:
		return fmt.Sprintf("The limit of %d web searches is reached: answer with what you found.", w.o.Calls), 0, false
	}
	msg := fmt.Sprintf("The limit of %d reformulations for this task is reached.", w.o.Reformulations)
	if w.o.ReadTool != "" {
		msg += " Read the most promising pages with " + w.o.ReadTool
		if w.o.DoneTool != "" {
			msg += ", or call " + w.o.DoneTool
		}
		msg += "."
	}
	return msg, 0, false
}

// counter counts a tool's calls.
type counter struct {
	mu sync.Mutex
	n  int
}

// take counts one more call unless limit calls (0: no limit) were
// counted; it returns the calls counted, this one included.
func (c *counter) take(limit int) (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if limit > 0 && c.n >= limit {
		return c.n, false
	}
	c.n++
	return c.n, true
}

func (w *webSearch) call(ctx context.Context, a WebSearchArgs) (agent.Output, error) {
	q := strings.Join(strings.Fields(a.Query), " ")
	if q == "" {
		return w.problem("the query is empty")
	}
	if n := len([]rune(q)); w.o.MaxQueryRunes > 0 && n > w.o.MaxQueryRunes {
		return w.problem(fmt.Sprintf("the query is too long (%d characters); write a short search query of at most %d", n, w.o.MaxQueryRunes))
	}
	refusal, left, ok := w.take()
	if !ok {
		if w.o.Format == JSON {
			return resultList(ResultList{Query: q, Results: []ResultItem{}, Note: refusal}), nil
		}
		return agent.Text(refusal), nil
	}
	round := 0
	if w.run.sink != nil {
		round = w.run.NextRound()
	}
	res, err := w.run.Search(ctx, Query{Text: q, Results: w.o.Results, Language: w.o.Language, BlockList: w.o.BlockList, Round: round})
	if err != nil {
		if ctx.Err() != nil || w.o.Format == JSON {
			return agent.Output{}, err
		}
		return agent.Text(fmt.Sprintf("The search failed: %v. Try another query or read pages you already know of.", err)), nil
	}
	fresh := 0
	for _, r := range res {
		if w.o.Found == nil || w.o.Found.add(r) {
			fresh++
		}
	}
	for _, r := range res {
		src := SourceOf(r)
		w.run.emit(event.Event{Type: event.TypeSource, Source: &src})
	}
	if w.o.Format == JSON {
		out := ResultList{Query: q, Results: make([]ResultItem, 0, len(res))}
		for _, r := range res {
			content := r.Content
			if content == "" {
				content = r.Snippet
			}
			item := ResultItem{Title: r.Title, Source: r.URL, Content: clip(content, 1500), Query: q, Kind: sova.SourceWeb}
			if w.o.Cite != nil {
				// A result is cited from what the search engine said of
				// the page, not from the page: it is marked so.
				src := SourceOf(r)
				src.SnippetOnly = true
				item.Number = w.o.Cite.Number(src)
			}
			out.Results = append(out.Results, item)
		}
		return resultList(out), nil
	}
	return agent.Output{Text: w.text(q, res, fresh, left), Summary: fmt.Sprintf("%d results", len(res))}, nil
}

// problem is a call the tool cannot run, told to the model.
func (w *webSearch) problem(msg string) (agent.Output, error) {
	if w.o.Format == JSON {
		return agent.Output{}, errors.New(msg)
	}
	return agent.Text("Error: " + msg + "."), nil
}

// text is the Text format of a search's results.
func (w *webSearch) text(q string, res []search.Result, fresh, left int) string {
	var b strings.Builder
	for i, r := range res {
		fmt.Fprintf(&b, "%d. %s\n   URL: %s\n   %s\n", i+1, r.Title, r.URL, clip(r.Snippet, 300))
	}
	reformulate := "Reformulate the query"
	if w.o.Reformulations > 0 {
		reformulate += fmt.Sprintf(" (%d reformulations left)", left)
	}
	switch {
	case len(res) == 0:
		return fmt.Sprintf("No results for %q. %s.", q, reformulate)
	case fresh == 0:
		return fmt.Sprintf("Results for %q repeat what you have already seen:\n%s\n%s or read pages.", q, b.String(), reformulate)
	}
	advice := "Judge their relevance; reformulate the query if they miss the task."
	if w.o.ReadTool != "" {
		advice = "Judge their relevance; read the most promising pages with " + w.o.ReadTool + ", or reformulate the query if they miss the task."
	}
	return fmt.Sprintf("Results for %q:\n%s\n%s", q, b.String(), advice)
}

// ResultList is what the search tools return in the JSON format: the
// shape seed 003's source parser reads (results with title, content,
// source and query).
type ResultList struct {
	Query   string       `json:"query"`
	Results []ResultItem `json:"results"`
	Note    string       `json:"note,omitempty"`
}

// ResultItem is one result of a ResultList.
type ResultItem struct {
	Number   int    `json:"number"`
	Title    string `json:"title"`
	Source   string `json:"source"`
	Content  string `json:"content"`
	Query    string `json:"query"`
	Kind     string `json:"kind"`
	Document string `json:"document,omitempty"`
	Space    string `json:"space,omitempty"`
	Position string `json:"position,omitempty"`
}

// resultList is a ResultList as a tool's output: the JSON for the model
// and the UI, and how many results it holds for people.
func resultList(l ResultList) agent.Output {
	b, err := json.Marshal(l)
	if err != nil {
		b = []byte(`{"results":[]}`)
	}
	summary := fmt.Sprintf("%d results", len(l.Results))
	if l.Note != "" && len(l.Results) == 0 {
		summary = l.Note
	}
	return agent.Output{Text: string(b), Summary: summary}
}
