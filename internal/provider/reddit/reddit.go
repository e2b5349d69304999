// Package reddit searches Reddit for the reddit_search tool (seed 000 §3.3,
// DESIGN §8).
//
// With a Tavily key the search is Tavily's, restricted to reddit.com;
// without one it is Reddit's own JSON search (/search.json, or
// /r/{sub}/search.json when the query names a subreddit such as
// "r/golang"). A query that is a Reddit post URL reads that post and its
// top comments instead (/comments/{id}.json). Run is the tool's pipeline:
// 1–5 queries in parallel with a time range each, reported as
// data-query_completion events.
package reddit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/provider/tavily"
)

// Default settings, used when a Config field is "".
const (
	DefaultRedditURL = "https://www.reddit.com"
	DefaultTavilyURL = "https://api.tavily.com"
	// DefaultUserAgent follows Reddit's rule for API clients,
	// "<platform>:<app ID>:<version> (by ...)"; Reddit throttles or blocks
	// generic agents.
	DefaultUserAgent = "server:sova:v1 (self-hosted AI search; +https://github.com/sova-ai/sova)"
)

// Limits and defaults of searches and posts.
const (
	// DefaultMaxResults is the number of posts a search returns (000 §3.3).
	DefaultMaxResults = 20
	// MaxResults caps a keyless search (Reddit's limit is 100).
	MaxResults = 100
	// DefaultTimeRange is the time range of a query that names none.
	DefaultTimeRange = "week"
	// DefaultComments is the number of top comments read with a post.
	DefaultComments = 10
	// MaxComments caps the comments read with a post.
	MaxComments = 50

	contentRunes = 1500 // post text kept per post
	commentRunes = 800  // text kept per comment
)

// ErrRateLimited and ErrBadResponse are matched (errors.Is) by the errors of
// a provider that refused for too many requests or an exhausted plan, and
// of an answer that could not be parsed.
var (
	ErrRateLimited = apiclient.ErrRateLimited
	ErrBadResponse = apiclient.ErrBadResponse
)

// Config holds the settings of the Reddit providers. The env tags are the
// variables internal/config reads them from (docs/configuration.md).
type Config struct {
	// RedditURL is Reddit's base for the keyless search and for reading
	// posts (SOVA_REDDIT_URL).
	RedditURL string `env:"SOVA_REDDIT_URL" envDefault:"https://www.reddit.com"`
	// UserAgent is sent to Reddit (SOVA_REDDIT_USER_AGENT); "" means
	// DefaultUserAgent.
	UserAgent string `env:"SOVA_REDDIT_USER_AGENT"`
	// TavilyAPIKey selects Tavily for searches (TAVILY_API_KEY).
	TavilyAPIKey string `env:"TAVILY_API_KEY"`
	// TavilyURL is the Tavily API base (SOVA_TAVILY_URL).
	TavilyURL string `env:"SOVA_TAVILY_URL" envDefault:"https://api.tavily.com"`

	// HTTPClient sends the requests; nil means one with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one provider call, its retry included; 0 means 30s
	// (SOVA_PROVIDER_TIMEOUT).
	Timeout time.Duration `env:"SOVA_PROVIDER_TIMEOUT" envDefault:"30s"`
	// RetryBackoff is the pause before retrying a 5xx answer or a network
	// failure; 0 means 500ms, negative turns the retry off.
	RetryBackoff time.Duration
}

// Client searches Reddit and reads posts.
type Client struct {
	redditBase string
	reddit     *apiclient.Client
	tavily     *tavily.Client
}

// New returns a Client for cfg.
func New(cfg Config) *Client {
	ua := strings.TrimSpace(cfg.UserAgent)
	if ua == "" {
		ua = DefaultUserAgent
	}
	return &Client{
		redditBase: baseURL(cfg.RedditURL, DefaultRedditURL),
		reddit: apiclient.New(apiclient.Options{
			Provider: "reddit", HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout, Bases: []string{cfg.RedditURL},
			UserAgent: ua, RetryBackoff: cfg.RetryBackoff, Describe: describeReddit,
		}),
		tavily: tavily.New(cfg.TavilyAPIKey, baseURL(cfg.TavilyURL, DefaultTavilyURL), apiclient.Options{
			HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout, RetryBackoff: cfg.RetryBackoff,
		}),
	}
}

// HasTavily reports whether searches go through Tavily.
func (c *Client) HasTavily() bool { return c.tavily.HasKey() }

// Post is a Reddit post (or, from Tavily, a reddit.com page).
type Post struct {
	ID    string `json:"id,omitempty"`
	Title string `json:"title"`
	// URL is the post's page on reddit.com (the page Tavily found).
	URL string `json:"url"`
	// LinkURL is where a link post points; empty for text posts.
	LinkURL     string    `json:"linkUrl,omitempty"`
	Subreddit   string    `json:"subreddit,omitempty"`
	Author      string    `json:"author,omitempty"`
	Score       int       `json:"score,omitempty"`       // Reddit's score (upvotes less downvotes)
	NumComments int       `json:"numComments,omitempty"` // comment count
	Created     time.Time `json:"created,omitzero"`
	// Content is an excerpt of the post's text (Tavily: of the page).
	Content string `json:"content,omitempty"`
	// IsRedditPost is true for a post page (/comments/ in its URL), false
	// for a subreddit or other reddit.com page.
	IsRedditPost bool      `json:"isRedditPost"`
	NSFW         bool      `json:"nsfw,omitempty"`
	Comments     []Comment `json:"comments,omitempty"`
	// Relevance is Tavily's relevance score (0–1); 0 from Reddit.
	Relevance float64 `json:"relevance,omitempty"`
	Source    string  `json:"source"` // "reddit" or "tavily"
}

