// Package apiclient sends requests to the third-party HTTP APIs behind
// Sova: the web search providers (internal/search: SearXNG, Brave,
// DuckDuckGo, Wikipedia, and Exa and Tavily through internal/provider),
// the search groups (internal/provider/academic, internal/provider/youtube,
// internal/provider/reddit) and the data tools (internal/provider/markets,
// internal/provider/coins, internal/provider/weather, internal/provider/places).
//
// A Client bounds every call by a timeout, reads at most MaxBytes of an
// answer, optionally waits its turn on a rate limiter, retries a 5xx answer
// or a network failure (not a timeout) once after a short pause (a 429
// answer too, when Options.MaxRetryAfter allows its wait), and turns
// everything else into an *Error that names the provider and the HTTP
// status. Secrets (API keys sent in headers or query parameters), and the
// values of query parameters that usually carry keys, never appear in an
// error's text.
//
// Callers tell the kind of failure with errors.Is: ErrRateLimited (HTTP
// 429, or what a provider's Describe marks as an exhausted quota),
// ErrNotFound (HTTP 404, or NotFound: nothing matched), ErrInvalidInput
// (Invalid: refused before any request), ErrBadResponse (an answer that
// cannot be parsed) and context.DeadlineExceeded (no answer in time).
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/errtext"
	"golang.org/x/time/rate"
)

// Defaults used when Options leave a value unset.
const (
	// DefaultTimeout bounds one call, its retry included (seed 000 §8.2).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBytes caps how much of an answer is read.
	DefaultMaxBytes = 4 << 20
	// DefaultRetryBackoff is the pause before a retry.
	DefaultRetryBackoff = 500 * time.Millisecond
	// DefaultUserAgent identifies Sova to the APIs it calls.
	DefaultUserAgent = "sova/1 (self-hosted AI search; +https://github.com/sova-ai/sova)"
)

var (
	// ErrRateLimited is matched by the error of an answer that says the
	// client sent too many requests or used up its quota (HTTP 429, or what
	// a provider reports in its own way). Error.RetryAfter says how long the
	// provider asked to wait, when it did.
	ErrRateLimited = egress.ErrRateLimited
	// ErrBadResponse is matched by the error of an answer that arrived but
	// could not be understood (malformed JSON or XML, an unexpected shape).
	ErrBadResponse = errors.New("malformed response")
	// ErrNotFound is matched by the error of a 404 answer, and by NotFound's:
	// the provider found nothing for the input.
	ErrNotFound = egress.ErrNotFound
	// ErrInvalidInput is matched by Invalid's errors: input refused before
	// any request was sent.
	ErrInvalidInput = errors.New("invalid input")
)

// Error is the error of a provider call.
type Error struct {
	Provider   string        // e.g. "openalex"
	Status     int           // HTTP status of the answer; 0 when none arrived
	Message    string        // what went wrong, without secrets
	RetryAfter time.Duration // wait the provider asked for; 0 when it did not say
	// Kind is ErrRateLimited, ErrBadResponse, ErrNotFound, ErrInvalidInput,
	// another egress kind (egress.ErrAuth, egress.ErrTransient,
	// egress.ErrInvalid) or nil; errors.Is matches it.
	Kind error
	Err  error // the cause, if any
	// Addr is where the provider was asked (scheme and host). The text
	// reaches the people who use Sova and leaves it out; Private gives it
	// to the log (errtext.Detail).
	Addr string

	secrets []string
}

// Private is where the provider was asked, for the log.
func (e *Error) Private() string {
	if e.Addr == "" {
		return ""
	}
	return e.Provider + " at " + e.Addr
}

