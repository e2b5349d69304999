// Package xai searches posts on X for the x_search tool (seed 000 §3.4,
// DESIGN §8) through xAI's Responses API with its server-side x_search
// tool (xAI retired Live Search, the search_parameters of chat
// completions): each query is one POST /v1/responses offering x_search
// with the dates and handles as the tool's filters. The answer's
// url_citation annotations name the posts it quotes; each source's text
// is the line of the answer that quotes the post. Without XAI_API_KEY
// there is no X search: the tool is withdrawn.
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

// Search runs one query: one Responses API request offering the
// server-side x_search tool, whose filters carry the dates and handles.
// The tool has no least likes or views and no result count, so those are
// asked of the model in the instructions.
func (c *Client) Search(ctx context.Context, q Query) (Search, error) {
	out := Search{Query: q.Text, DateRange: DateRange{q.FromDate, q.ToDate},
		Handles: Handles{Included: q.IncludeHandles, Excluded: q.ExcludeHandles}, Citations: []string{}, Sources: []Source{}}
	req := responsesRequest{
		Model:           c.model,
		Instructions:    instructions(q),
		Input:           []inputMessage{{Role: "user", Content: q.Text}},
		Tools:           []xSearchTool{{Type: "x_search", AllowedXHandles: q.IncludeHandles, ExcludedXHandles: q.ExcludeHandles, FromDate: q.FromDate, ToDate: q.ToDate}},
		MaxOutputTokens: maxTokens,
	}
	var resp responsesResponse
	h := http.Header{"Authorization": {"Bearer " + c.key}}
	if err := c.api.PostJSON(ctx, c.base+"/responses", h, req, &resp); err != nil {
		return out, err
	}
	text, notes, found := resp.message()
	if !found {
		if resp.Error != nil && resp.Error.Message != "" {
			return out, c.api.Errorf(ErrBadResponse, nil, "the search failed: %s", resp.Error.Message)
		}
		return out, c.api.Errorf(ErrBadResponse, nil, "the answer has no message (status %q)", resp.Status)
	}
	out.Content = strings.TrimSpace(inlineCiteRE.ReplaceAllString(text, ""))
	seen := map[string]bool{}
	add := func(u, passage string) {
		u = strings.TrimSpace(u)
		if u == "" || seen[u] {
			return
		}
		seen[u] = true
		out.Citations = append(out.Citations, u)
		out.Sources = append(out.Sources, Source{Link: u, Title: PostTitle(u), Text: passage})
	}
	// The posts cited in the answer come first, each with the line that
	// cites it, which the instructions ask to quote the post.
	for _, a := range notes {
		if a.Type == "" || a.Type == "url_citation" {
			add(a.URL, passageAt(text, a.StartIndex, a.URL))
		}
	}
	// Then the other posts the search met; links that are not posts
	// (profiles, web pages) are no sources of an X search.
	for _, c := range resp.Citations {
		if u := string(c); IsPost(u) {
			add(u, passageAt(text, -1, u))
		}
	}
	return out, nil
}

// instructions asks for the posts quoted, one a line, and carries the
// limits the x_search tool has no parameter for.
func instructions(q Query) string {
	var b strings.Builder
	b.WriteString("Search X for posts about the user's query. Answer with one line per post: the author's @handle, the post's own words in quotes, and its citation. ")
	b.WriteString("Do not add facts the posts do not state.")
	if q.MinFavorites > 0 {
		fmt.Fprintf(&b, " Keep only posts with at least %d likes.", q.MinFavorites)
	}
	if q.MinViews > 0 {
		fmt.Fprintf(&b, " Keep only posts with at least %d views.", q.MinViews)
	}
	fmt.Fprintf(&b, " Report at most %d posts.", min(max(q.MaxResults, DefaultMaxResults), MaxResults))
	return b.String()
}

// inlineCiteRE matches the inline citations xAI writes into the text,
// [[1]](https://x.com/…): Sova numbers its sources itself.
var inlineCiteRE = regexp.MustCompile(`\s*\[\[\d+\]\]\([^)\s]*\)`)

// passageAt returns the line of text that holds byte offset at (from an
// annotation) or, when at is out of range, the first line naming link, with
// inline citations and its list mark taken off: the words of the post as
// the answer quotes them. "" when no line fits.
func passageAt(text string, at int, link string) string {
	line := ""
	if at >= 0 && at <= len(text) {
		start := strings.LastIndexByte(text[:at], '\n') + 1
		end := strings.IndexByte(text[at:], '\n')
		if end < 0 {
			end = len(text) - at
		}
		line = text[start : at+end]
	} else {
		for l := range strings.SplitSeq(text, "\n") {
			if strings.Contains(l, link) {
				line = l
				break
			}
		}
	}
	line = inlineCiteRE.ReplaceAllString(line, "")
	return strings.TrimSpace(listMarkRE.ReplaceAllString(strings.TrimSpace(line), ""))
}

