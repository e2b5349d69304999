// Package movies finds films and TV series for movie_or_tv_search (seed
// 000 §1.2) in TMDB's API v3: GET /3/search/multi, then the best match's
// GET /3/{movie|tv}/{id}?append_to_response=credits. It needs a key
// (TMDB_API_KEY: a v3 API key, sent as api_key, or a v4 read access
// token, sent as a Bearer token); without one there is no client and the
// tool is withdrawn.
package movies

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Defaults used when a Config leaves a value unset.
const (
	DefaultURL      = "https://api.themoviedb.org"
	DefaultImageURL = "https://image.tmdb.org/t/p"
	DefaultTimeout  = 15 * time.Second
	serviceName     = "TMDB"
	// maxOthers is how many other matches come with the best one.
	maxOthers = 5
	maxCast   = 8
)

// Config addresses TMDB. Its env tags are the settings
// docs/configuration.md describes.
type Config struct {
	// APIKey is a v3 API key or a v4 read access token; empty: no client.
	APIKey string `env:"TMDB_API_KEY"`
	// URL is the base of /3/search/multi.
	URL string `env:"SOVA_TMDB_URL" envDefault:"https://api.themoviedb.org"`
	// ImageURL is the base of posters and photos
	// ({ImageURL}/w500/{path}).
	ImageURL string `env:"SOVA_TMDB_IMAGE_URL" envDefault:"https://image.tmdb.org/t/p"`
	// Timeout bounds one call, its retry included.
	Timeout time.Duration `env:"SOVA_TMDB_TIMEOUT" envDefault:"15s"`
	// RetryBackoff is the pause before retrying a 5xx answer; 0: 500ms,
	// negative: no retry.
	RetryBackoff time.Duration
}

// Errors to test with errors.Is.
var (
	ErrNotFound     = apiclient.ErrNotFound
	ErrInvalidInput = apiclient.ErrInvalidInput
)

// Client searches TMDB. It is safe for concurrent use.
type Client struct {
	base, images string
	key          string
	bearer       bool
	api          *apiclient.Client
}

// New returns a client, or nil without an API key. It fails when a URL is
// not an absolute http(s) address.
func New(cfg Config) (*Client, error) {
	base, err := apiclient.BaseURL("SOVA_TMDB_URL", cfg.URL, DefaultURL)
	if err != nil {
		return nil, err
	}
	images, err := apiclient.BaseURL("SOVA_TMDB_IMAGE_URL", cfg.ImageURL, DefaultImageURL)
	if err != nil {
		return nil, err
	}
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" {
		return nil, nil
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{base: base, images: images, key: key,
		// v4 read access tokens are JWTs; v3 keys are 32 hex digits.
		bearer: strings.HasPrefix(key, "eyJ"),
		api: apiclient.New(apiclient.Options{Bases: []string{base, images},
			Provider: serviceName, Timeout: timeout, RetryBackoff: cfg.RetryBackoff, Secrets: []string{key},
			Hint: func(status int) string {
				if status == 401 {
					return "check TMDB_API_KEY"
				}
				return ""
			},
		})}, nil
}

// Title is a film or a series.
type Title struct {
	ID            int      `json:"id"`
	MediaType     string   `json:"mediaType"` // movie or tv
	Title         string   `json:"title"`
	OriginalTitle string   `json:"originalTitle,omitempty"`
	Overview      string   `json:"overview"`
	Tagline       string   `json:"tagline,omitempty"`
	ReleaseDate   string   `json:"releaseDate,omitempty"` // first air date for a series
	Year          string   `json:"year,omitempty"`
	Runtime       int      `json:"runtime,omitempty"` // minutes (of an episode, for a series)
	Seasons       int      `json:"seasons,omitempty"`
	Episodes      int      `json:"episodes,omitempty"`
	Status        string   `json:"status,omitempty"`
	Genres        []string `json:"genres"`
	Rating        float64  `json:"rating"` // of 10
	VoteCount     int      `json:"voteCount"`
	Language      string   `json:"language,omitempty"`
	PosterURL     string   `json:"posterUrl,omitempty"`
	BackdropURL   string   `json:"backdropUrl,omitempty"`
	Homepage      string   `json:"homepage,omitempty"`
	URL           string   `json:"url"` // the title's TMDB page
	Directors     []string `json:"directors,omitempty"`
	Creators      []string `json:"creators,omitempty"`
	Cast          []Person `json:"cast,omitempty"`
}

// Person is a member of the cast.
type Person struct {
	Name      string `json:"name"`
	Character string `json:"character,omitempty"`
	PhotoURL  string `json:"photoUrl,omitempty"`
}

// Result is a search: the best match with its details, and the other
// films and series that matched.
type Result struct {
	Query  string  `json:"query"`
	Best   Title   `json:"result"`
	Others []Title `json:"others"`
}