func (e *Error) Error() string {
	s := e.Provider + ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return redact(s, e.secrets)
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the error's Kind.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Invalid returns an error of provider matching ErrInvalidInput, for input
// refused before any request.
func Invalid(provider, format string, args ...any) *Error {
	return &Error{Provider: provider, Message: fmt.Sprintf(format, args...), Kind: ErrInvalidInput}
}

// NotFound returns an error of provider matching ErrNotFound, for an answer
// that holds nothing for the input.
func NotFound(provider, format string, args ...any) *Error {
	return &Error{Provider: provider, Message: fmt.Sprintf(format, args...), Kind: ErrNotFound}
}

// Options configure a Client.
type Options struct {
	// Provider names the API in errors ("openalex", "youtube", ...).
	Provider string
	// HTTPClient sends the requests; nil means an egress client (see
	// package egress) with Timeout, on which only public addresses and
	// the hosts of Bases are reachable.
	HTTPClient *http.Client
	// Bases are the provider's configured base URLs: an administrator
	// may point them anywhere (a mirror on the local network), so their
	// hosts are reachable wherever they are. Redirects and every other
	// host go through the address guard.
	Bases []string
	// Timeout bounds one call, its retries and its wait for a turn on
	// Limiter included; 0 means DefaultTimeout, a negative value leaves
	// only the caller's context (and HTTPClient's own timeout).
	Timeout time.Duration
	// UserAgent is sent with every request; "" means DefaultUserAgent.
	UserAgent string
	// MaxBytes caps how much of an answer is read; 0 means DefaultMaxBytes.
	// A larger answer is an error, never silently cut.
	MaxBytes int64
	// RetryBackoff is the pause before retrying a 5xx answer or a network
	// failure; 0 means DefaultRetryBackoff, a negative value turns retries
	// off. Timeouts and 4xx answers are never retried (429 only as
	// MaxRetryAfter says).
	RetryBackoff time.Duration
	// Retries is how often a 5xx answer or a network failure is retried;
	// 0 means once.
	Retries int
	// MaxRetryAfter, when positive, makes a 429 answer retried like a
	// 5xx one, after the wait its Retry-After asks for (at least
	// RetryBackoff), as long as that wait is at most MaxRetryAfter; a
	// longer one makes the answer final. 0 leaves 429 final, for callers
	// with another provider to move on to.
	MaxRetryAfter time.Duration
	// Limiter, when set, is waited on before every attempt, so that the
	// provider gets no more requests than it allows.
	Limiter *rate.Limiter
	// Secrets are removed from every error's text (API keys).
	Secrets []string
	// Describe, when set, extracts the provider's own message from a non-2xx
	// answer and reports whether it means a rate limit or exhausted quota
	// (429 always does). detail "" falls back to ErrorDetail, then to the
	// start of the body.
	Describe func(status int, body []byte) (detail string, rateLimited bool)
	// Hint, when set, adds advice to the error of a non-2xx answer
	// ("check the API key"); "" adds none.
	Hint func(status int) string
	// Cause, when set, gives the error of a non-2xx answer a cause that
	// errors.Is matches and its text ends with: what the person can do
	// about it (a setting to change); nil adds none.
	Cause func(status int) error
	// Breaker remembers failures of the provider (5xx, 429, no answer)
	// across calls: after a few in a row every call fails at once for a
	// cool-down, so that a run whose provider is down does not ask it
	// again and again. nil means one of the client's own with egress's
	// defaults.
	Breaker *egress.Breaker
}

// Client calls one provider's API. It is safe for concurrent use.
type Client struct {
	opts Options
	http *http.Client
}

// New returns a Client for opts.
func New(opts Options) *Client {
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.UserAgent == "" {
		opts.UserAgent = DefaultUserAgent
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	if opts.RetryBackoff == 0 {
		opts.RetryBackoff = DefaultRetryBackoff
	}
	switch {
	case opts.RetryBackoff < 0:
		opts.Retries = 0
	case opts.Retries <= 0:
		opts.Retries = 1
	}
	var secrets []string
	for _, s := range opts.Secrets {
		if s = strings.TrimSpace(s); s != "" {
			secrets = append(secrets, s)
		}
	}
	opts.Secrets = secrets
	hc := opts.HTTPClient
	if hc == nil {
		hc = egress.NewClient(egress.Config{Policy: egress.Policy{Allow: egress.Hosts(opts.Bases...)}, Timeout: max(opts.Timeout, -1)})
	}
	opts.HTTPClient = hc
	if opts.Breaker == nil {
		opts.Breaker = egress.NewBreaker(egress.BreakerConfig{})
	}
	return &Client{opts: opts, http: hc}
}

// Provider returns the provider's name.
func (c *Client) Provider() string { return c.opts.Provider }

// Options returns the options in effect, defaults filled in.
func (c *Client) Options() Options { return c.opts }

// Get sends GET rawURL with header and returns the body of a 2xx answer.
func (c *Client) Get(ctx context.Context, rawURL string, header http.Header) ([]byte, error) {
	return c.Do(ctx, http.MethodGet, rawURL, header, nil)
}

// GetJSON sends GET rawURL and decodes a 2xx JSON answer into out.
func (c *Client) GetJSON(ctx context.Context, rawURL string, header http.Header, out any) error {
	h := cloneHeader(header)
	if h.Get("Accept") == "" {
		h.Set("Accept", "application/json")
	}
	body, err := c.Get(ctx, rawURL, h)
	if err != nil {
		return err
	}
	return c.DecodeJSON(body, out)
}

// PostJSON sends in as a JSON body to rawURL and decodes a 2xx JSON answer
// into out.
func (c *Client) PostJSON(ctx context.Context, rawURL string, header http.Header, in, out any) error {
	payload, err := json.Marshal(in)
	if err != nil {
		return c.Errorf(nil, err, "cannot encode the request")
	}
	h := cloneHeader(header)
	h.Set("Content-Type", "application/json")
	if h.Get("Accept") == "" {
		h.Set("Accept", "application/json")
	}
	body, err := c.Do(ctx, http.MethodPost, rawURL, h, payload)
	if err != nil {
		return err
	}
	return c.DecodeJSON(body, out)
}

// DecodeJSON decodes body into out; a failure is an error matching
// ErrBadResponse that quotes the start of the body. An answer that is not
// JSON at all (an HTML error page, say) is reported as "not valid JSON",
// JSON that is cut short or of another shape as "not the expected JSON".
func (c *Client) DecodeJSON(body []byte, out any) error {
	err := json.Unmarshal(body, out)
	if err == nil {
		return nil
	}
	trimmed := bytes.TrimLeftFunc(body, unicode.IsSpace)
	if json.Valid(body) || bytes.HasPrefix(trimmed, []byte("{")) || bytes.HasPrefix(trimmed, []byte("[")) {
		return c.Errorf(ErrBadResponse, err, "the answer is not the expected JSON (not valid JSON, or not in the documented shape); it starts with %q", Snippet(body))
	}
	return c.Errorf(ErrBadResponse, err, "the answer is not valid JSON; it starts with %q", Snippet(body))
}

// Errorf returns an *Error of the client's provider. kind is one of the
// package's Err values or nil; cause may be nil.
func (c *Client) Errorf(kind, cause error, format string, args ...any) *Error {
	return &Error{
		Provider: c.opts.Provider,
		Message:  fmt.Sprintf(format, args...),
		Kind:     kind,
		Err:      cause,
		secrets:  c.opts.Secrets,
	}
}

// Do sends one request (retried on a 5xx answer or a network failure, as
// Options say) and returns the body of a 2xx answer.
func (c *Client) Do(ctx context.Context, method, rawURL string, header http.Header, body []byte) ([]byte, error) {
	out, _, err := c.DoStatus(ctx, method, rawURL, header, body)
	return out, err
}

// DoStatus is Do that also returns the status of the 2xx answer, for
// APIs that say something with it (202: accepted but not answered).
func (c *Client) DoStatus(ctx context.Context, method, rawURL string, header http.Header, body []byte) ([]byte, int, error) {
	parent := ctx
	if c.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	br, name := c.opts.Breaker, c.opts.Provider
	var err error
	for attempt := 0; ; attempt++ {
		if open := br.Allow(name); open != nil {
			if err == nil {
				err = c.at(c.Errorf(nil, open, "not asked"), rawURL)
			}
			break
		}
		var (
			out    []byte
			status int
			retry  bool
			wait   time.Duration
		)
		out, status, retry, wait, err = c.once(ctx, method, rawURL, header, body)
		if ctx.Err() == nil {
			br.Record(name, err)
		}
		if err == nil {
			return out, status, nil
		}
		if !retry || attempt >= c.opts.Retries || !br.Sleep(ctx, name, max(wait, c.opts.RetryBackoff)) {
			break
		}
	}
	if perr := parent.Err(); perr != nil {
		if errors.Is(perr, context.Canceled) {
			return nil, 0, c.at(c.Errorf(nil, perr, "request cancelled before the service answered"), rawURL)
		}
		return nil, 0, c.at(c.Errorf(nil, perr, "request stopped (cancelled at the caller's deadline)"), rawURL)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, 0, c.noAnswer(rawURL, c.opts.Timeout)
	}
	return nil, 0, err
}

// once performs one attempt. A failure that may be retried says so, with
// the wait the service asked for (0: none).
func (c *Client) once(ctx context.Context, method, rawURL string, header http.Header, body []byte) (data []byte, status int, retry bool, wait time.Duration, err error) {
	if err := c.wait(ctx); err != nil {
		return nil, 0, false, 0, err
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, rd)
	if err != nil {
		return nil, 0, false, 0, c.Errorf(nil, unwrapURLError(err), "cannot build the request")
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)

	resp, err := c.http.Do(req)
	if err != nil {
		e, retry := c.transportError(ctx, rawURL, err, "cannot reach the service")
		return nil, 0, retry, 0, e
	}
	defer resp.Body.Close()

	data, err = io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBytes+1))
	if err != nil {
		e, retry := c.transportError(ctx, rawURL, err, "reading the answer failed")
		e.Status = resp.StatusCode
		return nil, 0, retry, 0, e
	}
	if int64(len(data)) > c.opts.MaxBytes {
		e := c.at(c.Errorf(ErrBadResponse, nil, "the answer is larger than %s", sizeText(c.opts.MaxBytes)), rawURL)
		e.Status = resp.StatusCode
		return nil, 0, false, 0, e
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return data, resp.StatusCode, false, 0, nil
	}
	e := c.statusError(rawURL, resp, data)
	if resp.StatusCode == http.StatusTooManyRequests && c.opts.MaxRetryAfter > 0 {
		// A short pause the service asks for is worth waiting out; a long
		// one is the caller's to handle (another provider, a later try).
		return nil, 0, e.RetryAfter <= c.opts.MaxRetryAfter, e.RetryAfter, e
	}
	return nil, 0, resp.StatusCode >= 500, 0, e
}