// listMarkRE matches the mark of a list item: "- ", "* ", "• ", "3. ".
var listMarkRE = regexp.MustCompile(`^(?:[-*•]|\d+\.)\s+`)

// statusRE finds the author and id of a post URL.
var statusRE = regexp.MustCompile(`(?i)^https?://(?:www\.|mobile\.)?(?:x|twitter)\.com/([A-Za-z0-9_]{1,15})/status(?:es)?/(\d+)`)

// IsPost reports whether link is the URL of a post on X.
func IsPost(link string) bool { return statusRE.MatchString(strings.TrimSpace(link)) }

// PostTitle names a post by its author, "@handle on X", or returns the
// URL's host and path for other links.
func PostTitle(link string) string {
	if m := statusRE.FindStringSubmatch(link); m != nil {
		if strings.EqualFold(m[1], "i") { // x.com/i/status/ID names no author
			return "Post on X"
		}
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
	// Each query's Search is kept aside and its posts returned, so that
	// the progress events count posts, not queries.
	searches := make([]Search, len(queries))
	outs := multiquery.Run(ctx, queries, progress, func(ctx context.Context, i int, q string) ([]Source, error) {
		s, err := c.Search(ctx, Query{
			Text: q, FromDate: from, ToDate: to, IncludeHandles: inc, ExcludeHandles: exc,
			MinFavorites: max(req.PostFavoritesCount, 0), MinViews: max(req.PostViewCount, 0),
			MaxResults: multiquery.At(req.MaxResults, i, DefaultMaxResults),
		})
		if err != nil {
			return nil, err
		}
		searches[i] = s
		return s.Sources, nil
	})
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	res := Result{DateRange: DateRange{from, to}, Handles: Handles{Included: inc, Excluded: exc}, Searches: make([]Search, len(queries))}
	for i, o := range outs {
		s := searches[i]
		if o.Err != nil {
			s = Search{Query: queries[i], DateRange: res.DateRange, Handles: res.Handles, Citations: []string{}, Sources: []Source{}, Error: o.Err.Error()}
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

// responsesRequest is a Responses API request (POST /v1/responses) with
// the server-side x_search tool.
type responsesRequest struct {
	Model           string         `json:"model"`
	Instructions    string         `json:"instructions,omitempty"`
	Input           []inputMessage `json:"input"`
	Tools           []xSearchTool  `json:"tools"`
	MaxOutputTokens int            `json:"max_output_tokens,omitempty"`
	// Store false: xAI keeps no copy of the conversation.
	Store bool `json:"store"`
}

type inputMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// xSearchTool is the x_search tool with its filters; xAI takes either
// allowed or excluded handles (at most 10), and dates as YYYY-MM-DD.
type xSearchTool struct {
	Type             string   `json:"type"`
	AllowedXHandles  []string `json:"allowed_x_handles,omitempty"`
	ExcludedXHandles []string `json:"excluded_x_handles,omitempty"`
	FromDate         string   `json:"from_date,omitempty"`
	ToDate           string   `json:"to_date,omitempty"`
}

// responsesResponse is the part of a Responses API answer read: the
// output items (the searches the server ran, then the message) and every
// URL the searches met.
type responsesResponse struct {
	Status    string       `json:"status"`
	Output    []outputItem `json:"output"`
	Citations []citation   `json:"citations"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}

type outputItem struct {
	Type    string `json:"type"`
	Role    string `json:"role"`
	Content []struct {
		Type        string       `json:"type"`
		Text        string       `json:"text"`
		Annotations []annotation `json:"annotations"`
	} `json:"content"`
}

// annotation is an output_text's url_citation: the link and where in the
// text it is cited.
type annotation struct {
	Type       string `json:"type"`
	URL        string `json:"url"`
	Title      string `json:"title"`
	StartIndex int    `json:"start_index"`
	EndIndex   int    `json:"end_index"`
}

// message returns the text of the answer's assistant message, its
// annotations (offsets into that text), and whether there was one.
func (r *responsesResponse) message() (string, []annotation, bool) {
	var text strings.Builder
	var notes []annotation
	found := false
	for _, it := range r.Output {
		if it.Type != "message" {
			continue
		}
		for _, c := range it.Content {
			if c.Type != "output_text" {
				continue
			}
			found = true
			for _, a := range c.Annotations {
				// Offsets count characters, not bytes.
				if at := byteOffset(c.Text, a.StartIndex); at >= 0 {
					a.StartIndex = text.Len() + at
				} else {
					a.StartIndex = -1
				}
				notes = append(notes, a)
			}
			text.WriteString(c.Text)
		}
	}
	return text.String(), notes, found
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

// byteOffset returns the byte offset of s's n-th character, -1 when s is
// shorter.
func byteOffset(s string, n int) int {
	if n < 0 {
		return -1
	}
	i := 0
	for at := range s {
		if i == n {
			return at
		}
		i++
	}
	if i == n {
		return len(s)
	}
	return -1
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