// Comment is a comment on a post.
type Comment struct {
	Author  string    `json:"author"`
	Body    string    `json:"body"`
	Score   int       `json:"score,omitempty"`
	Created time.Time `json:"created,omitzero"`
	URL     string    `json:"url,omitempty"`
}

// Query is one search.
type Query struct {
	Text string
	// TimeRange is "day", "week", "month", "year" or "all"; "" means
	// DefaultTimeRange.
	TimeRange string
	// Sort is "relevance" (default), "hot", "top", "new" or "comments"
	// (keyless search only; Tavily ranks by relevance).
	Sort string
	// MaxResults caps the posts; 0 means DefaultMaxResults.
	MaxResults int
	// Subreddit restricts the search; "" means the one Text names, if any
	// ("r/golang").
	Subreddit string
}

// Search searches Reddit: through Tavily when the client has a key,
// otherwise through Reddit's JSON search.
func (c *Client) Search(ctx context.Context, q Query) ([]Post, error) {
	tr, err := normTimeRange(q.TimeRange)
	if err != nil {
		return nil, err
	}
	q.TimeRange = tr
	sort := strings.ToLower(strings.TrimSpace(q.Sort))
	switch sort {
	case "":
		sort = "relevance"
	case "relevance", "hot", "top", "new", "comments":
	default:
		return nil, fmt.Errorf("reddit: unsupported sort %q (use relevance, hot, top, new or comments)", q.Sort)
	}
	q.Sort = sort
	q.Text = strings.TrimSpace(q.Text)
	if q.MaxResults <= 0 {
		q.MaxResults = DefaultMaxResults
	}
	sub, rest := DetectSubreddit(q.Text)
	if s := strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(q.Subreddit), "/"), "r/"); s != "" {
		sub, rest = s, q.Text
	}
	if sub != "" && !subNameRE.MatchString(sub) {
		return nil, fmt.Errorf("reddit: %q is not a subreddit name", sub)
	}
	if q.Text == "" && sub == "" {
		return nil, errors.New("reddit: the query is empty")
	}
	if c.tavily.HasKey() {
		return c.searchTavily(ctx, q, sub)
	}
	return c.searchReddit(ctx, q, sub, rest)
}

// normTimeRange checks a time range and applies the default.
func normTimeRange(tr string) (string, error) {
	tr = strings.ToLower(strings.TrimSpace(tr))
	switch tr {
	case "":
		return DefaultTimeRange, nil
	case "day", "week", "month", "year", "all":
		return tr, nil
	}
	return "", fmt.Errorf("reddit: unsupported time range %q (use day, week, month, year or all)", tr)
}

var (
	// subredditRE finds "r/golang" or "/r/golang" as a word of a query, not
	// inside a URL.
	subredditRE = regexp.MustCompile(`(?i)(?:^|[\s(,;])/?r/([a-z0-9][a-z0-9_]{1,20})\b\)?`)
	// postURLRE finds a Reddit post URL: reddit.com/r/{sub}/comments/{id},
	// reddit.com/comments/{id} or redd.it/{id}.
	postURLRE = regexp.MustCompile(`(?i)(?:https?://)?(?:(?:www|old|new|np|m|i)\.)?(?:reddit\.com(?:/r/[a-z0-9_]+)?/comments/([a-z0-9]{2,12})|redd\.it/([a-z0-9]{2,12}))(?:[/?#][^\s]*)?`)
	subNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_]{1,20}$`)
	spacesRE  = regexp.MustCompile(`\s+`)
	tagRE     = regexp.MustCompile(`<[^>]*>`)
)

// DetectSubreddit finds a subreddit named in a query ("best ORMs r/golang")
// and returns it with the rest of the query ("best ORMs"). sub is "" when
// the query names none.
func DetectSubreddit(text string) (sub, rest string) {
	loc := subredditRE.FindStringSubmatchIndex(text)
	if loc == nil {
		return "", strings.TrimSpace(text)
	}
	sub = text[loc[2]:loc[3]]
	rest = text[:loc[0]] + " " + text[loc[1]:]
	return sub, strings.TrimSpace(spacesRE.ReplaceAllString(rest, " "))
}

// PostID finds a Reddit post URL in text and returns the post's id.
func PostID(text string) (string, bool) {
	m := postURLRE.FindStringSubmatch(text)
	if m == nil {
		return "", false
	}
	id := m[1]
	if id == "" {
		id = m[2]
	}
	return strings.ToLower(id), true
}

// urlParts extracts the subreddit and post id of a reddit.com URL.
var urlPartsRE = regexp.MustCompile(`(?i)reddit\.com/r/([a-z0-9_]+)(?:/comments/([a-z0-9]+))?`)

func urlParts(u string) (sub, id string) {
	m := urlPartsRE.FindStringSubmatch(u)
	if m == nil {
		if id, ok := PostID(u); ok {
			return "", id
		}
		return "", ""
	}
	return m[1], strings.ToLower(m[2])
}

func baseURL(raw, def string) string {
	b := strings.TrimRight(strings.TrimSpace(raw), "/")
	if b == "" {
		return def
	}
	return b
}

// clip shortens s to at most n runes, adding "…" when it cut.
func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:n])) + "…"
}