// wait takes a turn on the Limiter, if any.
func (c *Client) wait(ctx context.Context) error {
	lim := c.opts.Limiter
	if lim == nil {
		return nil
	}
	err := lim.Wait(ctx)
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return c.Errorf(nil, ctx.Err(), "waiting for a turn stopped")
	}
	// The limiter refuses at once a wait that would outlast the context's
	// deadline.
	every := time.Duration(float64(time.Second) / float64(lim.Limit()))
	return c.Errorf(nil, context.DeadlineExceeded, "no turn before the deadline (this service takes one request every %s)", every)
}

// transportError describes a request that got no answer, or whose answer
// could not be read, and reports whether it may be retried: a timeout or a
// done context is final.
func (c *Client) transportError(ctx context.Context, rawURL string, err error, format string) (*Error, bool) {
	if ctx.Err() == nil && isTimeout(err) {
		return c.noAnswer(rawURL, c.http.Timeout), false
	}
	return c.at(c.Errorf(nil, errtext.Net(unwrapURLError(err)), "%s", format), rawURL), ctx.Err() == nil
}

// noAnswer is the error of a call that got no answer within limit.
func (c *Client) noAnswer(rawURL string, limit time.Duration) *Error {
	within := ""
	if limit > 0 {
		within = " within " + limit.String()
	}
	return c.at(c.Errorf(nil, context.DeadlineExceeded, "no answer%s (the service is slow or unreachable)", within), rawURL)
}

