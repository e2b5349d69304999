// Package xai searches posts on X for the x_search tool (seed 000 §3.4,
// DESIGN §8) through xAI's chat completions with search: each query is
// one chat completion whose search_parameters restrict the search to X
// (dates, handles, least likes and views) and ask for citations, the
// links of the posts the answer draws on. Without XAI_API_KEY there is no
// X search: the tool is withdrawn.
//
// xAI has announced that search_parameters (its "Live Search") gives way
// to server-side tools; SOVA_XAI_URL and SOVA_XAI_MODEL let a self-hoster
// point the tool at any endpoint that still speaks this request.
package xai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/multiquery"
)

// Defaults used when a Config field is "".
const (
	DefaultURL   = "https://api.x.ai/v1"
	DefaultModel = "grok-4-fast-non-reasoning"
)

// Limits of one x_search call (000 §3.4).
const (
	// DefaultMaxResults is the number of posts a query asks for when the
	// call does not say; it is also the least asked of xAI.
	DefaultMaxResults = 15
	// MaxResults caps max_search_results.
	MaxResults = 50
	// MaxHandles caps the handles included or excluded.
	MaxHandles = 10
	// DefaultDays is how far back a search without a start date goes.
	DefaultDays = 15
	// maxTokens bounds the summary xAI writes of the posts it found.
	maxTokens = 1500
)

// ErrRateLimited and ErrBadResponse are matched (errors.Is) by the errors
// of an answer that refused for too many requests and of one that could
// not be parsed.
var (
	ErrRateLimited = apiclient.ErrRateLimited
	ErrBadResponse = apiclient.ErrBadResponse
)

// Config holds the settings of the xAI provider. The env tags are the
// variables internal/config reads them from (docs/configuration.md).
type Config struct {
	// APIKey is the xAI key (XAI_API_KEY); without it there is no X search.
	APIKey string `env:"XAI_API_KEY"`
	// URL is the API base, up to and including /v1 (SOVA_XAI_URL).
	URL string `env:"SOVA_XAI_URL" envDefault:"https://api.x.ai/v1"`
	// Model is the model asked (SOVA_XAI_MODEL).
	Model string `env:"SOVA_XAI_MODEL" envDefault:"grok-4-fast-non-reasoning"`

	// HTTPClient sends the requests; nil means one with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one call, its retry included; 0 means 30s
	// (SOVA_PROVIDER_TIMEOUT).
	Timeout time.Duration `env:"SOVA_PROVIDER_TIMEOUT" envDefault:"30s"`
	// RetryBackoff is the pause before retrying a 5xx answer or a network
	// failure; 0 means 500ms, negative turns the retry off.
	RetryBackoff time.Duration
}

// Client searches X through xAI.
type Client struct {
	key, base, model string
	api              *apiclient.Client
}

// New returns a Client, or nil when cfg has no key: there is no X search
// without one.
func New(cfg Config) *Client {
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" {
		return nil
	}
	base := strings.TrimRight(strings.TrimSpace(cfg.URL), "/")
	if base == "" {
		base = DefaultURL
	}
	model := strings.TrimSpace(cfg.Model)
	if model == "" {
		model = DefaultModel
	}
	return &Client{key: key, base: base, model: model, api: apiclient.New(apiclient.Options{Bases: []string{base},
		Provider: "xai", HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout,
		RetryBackoff: cfg.RetryBackoff, Secrets: []string{key}, Describe: describe,
	})}
}

// Query is one search.
type Query struct {
	Text string
	// FromDate and ToDate bound the posts' dates, YYYY-MM-DD.
	FromDate, ToDate string
	// IncludeHandles or ExcludeHandles (not both) restrict the authors.
	IncludeHandles, ExcludeHandles []string
	// MinFavorites and MinViews keep only posts with at least these many
	// likes and views; 0: no minimum.
	MinFavorites, MinViews int
	// MaxResults is the number of posts asked for (at least
	// DefaultMaxResults, at most MaxResults).
	MaxResults int
}

// Source is one post the answer drew on (000 §3.4's sources).
type Source struct {
	Text  string `json:"text"`
	Link  string `json:"link"`
	Title string `json:"title"`
}

// DateRange is the dates a search covered.
type DateRange struct {
	FromDate string `json:"fromDate"`
	ToDate   string `json:"toDate"`
}

// Handles are the authors a search was restricted to or kept away from.
type Handles struct {
	Included []string `json:"included,omitempty"`
	Excluded []string `json:"excluded,omitempty"`
}

