package movies

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

const v3Key = "0123456789abcdef0123456789abcdef"

func newClient(t *testing.T, url, key string) *Client {
	t.Helper()
	c, err := New(Config{APIKey: key, URL: url, ImageURL: "https://img.example/t/p", Timeout: 2 * time.Second, RetryBackoff: time.Millisecond})
	if err != nil || c == nil {
		t.Fatalf("New: %v, %v", c, err)
	}
	return c
}

func TestSearch(t *testing.T) {
	srv := apitest.New(t, apitest.ByPath(map[string]apitest.Reply{
		"/3/search/multi": {Body: apitest.Fixture(t, "search_inception.json")},
		"/3/movie/27205":  {Body: apitest.Fixture(t, "movie_27205.json")},
	}, apitest.Reply{Status: 404, Body: `{"status_code":34,"status_message":"The resource you requested could not be found.","success":false}`}))
	res, err := newClient(t, srv.URL, v3Key).Search(context.Background(), "inception", "en-US")
	if err != nil {
		t.Fatal(err)
	}
	b := res.Best
	if b.ID != 27205 || b.MediaType != "movie" || b.Title != "Inception" || b.OriginalTitle != "" || b.Year != "2010" || b.Runtime != 148 ||
		strings.Join(b.Genres, ",") != "Action,Science Fiction,Adventure" || strings.Join(b.Directors, ",") != "Christopher Nolan" ||
		len(b.Cast) != 2 || b.Cast[0].Character != "Dom Cobb" || b.Cast[0].PhotoURL != "https://img.example/t/p/w185/wo2hJpn04vbtmh0B9utCFdsQhxM.jpg" ||
		b.PosterURL != "https://img.example/t/p/w500/oYuLEt3zVCKq57qu2F8dT7NIa6f.jpg" || b.URL != "https://www.themoviedb.org/movie/27205" ||
		b.Tagline == "" || b.Rating != 8.369 {
		t.Errorf("best = %+v", b)
	}
	// The person is skipped; the series stays among the others.
	if len(res.Others) != 1 || res.Others[0].MediaType != "tv" || res.Others[0].Title != "Inception: The Cobol Job" || res.Others[0].BackdropURL != "" {
		t.Errorf("others = %+v", res.Others)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || reqs[0].Query.Get("query") != "inception" || reqs[0].Query.Get("api_key") != v3Key ||
		reqs[0].Query.Get("include_adult") != "false" || reqs[1].Query.Get("append_to_response") != "credits" || reqs[1].Query.Get("language") != "en-US" {
		t.Errorf("requests = %+v", reqs)
	}
}

func TestSearchSeriesWithReadToken(t *testing.T) {
	const token = "eyJhbGciOiJIUzI1NiJ9.eyJhdWQiOiJ0ZXN0In0.c2lnbmF0dXJl"
	srv := apitest.New(t, apitest.ByPath(map[string]apitest.Reply{
		"/3/search/multi": {Body: apitest.Fixture(t, "search_tv.json")},
		"/3/tv/1396":      {Body: apitest.Fixture(t, "tv_1396.json")},
	}, apitest.Reply{Status: 404}))
	res, err := newClient(t, srv.URL, token).Search(context.Background(), "breaking bad", "")
	if err != nil {
		t.Fatal(err)
	}
	b := res.Best
	if b.MediaType != "tv" || b.Title != "Breaking Bad" || b.Year != "2008" || b.Seasons != 5 || b.Episodes != 62 || b.Runtime != 45 ||
		strings.Join(b.Creators, ",") != "Vince Gilligan" || b.Status != "Ended" || b.URL != "https://www.themoviedb.org/tv/1396" {
		t.Errorf("best = %+v", b)
	}
	for _, r := range srv.Requests() {
		if r.Header.Get("Authorization") != "Bearer "+token || r.Query.Has("api_key") {
			t.Errorf("request %s: auth %q, query %v", r.Path, r.Header.Get("Authorization"), r.Query)
		}
	}
}

func TestSearchErrors(t *testing.T) {
	wantErr := apitest.ErrorCheck(v3Key)
	for _, tc := range []struct {
		name  string
		reply apitest.Reply
		check func(t *testing.T, err error)
	}{
		{"invalid key", apitest.Reply{Status: 401, Body: apitest.Fixture(t, "invalid_key.json")},
			func(t *testing.T, err error) { wantErr(t, err, 401, "TMDB", "Invalid API key", "TMDB_API_KEY") }},
		{"only people", apitest.Reply{Body: apitest.Fixture(t, "people_only.json")},
			func(t *testing.T, err error) {
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("err = %v", err)
				}
			}},
		{"5xx", apitest.Reply{Status: 503, Body: "unavailable"}, func(t *testing.T, err error) { wantErr(t, err, 503, "TMDB") }},
		{"bad json", apitest.Reply{Body: "<html>oops</html>", Header: map[string]string{"Content-Type": "text/html"}},
			func(t *testing.T, err error) { wantErr(t, err, 0, "TMDB", "not valid JSON") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tc.reply))
			_, err := newClient(t, srv.URL, v3Key).Search(context.Background(), "x", "")
			tc.check(t, err)
		})
	}
	if _, err := newClient(t, "http://127.0.0.1:1", v3Key).Search(context.Background(), "  ", ""); !errors.Is(err, ErrInvalidInput) {
		t.Errorf("empty query: %v", err)
	}
}

func TestSettingsDocumented(t *testing.T) {
	apitest.Documented(t, Config{}, "../../../docs/configuration.md")
}