// at records where the failed request went.
func (c *Client) at(e *Error, rawURL string) *Error {
	e.Addr = hostOf(rawURL)
	return e
}

// statusError describes a non-2xx answer.
func (c *Client) statusError(rawURL string, resp *http.Response, body []byte) *Error {
	detail, limited := "", false
	if c.opts.Describe != nil {
		detail, limited = c.opts.Describe(resp.StatusCode, body)
	}
	if detail == "" {
		detail = ErrorDetail(body)
	}
	if detail == "" {
		detail = Snippet(body)
	}
	msg := "the service answered " + StatusText(resp.StatusCode)
	if detail != "" {
		// The provider's own message may name addresses (a proxy's upstream).
		msg += ": " + errtext.Scrub(detail, hostOf(rawURL))
	}
	if c.opts.Hint != nil {
		if h := c.opts.Hint(resp.StatusCode); h != "" {
			msg += " (" + h + ")"
		}
	}
	var cause error
	if c.opts.Cause != nil {
		cause = c.opts.Cause(resp.StatusCode)
	}
	e := c.at(c.Errorf(nil, cause, "%s", msg), rawURL)
	e.Status = resp.StatusCode
	switch {
	case resp.StatusCode == http.StatusTooManyRequests || limited:
		e.Kind = ErrRateLimited
		e.RetryAfter = egress.RetryAfter(resp.Header, time.Now())
		if e.RetryAfter > 0 {
			e.Message += fmt.Sprintf("; retry after %s", e.RetryAfter)
		}
	case resp.StatusCode == http.StatusNotFound:
		e.Kind = ErrNotFound
	default:
		// The egress kinds: auth (401, 403), transient (5xx), invalid.
		e.Kind = egress.KindOfStatus(resp.StatusCode)
	}
	return e
}

