package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/movies"
)

// MovieOrTVSearchName is the web group's film and series tool (seed 000
// §1.2).
const MovieOrTVSearchName = movies.ToolName

// MovieArgs are movie_or_tv_search's arguments.
type MovieArgs struct {
	Query string `json:"query" jsonschema:"the title of the film or TV series, with its year if known"`
}

// MovieResult is movie_or_tv_search's output: the best match with its
// details, its citation number, and the other matches.
type MovieResult struct {
	Number int            `json:"number,omitempty"`
	Query  string         `json:"query"`
	Result movies.Title   `json:"result"`
	Others []movies.Title `json:"others"`
	Source string         `json:"source"`
}

// MovieOptions tune movie_or_tv_search.
type MovieOptions struct {
	// Cite numbers the title's TMDB page as a citable source.
	Cite *Citations
	// Language asks for titles and overviews in it ("ru", "en").
	Language string
}

// MovieOrTVSearch is the movie_or_tv_search tool: a film or series from
// TMDB with its overview, rating, genres, runtime, director and cast.
func MovieOrTVSearch(run *Run, o MovieOptions) agent.Tool {
	call := func(ctx context.Context, a MovieArgs) (agent.Output, error) {
		if run.p.Movies == nil {
			return agent.Output{}, errors.New("film and series search is not available: it needs TMDB_API_KEY")
		}
		res, err := run.p.Movies.Search(ctx, a.Query, o.Language)
		if err != nil {
			return agent.Output{}, err
		}
		b := res.Best
		out := MovieResult{Query: res.Query, Result: b, Others: res.Others, Source: "TMDB"}
		if out.Others == nil {
			out.Others = []movies.Title{}
		}
		title := b.Title
		if b.Year != "" {
			title += " (" + b.Year + ")"
		}
		out.Number = number(o.Cite, sova.Source{URL: b.URL, Title: title + " – TMDB", Kind: sova.SourceWeb, Snippet: b.Overview})
		return jsonOutput(out, fmt.Sprintf("%s, rated %.1f/10", title, b.Rating))
	}
	return agent.NewTool(MovieOrTVSearchName,
		"Find a film or TV series by its title: overview, release date, rating, genres, runtime, seasons, director or creators, and cast.",
		call,
		agent.WithTitle(func(a MovieArgs) string { return "Looking up “" + strings.TrimSpace(a.Query) + "”" }))
}