// Search is the outcome of one query, in 000 §3.4's shape.
type Search struct {
	Query     string    `json:"query"`
	Content   string    `json:"content"`
	Citations []string  `json:"citations"`
	Sources   []Source  `json:"sources"`
	DateRange DateRange `json:"dateRange"`
	Handles   Handles   `json:"handles"`
	Error     string    `json:"error,omitempty"`
}

// Search runs one query.
func (c *Client) Search(ctx context.Context, q Query) (Search, error) {
	out := Search{Query: q.Text, DateRange: DateRange{q.FromDate, q.ToDate},
		Handles: Handles{Included: q.IncludeHandles, Excluded: q.ExcludeHandles}, Citations: []string{}, Sources: []Source{}}
	src := xSource{Type: "x", IncludedXHandles: q.IncludeHandles, ExcludedXHandles: q.ExcludeHandles,
		PostFavoriteCount: q.MinFavorites, PostViewCount: q.MinViews}
	req := chatRequest{
		Model: c.model,
		Messages: []chatMessage{
			{Role: "system", Content: "Search X for posts about the user's query. Report what the posts say, each with its author's @handle and its link. Do not add facts the posts do not state."},
			{Role: "user", Content: q.Text},
		},
		MaxTokens: maxTokens,
		SearchParameters: searchParameters{
			Mode: "on", FromDate: q.FromDate, ToDate: q.ToDate,
			MaxSearchResults: min(max(q.MaxResults, DefaultMaxResults), MaxResults),
			ReturnCitations:  true, Sources: []xSource{src},
		},
	}
	var resp chatResponse
	h := http.Header{"Authorization": {"Bearer " + c.key}}
	if err := c.api.PostJSON(ctx, c.base+"/chat/completions", h, req, &resp); err != nil {
		return out, err
	}
	if len(resp.Choices) == 0 {
		return out, c.api.Errorf(ErrBadResponse, nil, "the answer has no choices")
	}
	out.Content = strings.TrimSpace(resp.Choices[0].Message.Content)
	seen := map[string]bool{}
	for _, c := range resp.Citations {
		u := strings.TrimSpace(string(c))
		if u == "" || seen[u] {
			continue
		}
		seen[u] = true
		out.Citations = append(out.Citations, u)
		out.Sources = append(out.Sources, Source{Link: u, Title: PostTitle(u)})
	}
	return out, nil
}

// statusRE finds the author and id of a post URL.
var statusRE = regexp.MustCompile(`(?i)^https?://(?:www\.|mobile\.)?(?:x|twitter)\.com/([A-Za-z0-9_]{1,15})/status(?:es)?/(\d+)`)

// PostTitle names a post by its author, "@handle on X", or returns the
// URL's host and path for other links.
func PostTitle(link string) string {
	if m := statusRE.FindStringSubmatch(link); m != nil {
		return "@" + m[1] + " on X"
	}
	if u, err := url.Parse(link); err == nil && u.Host != "" {
		return u.Host + u.Path
	}
	return link
}

// Request is one x_search call.
type Request struct {
	// Queries are 1 to 5 queries, run in parallel.
	Queries []string
	// StartDate and EndDate are YYYY-MM-DD; "" means DefaultDays ago and
	// today.
	StartDate, EndDate string
	// IncludeHandles or ExcludeHandles (not both), at most MaxHandles; an
	// "@" is dropped and the case folded.
	IncludeHandles, ExcludeHandles []string
	// PostFavoritesCount and PostViewCount are the least likes and views.
	PostFavoritesCount, PostViewCount int
	// MaxResults[i] is the posts asked for Queries[i]; missing: the default.
	MaxResults []int
	// Now is today, for the default dates; zero means time.Now().
	Now time.Time
}

// Result is the outcome of one x_search call (000 §3.4).
type Result struct {
	Searches  []Search  `json:"searches"`
	DateRange DateRange `json:"dateRange"`
	Handles   Handles   `json:"handles"`
}

