// Package search queries web search providers (SearXNG, Tavily, Exa,
// Brave, and the keyless DuckDuckGo and Wikipedia) and post-processes
// their results: URL normalisation, de-duplication, block lists and
// parallel fan-out of several queries. Throttle holds a provider to a
// concurrency and rate limit shared by all runs; Chain tries providers in
// order and may keep answers in a ResultCache.
//
// Every provider sends its requests through internal/apiclient, the one
// HTTP layer of provider APIs, and waits on the context it is given and a
// per-call timeout (DefaultTimeout unless WithTimeout says otherwise). A
// call is retried once, after a short backoff, when the provider answers
// 5xx or when the network fails; a 429 from SearXNG, Brave, DuckDuckGo or
// Wikipedia is retried once when it asks for a short wait, one from Exa or
// Tavily is final; other 4xx answers are final. Each provider has a
// breaker: after failures in a row it is not asked for a cool-down, and
// its calls fail at once saying so.
package search

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Defaults used when a Query or an Option leaves a value unset.
const (
	// DefaultTimeout bounds one provider call, retries included (seed 000 §8.2).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxResults is used when Query.MaxResults is zero or negative.
	DefaultMaxResults = 10
	// DefaultRetryBackoff is the pause before the single retry.
	DefaultRetryBackoff = 500 * time.Millisecond
	// DefaultUserAgent is sent with every request.
	DefaultUserAgent = "sova-search/1"

	// maxRetryAfter is the longest Retry-After we are willing to wait before
	// the retry; a longer one makes the first answer final.
	maxRetryAfter = 5 * time.Second
	// maxResponseBytes caps how much of a provider answer is read.
	maxResponseBytes = 8 << 20
)

// Query is one search request.
type Query struct {
	Text       string
	MaxResults int    // <= 0 means DefaultMaxResults
	Language   string // BCP 47 tag such as "en" or "ru-RU"; "" = provider default
	// TimeRange restricts results by publication date: "", "day", "week",
	// "month" or "year".
	TimeRange      string
	IncludeDomains []string // only results from these domains (and subdomains)
	ExcludeDomains []string // no results from these domains (and subdomains)
}

// Result is one search hit.
type Result struct {
	URL       string
	Title     string
	Snippet   string
	Content   string // longer text when the provider offers it; often empty
	Published string // publication date as the provider gave it
	Author    string
	Favicon   string
	Engine    string // the upstream engine(s), for meta-search providers
	Provider  string // the provider that answered ("searxng", "tavily", ...)
	Score     float64
	Images    []string
}

// Provider is a web search backend.
type Provider interface {
	Name() string
	Search(ctx context.Context, q Query) ([]Result, error)
}

// validTimeRange reports whether s is an accepted Query.TimeRange value.
func validTimeRange(s string) bool {
	switch s {
	case "", "day", "week", "month", "year":
		return true
	}
	return false
}

// maxResults returns the effective result cap of q.
func (q Query) maxResults() int {
	if q.MaxResults <= 0 {
		return DefaultMaxResults
	}
	return q.MaxResults
}

// validate reports problems with q that no provider could fix.
func (q Query) validate() error {
	if strings.TrimSpace(q.Text) == "" {
		return errors.New("the query text is empty")
	}
	if !validTimeRange(q.TimeRange) {
		return fmt.Errorf("unsupported time range %q (use day, week, month, year or leave it empty)", q.TimeRange)
	}
	return nil
}

// Option configures a provider built by NewSearXNG or NewTavily.
type Option func(*config)

type config struct {
	timeout   time.Duration
	backoff   time.Duration
	userAgent string
	images    bool
	depth     string // Tavily search_depth; "" means basic
	raw       string // Tavily include_raw_content; "" means none
}

func newConfig(opts []Option) config {
	c := config{timeout: DefaultTimeout, backoff: DefaultRetryBackoff, userAgent: DefaultUserAgent}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	return c
}

// WithTimeout bounds each Search call, retry included. Zero or negative
// disables the provider's own bound; the caller's context still applies.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithRetryBackoff sets the pause before the single retry (default
// DefaultRetryBackoff). A 429 answer's Retry-After, when shorter than a few
// seconds, takes precedence.
func WithRetryBackoff(d time.Duration) Option {
	return func(c *config) {
		if d >= 0 {
			c.backoff = d
		}
	}
}

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option {
	return func(c *config) {
		if ua != "" {
			c.userAgent = ua
		}
	}
}

// WithImages asks providers that return images only on request to include
// them (Tavily: include_images). SearXNG returns thumbnails regardless.
func WithImages() Option { return func(c *config) { c.images = true } }

// WithAdvancedDepth makes Tavily search at search_depth "advanced" (more
// relevant passages, twice the credits).
func WithAdvancedDepth() Option { return func(c *config) { c.depth = "advanced" } }

// WithRawContent asks Tavily for each page's text in format ("markdown"
// or "text") as include_raw_content; it arrives in Result.Content.
func WithRawContent(format string) Option { return func(c *config) { c.raw = format } }

// Error is the error of a search provider: apiclient's, which the wire
// errors of every provider already are, so that search's own (an invalid
// query, an answer that is not JSON) read and match alike. Its text starts
// with the provider name, so it reads well on its own and inside a Chain
// error.
//
// The text reaches the people who use Sova (a failed query's part of the
// stream, a tool's result), so it says which provider failed and why but
// not where the provider lives: the address is Addr, which only the log
// sees (errtext.Detail), and network failures in Err name no address
// either (errtext.Net).
type Error = apiclient.Error

// ErrJSONDisabled is wrapped by the error of a SearXNG instance that refuses
// format=json (it answers 403 unless JSON is enabled in settings.yml).
var ErrJSONDisabled = errors.New("enable the JSON format in the SearXNG settings.yml (search: formats: [html, json]) and restart SearXNG")
