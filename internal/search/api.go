package search

import (
	"net/http"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
	"github.com/sova-ai/sova/internal/errtext"
)

// api turns the search options into those of apiclient, the one HTTP
// layer of provider APIs: no timeout of the provider's own is apiclient's
// negative one, no backoff (retry at once) a nanosecond's (0 is its
// default). Exa and Tavily, the clients the groups share, take these as
// they are: a 429 from them is final, so that the chain moves on.
func (c config) api(hc *http.Client) apiclient.Options {
	o := apiclient.Options{HTTPClient: hc, Timeout: c.timeout, RetryBackoff: c.backoff, UserAgent: c.userAgent}
	if o.Timeout <= 0 {
		o.Timeout = -1
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = time.Nanosecond
	}
	return o
}

// client returns the apiclient.Client of a provider whose wire code lives
// in this package (SearXNG, Brave, DuckDuckGo, Wikipedia). o names the
// provider and reads its error answers; the search options set the rest:
// a 5xx answer or a network failure is retried once, a 429 once when its
// Retry-After is at most maxRetryAfter, and the provider's breaker stops
// asking it after failures in a row. A nil hc means an egress client on
// which the hosts of o.Bases are reachable wherever they are.
func (c config) client(hc *http.Client, o apiclient.Options) *apiclient.Client {
	base := c.api(hc)
	o.HTTPClient, o.Timeout, o.RetryBackoff, o.UserAgent = base.HTTPClient, base.Timeout, base.RetryBackoff, base.UserAgent
	o.MaxBytes = maxResponseBytes
	o.MaxRetryAfter = maxRetryAfter
	return apiclient.New(o)
}

// snippet quotes the start of an answer's body for error messages.
func snippet(body []byte) string { return errtext.Snippet(body) }