// ErrorDetail extracts a message from the error bodies providers commonly
// send: {"error":"..."}, {"error":{"message"|"description"}},
// {"chart"|"finance":{"error":{...}}}, {"message"}, {"reason"},
// {"status":{"error_message"}} and {"description"}. It returns "" for
// anything else.
func ErrorDetail(body []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return ""
	}
	if s := errorField(m["error"]); s != "" {
		return s
	}
	for _, k := range []string{"chart", "finance"} {
		var inner map[string]json.RawMessage
		if json.Unmarshal(m[k], &inner) == nil {
			if s := errorField(inner["error"]); s != "" {
				return s
			}
		}
	}
	for _, k := range []string{"message", "reason"} {
		if s := stringField(m[k]); s != "" {
			return s
		}
	}
	if s := statusMessage(m["status"]); s != "" {
		return s
	}
	return stringField(m["description"])
}

// errorField reads "error" as a string or as an object with a message, a
// description or a nested status.error_message.
func errorField(raw json.RawMessage) string {
	if s := stringField(raw); s != "" {
		return s
	}
	var o map[string]json.RawMessage
	if json.Unmarshal(raw, &o) != nil {
		return ""
	}
	for _, k := range []string{"message", "description"} {
		if s := stringField(o[k]); s != "" {
			return s
		}
	}
	return statusMessage(o["status"])
}

// statusMessage reads {"error_message": "..."} (CoinGecko's "status").
func statusMessage(raw json.RawMessage) string {
	var status map[string]json.RawMessage
	if json.Unmarshal(raw, &status) != nil {
		return ""
	}
	return stringField(status["error_message"])
}

// stringField returns raw as a one-line string of at most 200 runes, ""
// when it is not a non-blank JSON string.
func stringField(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return Snippet([]byte(s))
}

// BaseURL returns s, or def when s is blank, without a trailing slash. It
// fails, naming the setting, when the address is not an absolute http or
// https URL without query or fragment.
func BaseURL(setting, s, def string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = def
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		shown := "the value"
		if err == nil {
			shown = fmt.Sprintf("%q", u.Redacted())
		}
		return "", fmt.Errorf("%s: %s is not an http(s) base URL such as %s", setting, shown, def)
	}
	return strings.TrimRight(s, "/"), nil
}

// StatusText renders "HTTP 503 Service Unavailable".
func StatusText(status int) string { return errtext.HTTPStatus(status) }

// Snippet returns the start of body as one line of at most 200 runes, HTML
// tags removed, for error messages (errtext.TextSnippet).
func Snippet(body []byte) string { return errtext.TextSnippet(body) }

// hostOf names the server of rawURL without path and query string, which
// may be long or carry input and secrets.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "the provider"
	}
	return u.Scheme + "://" + u.Host
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the full
// request URL (query string and key included), keeping the cause.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) && ue.Err != nil {
		return ue.Err
	}
	return err
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// keyParam matches query parameters that commonly carry credentials.
var keyParam = regexp.MustCompile(`(?i)\b(appid|api_?key|apikey|key|token|access_token|x_cg_(?:demo|pro)_api_key)=[^&\s"']+`)

// redact removes every secret (also query-escaped) from s and blanks the
// values of query parameters that usually carry keys (appid=, key=,
// api_key=, token=, ...).
func redact(s string, secrets []string) string {
	for _, k := range secrets {
		s = strings.ReplaceAll(s, k, "[redacted]")
		if q := url.QueryEscape(k); q != k {
			s = strings.ReplaceAll(s, q, "[redacted]")
		}
	}
	return keyParam.ReplaceAllString(s, "$1=[redacted]")
}

func cloneHeader(h http.Header) http.Header {
	if h == nil {
		return http.Header{}
	}
	return h.Clone()
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// FlexString decodes a JSON string; null and values of other types become
// "" (providers send null for unknown titles, dates and authors).
type FlexString string

// UnmarshalJSON implements json.Unmarshaler.
func (f *FlexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = FlexString(s)
		return nil
	}
	*f = ""
	return nil
}

// Keyed is a Client of an API that takes a key, at one base URL: the
// shared clients of internal/provider (Exa, Tavily) are one each.
type Keyed struct {
	*Client
	key  string
	base string
}

// NewKeyed returns a Keyed client for key at base ("" means def). opts'
// Bases and Secrets get base and key added.
func NewKeyed(key, base, def string, opts Options) Keyed {
	key = strings.TrimSpace(key)
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		base = def
	}
	opts.Bases = append(opts.Bases, base)
	opts.Secrets = append(opts.Secrets, key)
	return Keyed{Client: New(opts), key: key, base: base}
}

// HasKey reports whether there is a key; without one the API is not asked.
func (k Keyed) HasKey() bool { return k.key != "" }

// Key is the key.
func (k Keyed) Key() string { return k.key }

// Base is the base URL requests go to.
func (k Keyed) Base() string { return k.base }
