package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/apiclient/apitest"
	"github.com/sova-ai/sova/internal/provider/flights"
	"github.com/sova-ai/sova/internal/provider/movies"
	"github.com/sova-ai/sova/internal/tools"
)

func TestTrackFlight(t *testing.T) {
	srv := apitest.New(t, apitest.ByPath(map[string]apitest.Reply{
		"/v1/flights": {Body: fixtureOf(t, "flights", "flights_ba283.json")},
	}, apitest.Reply{Status: 404}))
	c, err := flights.New(flights.Config{APIKey: "k", URL: srv.URL, RetryBackoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	run := tools.NewRun(tools.Providers{Flights: c}, nil)
	var out tools.TrackFlightResult
	o := runTool(t, tools.TrackFlight(run), `{"flight_number":"ba283"}`, &out)
	if out.FlightNumber != "BA283" || len(out.Flights) != 2 || out.Flights[0].Live == nil || out.Source != "AviationStack" {
		t.Errorf("output %+v", out)
	}
	if o.Summary != "BA283 British Airways LHR→LAX: active" {
		t.Errorf("summary %q", o.Summary)
	}
	// Without a key the tool says which setting it needs.
	_, err = tools.TrackFlight(tools.NewRun(tools.Providers{}, nil)).(agent.Runner).Run(t.Context(), json.RawMessage(`{"flight_number":"BA283"}`))
	if err == nil || !strings.Contains(err.Error(), "AVIATIONSTACK_API_KEY") {
		t.Errorf("without a client: %v", err)
	}
	if st, _ := (tools.Providers{}).Status(tools.TrackFlightName); st.Available || st.Reason != "needs AVIATIONSTACK_API_KEY" {
		t.Errorf("status without a key: %+v", st)
	}
	if st, _ := (tools.Providers{Flights: c}).Status(tools.TrackFlightName); !st.Available || st.Provider != "aviationstack" {
		t.Errorf("status with a key: %+v", st)
	}
}

func TestMovieOrTVSearch(t *testing.T) {
	srv := apitest.New(t, apitest.ByPath(map[string]apitest.Reply{
		"/3/search/multi": {Body: fixtureOf(t, "movies", "search_inception.json")},
		"/3/movie/27205":  {Body: fixtureOf(t, "movies", "movie_27205.json")},
	}, apitest.Reply{Status: 404}))
	c, err := movies.New(movies.Config{APIKey: "k", URL: srv.URL, RetryBackoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	cite := tools.NewCitations(func(sova.Source) {})
	run := tools.NewRun(tools.Providers{Movies: c}, nil)
	var out tools.MovieResult
	o := runTool(t, tools.MovieOrTVSearch(run, tools.MovieOptions{Cite: cite, Language: "en"}), `{"query":"Inception"}`, &out)
	if out.Number != 1 || out.Result.Title != "Inception" || out.Result.Runtime != 148 || len(out.Others) != 1 || out.Source != "TMDB" ||
		!strings.HasPrefix(out.Result.PosterURL, "https://image.tmdb.org/t/p/w500/") {
		t.Errorf("output %+v", out)
	}
	if o.Summary != "Inception (2010), rated 8.4/10" {
		t.Errorf("summary %q", o.Summary)
	}
	if n := cite.Number(sova.Source{URL: "https://www.themoviedb.org/movie/27205", Kind: sova.SourceWeb}); n != 1 {
		t.Errorf("the TMDB page is source %d, want 1", n)
	}
	if st, _ := (tools.Providers{}).Status(tools.MovieOrTVSearchName); st.Available || st.Reason != "needs TMDB_API_KEY" {
		t.Errorf("status without a key: %+v", st)
	}
}