// Run performs req with c, its queries in parallel; progress, if not nil,
// receives each query's data-query_completion events. A query that fails
// is reported in its Search.Error; Run fails when the request is invalid,
// ctx ends, or every query failed.
func Run(ctx context.Context, c *Client, req Request, progress multiquery.ProgressFunc) (Result, error) {
	if c == nil {
		return Result{}, errors.New("searching X needs XAI_API_KEY")
	}
	queries, err := multiquery.Validate(req.Queries, 0)
	if err != nil {
		return Result{}, err
	}
	inc, err := handles(req.IncludeHandles)
	if err != nil {
		return Result{}, fmt.Errorf("includeXHandles: %w", err)
	}
	exc, err := handles(req.ExcludeHandles)
	if err != nil {
		return Result{}, fmt.Errorf("excludeXHandles: %w", err)
	}
	if len(inc) > 0 && len(exc) > 0 {
		return Result{}, errors.New("includeXHandles and excludeXHandles cannot both be given")
	}
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	from, to := strings.TrimSpace(req.StartDate), strings.TrimSpace(req.EndDate)
	if from == "" {
		from = now.AddDate(0, 0, -DefaultDays).Format(time.DateOnly)
	}
	if to == "" {
		to = now.Format(time.DateOnly)
	}
	for _, d := range []string{from, to} {
		if _, err := time.Parse(time.DateOnly, d); err != nil {
			return Result{}, fmt.Errorf("the date %q is not YYYY-MM-DD", d)
		}
	}
	if from > to {
		return Result{}, fmt.Errorf("the start date %s is after the end date %s", from, to)
	}
	outs := multiquery.Run(ctx, queries, progress, func(ctx context.Context, i int, q string) ([]Search, error) {
		s, err := c.Search(ctx, Query{
			Text: q, FromDate: from, ToDate: to, IncludeHandles: inc, ExcludeHandles: exc,
			MinFavorites: max(req.PostFavoritesCount, 0), MinViews: max(req.PostViewCount, 0),
			MaxResults: multiquery.At(req.MaxResults, i, DefaultMaxResults),
		})
		if err != nil {
			return nil, err
		}
		// One Search per query; its result count is its posts.
		return []Search{s}, nil
	})
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	res := Result{DateRange: DateRange{from, to}, Handles: Handles{Included: inc, Excluded: exc}, Searches: make([]Search, len(queries))}
	for i, o := range outs {
		s := Search{Query: queries[i], DateRange: res.DateRange, Handles: res.Handles, Citations: []string{}, Sources: []Source{}}
		if len(o.Results) > 0 {
			s = o.Results[0]
		}
		if o.Err != nil {
			s.Error = o.Err.Error()
		}
		res.Searches[i] = s
	}
	if err := multiquery.AllFailed(outs); err != nil {
		return res, err
	}
	return res, nil
}

var handleRE = regexp.MustCompile(`^[a-z0-9_]{1,15}$`)

// handles sanitises X handles: no "@", lower case, at most MaxHandles.
func handles(in []string) ([]string, error) {
	var out []string
	for _, h := range in {
		h = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(h), "@"))
		if h == "" {
			continue
		}
		if !handleRE.MatchString(h) {
			return nil, fmt.Errorf("%q is not an X handle", h)
		}
		out = append(out, h)
	}
	if len(out) > MaxHandles {
		return nil, fmt.Errorf("at most %d handles, got %d", MaxHandles, len(out))
	}
	return out, nil
}

type chatRequest struct {
	Model            string           `json:"model"`
	Messages         []chatMessage    `json:"messages"`
	MaxTokens        int              `json:"max_tokens,omitempty"`
	SearchParameters searchParameters `json:"search_parameters"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type searchParameters struct {
	Mode             string    `json:"mode"`
	FromDate         string    `json:"from_date,omitempty"`
	ToDate           string    `json:"to_date,omitempty"`
	MaxSearchResults int       `json:"max_search_results,omitempty"`
	ReturnCitations  bool      `json:"return_citations"`
	Sources          []xSource `json:"sources"`
}

type xSource struct {
	Type              string   `json:"type"`
	IncludedXHandles  []string `json:"included_x_handles,omitempty"`
	ExcludedXHandles  []string `json:"excluded_x_handles,omitempty"`
	PostFavoriteCount int      `json:"post_favorite_count,omitempty"`
	PostViewCount     int      `json:"post_view_count,omitempty"`
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	} `json:"choices"`
	Citations []citation `json:"citations"`
}

// citation is a citation URL: a string, or an object with a url.
type citation string

func (c *citation) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		*c = citation(s)
		return nil
	}
	var o struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return err
	}
	*c = citation(o.URL)
	return nil
}

// describe reads xAI's error body ({"code","error"}) and marks an
// exhausted quota as a rate limit.
func describe(status int, body []byte) (string, bool) {
	var e struct {
		Code  string          `json:"code"`
		Error json.RawMessage `json:"error"`
	}
	detail := ""
	if json.Unmarshal(body, &e) == nil {
		var s string
		var o struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(e.Error, &s) == nil:
			detail = s
		case json.Unmarshal(e.Error, &o) == nil:
			detail = o.Message
		}
	}
	detail = strings.TrimSpace(detail)
	if status == http.StatusUnauthorized || status == http.StatusForbidden {
		detail = strings.TrimSpace(detail + " (check XAI_API_KEY)")
	}
	low := strings.ToLower(detail)
	return detail, strings.Contains(low, "quota") || strings.Contains(low, "rate limit") || strings.Contains(low, "credits")
}
