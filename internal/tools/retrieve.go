package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/sync/errgroup"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/search"
)

// RetrieveOptions tune a retrieve tool.
type RetrieveOptions struct {
	// Name is the tool's name: retrieve, or scrape_url where
	// deep_research's prompts call it so.
	Name string
	// MaxURLs is the most pages one call reads (default 4); the model is
	// told when it asked for more.
	MaxURLs int
	// Concurrency is how many pages one call reads at once (default 4).
	Concurrency int
	BlockList   search.BlockList
	// Found gives pages the titles and favicons their search results had.
	Found *Found
	// Summarise condenses a page for the model (with a fast model); nil,
	// or when it fails, the page's text stands in, clipped.
	Summarise func(ctx context.Context, title, markdown string) (string, error)
	// OnRead sees every page read, numbered in the run's Pages, with what
	// this call learnt from it.
	OnRead func(p *Page, summary string)
	// Description replaces the tool's description.
	Description string
	// Cite numbers the pages as citable sources, in the numbering the
	// search tools of the run share; nil: the run's Pages numbers.
	Cite *Citations
}

// RetrieveArgs are retrieve's arguments.
type RetrieveArgs struct {
	URLs agent.StringList `json:"urls" jsonschema:"page URLs to read"`
}

// Retrieve is the page-reading tool (retrieve, deep_research's
// scrape_url): it reads the pages asked for in parallel, once per run
// however many agents ask, numbers them in the run's Pages (the numbers
// the answer cites) and returns what each says.
func Retrieve(run *Run, o RetrieveOptions) agent.Tool {
	if o.Name == "" {
		o.Name = RetrieveName
	}
	if o.MaxURLs <= 0 {
		o.MaxURLs = 4
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 4
	}
	desc := o.Description
	if desc == "" {
		desc = "Read web pages and return what they say."
	}
	rt := &retrieve{run: run, o: o}
	return agent.NewTool(o.Name, desc, rt.call,
		agent.WithTitle(func(a RetrieveArgs) string {
			if len(a.URLs) == 1 {
				return "Reading " + a.URLs[0]
			}
			return fmt.Sprintf("Reading %d pages", len(a.URLs))
		}),
		agent.WithSchema(func(s *jsonschema.Schema) {
			s.Properties["urls"].Description = fmt.Sprintf("page URLs to read, at most %d", o.MaxURLs)
		}))
}

type retrieve struct {
	run *Run
	o   RetrieveOptions
}

func (rt *retrieve) call(ctx context.Context, a RetrieveArgs) (agent.Output, error) {
	var urls []string
	seen := map[string]bool{}
	for _, u := range a.URLs {
		u = strings.TrimSpace(u)
		if u == "" || seen[search.NormalizeURL(u)] {
			continue
		}
		seen[search.NormalizeURL(u)] = true
		urls = append(urls, u)
	}
	if len(urls) == 0 {
		return agent.Text("Error: give at least one URL."), nil
	}
	var extra string
	if len(urls) > rt.o.MaxURLs {
		extra = fmt.Sprintf("\nOnly the first %d URLs were read; ask again for the others if needed.", rt.o.MaxURLs)
		urls = urls[:rt.o.MaxURLs]
	}
	out := make([]string, len(urls))
	var read atomic.Int32
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(rt.o.Concurrency)
	for i, u := range urls {
		g.Go(func() error {
			text, ok, err := rt.readOne(gctx, u)
			out[i] = text
			if ok {
				read.Add(1)
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return agent.Output{}, err
	}
	return agent.Output{
		Text:    strings.Join(out, "\n\n") + extra,
		Summary: fmt.Sprintf("Read %d of %d pages", read.Load(), len(urls)),
	}, nil
}

// readOne reads and condenses one page. Only a context error is
// returned; a page that cannot be read is reported as text.
func (rt *retrieve) readOne(ctx context.Context, u string) (string, bool, error) {
	if !rt.o.BlockList.Allowed(search.Result{URL: u}) {
		return fmt.Sprintf("Not read %s: the site is on the block list.", u), false, nil
	}
	hit, known := rt.o.Found.Lookup(u)
	pg, err := rt.run.Read(ctx, u, hit.Title)
	if err != nil {
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		return fmt.Sprintf("Could not read %s: %v", u, err), false, nil
	}
	title := hit.Title
	if pg.Title != "" {
		title = pg.Title
	}
	// A long page is cut to the passages that answer the run's question
	// and queries, within the reading budget.
	ex := pg.Excerpt(rt.run.Focus()...)
	summary := ""
	if rt.o.Summarise != nil {
		summary, err = rt.o.Summarise(ctx, title, ex.Markdown)
		if err != nil && ctx.Err() != nil {
			return "", false, ctx.Err()
		}
	}
	if rt.o.Summarise == nil || err != nil {
		// The page was read; its text serves when no summary can be made.
		summary = clip(ex.Markdown, 1500)
	}
	src := sova.Source{URL: u, Title: title, Snippet: clip(summary, 300), Kind: sova.SourceWeb, Published: pg.Published, Passages: ex.Sections}
	if known {
		src.Favicon = hit.Favicon
		if src.Published == "" {
			src.Published = hit.Published
		}
	}
	p := rt.run.pages.Add(src, summary)
	if rt.o.OnRead != nil {
		rt.o.OnRead(p, summary)
	}
	n := p.N
	if rt.o.Cite != nil {
		n = rt.o.Cite.Number(src)
	}
	return fmt.Sprintf("[%d] %s\nURL: %s\n%s", n, title, u, summary), true, nil
}

// Condense asks a (fast) model to condense a page: system says what to
// keep and for whom, user holds the page. It returns the reply, trimmed;
// an empty reply is an error.
func Condense(ctx context.Context, model llm.Model, system, user string) (string, error) {
	resp, err := model.Complete(ctx, llm.Request{Messages: []llm.Message{
		{Role: llm.RoleSystem, Content: system}, {Role: llm.RoleUser, Content: user},
	}})
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(resp.Content) == "" {
		return "", errors.New("empty summary")
	}
	return strings.TrimSpace(resp.Content), nil
}