// Search finds query among films and series (people are skipped) and
// returns the best match with its details. language is a BCP 47 tag for
// the titles and overviews ("" is English).
func (c *Client) Search(ctx context.Context, query, language string) (*Result, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, apiclient.Invalid(serviceName, "the query is empty")
	}
	q := url.Values{"query": {query}, "include_adult": {"false"}, "page": {"1"}}
	if language != "" {
		q.Set("language", language)
	}
	var found searchResponse
	if err := c.get(ctx, "/3/search/multi", q, &found); err != nil {
		return nil, err
	}
	if found.Results == nil {
		return nil, c.api.Errorf(apiclient.ErrBadResponse, nil, "the answer has no results")
	}
	var matches []Title
	for _, r := range found.Results {
		if r.MediaType == "movie" || r.MediaType == "tv" {
			matches = append(matches, c.title(r.apiTitle, r.MediaType))
		}
	}
	if len(matches) == 0 {
		return nil, apiclient.NotFound(serviceName, "no film or series matches %q", query)
	}
	best := matches[0]
	var d details
	dq := url.Values{"append_to_response": {"credits"}}
	if language != "" {
		dq.Set("language", language)
	}
	if err := c.get(ctx, fmt.Sprintf("/3/%s/%d", best.MediaType, best.ID), dq, &d); err != nil {
		return nil, err
	}
	res := &Result{Query: query, Best: c.details(d, best.MediaType), Others: matches[1:min(len(matches), 1+maxOthers)]}
	return res, nil
}

func (c *Client) get(ctx context.Context, path string, q url.Values, out any) error {
	h := http.Header{}
	if c.bearer {
		h.Set("Authorization", "Bearer "+c.key)
	} else {
		q.Set("api_key", c.key)
	}
	return c.api.GetJSON(ctx, c.base+path+"?"+q.Encode(), h, out)
}

// image is the address of a poster or photo of TMDB's size w500.
func (c *Client) image(path, size string) string {
	if path == "" || !strings.HasPrefix(path, "/") {
		return ""
	}
	return c.images + "/" + size + path
}

type apiTitle struct {
	ID               int      `json:"id"`
	Title            string   `json:"title"`
	Name             string   `json:"name"`
	OriginalTitle    string   `json:"original_title"`
	OriginalName     string   `json:"original_name"`
	Overview         string   `json:"overview"`
	ReleaseDate      string   `json:"release_date"`
	FirstAirDate     string   `json:"first_air_date"`
	PosterPath       string   `json:"poster_path"`
	BackdropPath     string   `json:"backdrop_path"`
	VoteAverage      float64  `json:"vote_average"`
	VoteCount        int      `json:"vote_count"`
	OriginalLanguage string   `json:"original_language"`
	GenreIDs         []int    `json:"genre_ids"`
	OriginCountry    []string `json:"origin_country"`
}

type searchResponse struct {
	Page    int `json:"page"`
	Results []struct {
		apiTitle
		MediaType string `json:"media_type"`
	} `json:"results"`
	TotalResults int `json:"total_results"`
}

type details struct {
	apiTitle
	Tagline        string `json:"tagline"`
	Status         string `json:"status"`
	Homepage       string `json:"homepage"`
	Runtime        int    `json:"runtime"`
	EpisodeRunTime []int  `json:"episode_run_time"`
	Seasons        int    `json:"number_of_seasons"`
	Episodes       int    `json:"number_of_episodes"`
	Genres         []struct {
		Name string `json:"name"`
	} `json:"genres"`
	CreatedBy []struct {
		Name string `json:"name"`
	} `json:"created_by"`
	Credits struct {
		Cast []struct {
			Name        string `json:"name"`
			Character   string `json:"character"`
			ProfilePath string `json:"profile_path"`
		} `json:"cast"`
		Crew []struct {
			Name string `json:"name"`
			Job  string `json:"job"`
		} `json:"crew"`
	} `json:"credits"`
}

func (c *Client) title(a apiTitle, mediaType string) Title {
	t := Title{ID: a.ID, MediaType: mediaType, Title: a.Title, OriginalTitle: a.OriginalTitle, Overview: a.Overview,
		ReleaseDate: a.ReleaseDate, Rating: a.VoteAverage, VoteCount: a.VoteCount, Language: a.OriginalLanguage,
		PosterURL: c.image(a.PosterPath, "w500"), BackdropURL: c.image(a.BackdropPath, "w780"), Genres: []string{},
		URL: "https://www.themoviedb.org/" + mediaType + "/" + strconv.Itoa(a.ID)}
	if mediaType == "tv" {
		t.Title, t.OriginalTitle, t.ReleaseDate = a.Name, a.OriginalName, a.FirstAirDate
	}
	if t.OriginalTitle == t.Title {
		t.OriginalTitle = ""
	}
	if len(t.ReleaseDate) >= 4 {
		t.Year = t.ReleaseDate[:4]
	}
	return t
}

func (c *Client) details(d details, mediaType string) Title {
	t := c.title(d.apiTitle, mediaType)
	t.Tagline, t.Status, t.Homepage = d.Tagline, d.Status, d.Homepage
	t.Runtime, t.Seasons, t.Episodes = d.Runtime, d.Seasons, d.Episodes
	if t.Runtime == 0 && len(d.EpisodeRunTime) > 0 {
		t.Runtime = d.EpisodeRunTime[0]
	}
	for _, g := range d.Genres {
		t.Genres = append(t.Genres, g.Name)
	}
	for _, p := range d.CreatedBy {
		t.Creators = append(t.Creators, p.Name)
	}
	for _, p := range d.Credits.Crew {
		if p.Job == "Director" {
			t.Directors = append(t.Directors, p.Name)
		}
	}
	for _, p := range d.Credits.Cast[:min(len(d.Credits.Cast), maxCast)] {
		t.Cast = append(t.Cast, Person{Name: p.Name, Character: p.Character, PhotoURL: c.image(p.ProfilePath, "w185")})
	}
	return t
}
