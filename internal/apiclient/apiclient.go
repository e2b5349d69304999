// Package apiclient sends requests to the third-party HTTP APIs behind the
// search-group tools (internal/academic, internal/youtube, internal/reddit).
//
// A Client bounds every call by a timeout, reads at most MaxBytes of an
// answer, retries a 5xx answer or a network failure once after a short
// pause, and turns everything else into an *Error that names the provider
// and the HTTP status. Secrets (API keys sent in headers or query
// parameters) never appear in an error's text. A 429 answer, or an answer a
// provider's Describe marks as an exhausted quota, matches ErrRateLimited
// with errors.Is; an answer that cannot be parsed matches ErrBadResponse.
package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/sova-ai/sova/internal/errtext"
)

// Defaults used when Options leave a value unset.
const (
	// DefaultTimeout bounds one call, its retry included (seed 000 §8.2).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxBytes caps how much of an answer is read.
	DefaultMaxBytes = 4 << 20
	// DefaultRetryBackoff is the pause before the single retry.
	DefaultRetryBackoff = 500 * time.Millisecond
	// DefaultUserAgent identifies Sova to the APIs it calls.
	DefaultUserAgent = "sova/1 (self-hosted AI search; +https://github.com/sova-ai/sova)"

	// maxSnippetRunes caps how much of an answer body an error quotes.
	maxSnippetRunes = 200
)

var (
	// ErrRateLimited is matched by the error of an answer that says the
	// client sent too many requests or used up its quota (HTTP 429, or what
	// a provider reports in its own way). Error.RetryAfter says how long the
	// provider asked to wait, when it did.
	ErrRateLimited = errors.New("rate limited")
	// ErrBadResponse is matched by the error of an answer that arrived but
	// could not be understood (malformed JSON or XML, an unexpected shape).
	ErrBadResponse = errors.New("malformed response")
)

// Error is the error of a provider call.
type Error struct {
	Provider   string        // e.g. "openalex"
	Status     int           // HTTP status of the answer; 0 when none arrived
	Message    string        // what went wrong, without secrets
	RetryAfter time.Duration // wait the provider asked for; 0 when it did not say
	// Kind is ErrRateLimited, ErrBadResponse or nil; errors.Is matches it.
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

// Options configure a Client.
type Options struct {
	// Provider names the API in errors ("openalex", "youtube", ...).
	Provider string
	// HTTPClient sends the requests; nil means a client with Timeout.
	HTTPClient *http.Client
	// Timeout bounds one call, its retry included; 0 means DefaultTimeout,
	// a negative value leaves only the caller's context.
	Timeout time.Duration
	// UserAgent is sent with every request; "" means DefaultUserAgent.
	UserAgent string
	// MaxBytes caps how much of an answer is read; 0 means DefaultMaxBytes.
	// A larger answer is an error, never silently cut.
	MaxBytes int64
	// RetryBackoff is the pause before retrying a 5xx answer or a network
	// failure; 0 means DefaultRetryBackoff, a negative value turns the
	// retry off. 429 and other 4xx answers are never retried.
	RetryBackoff time.Duration
	// Secrets are removed from every error's text (API keys).
	Secrets []string
	// Describe, when set, extracts the provider's own message from a non-2xx
	// answer and reports whether it means a rate limit or exhausted quota
	// (429 always does). detail "" falls back to the start of the body.
	Describe func(status int, body []byte) (detail string, rateLimited bool)
}

// Client calls one provider's API.
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
	var secrets []string
	for _, s := range opts.Secrets {
		if s = strings.TrimSpace(s); s != "" {
			secrets = append(secrets, s)
		}
	}
	opts.Secrets = secrets
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: max(opts.Timeout, 0)}
	}
	return &Client{opts: opts, http: hc}
}

// Provider returns the provider's name.
func (c *Client) Provider() string { return c.opts.Provider }

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
// ErrBadResponse that quotes the start of the body.
func (c *Client) DecodeJSON(body []byte, out any) error {
	if err := json.Unmarshal(body, out); err != nil {
		return c.Errorf(ErrBadResponse, err, "the answer is not the expected JSON; it starts with %q", Snippet(body))
	}
	return nil
}

// Errorf returns an *Error of the client's provider. kind is ErrRateLimited,
// ErrBadResponse or nil; cause may be nil.
func (c *Client) Errorf(kind, cause error, format string, args ...any) *Error {
	return &Error{
		Provider: c.opts.Provider,
		Message:  fmt.Sprintf(format, args...),
		Kind:     kind,
		Err:      cause,
		secrets:  c.opts.Secrets,
	}
}

// Do sends one request (retried once on a 5xx answer or a network failure)
// and returns the body of a 2xx answer.
func (c *Client) Do(ctx context.Context, method, rawURL string, header http.Header, body []byte) ([]byte, error) {
	parent := ctx
	if c.opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.opts.Timeout)
		defer cancel()
	}
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		var (
			out   []byte
			retry bool
		)
		out, retry, err = c.once(ctx, method, rawURL, header, body)
		if err == nil {
			return out, nil
		}
		if !retry || c.opts.RetryBackoff < 0 || attempt == 1 || !sleep(ctx, c.opts.RetryBackoff) {
			break
		}
	}
	if perr := parent.Err(); perr != nil {
		return nil, c.at(c.Errorf(nil, perr, "request stopped"), rawURL)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, c.at(c.Errorf(nil, context.DeadlineExceeded, "no answer within %s", c.opts.Timeout), rawURL)
	}
	return nil, err
}

// once performs one attempt and reports whether a failure may be retried.
func (c *Client) once(ctx context.Context, method, rawURL string, header http.Header, body []byte) ([]byte, bool, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, rawURL, rd)
	if err != nil {
		return nil, false, c.Errorf(nil, unwrapURLError(err), "cannot build the request")
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("User-Agent", c.opts.UserAgent)

	resp, err := c.http.Do(req)
	if err != nil {
		return nil, ctx.Err() == nil, c.at(c.Errorf(nil, errtext.Net(unwrapURLError(err)), "cannot reach the service"), rawURL)
	}
	defer resp.Body.Close()

	data, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBytes+1))
	if err != nil {
		e := c.at(c.Errorf(nil, errtext.Net(unwrapURLError(err)), "reading the answer failed"), rawURL)
		e.Status = resp.StatusCode
		return nil, ctx.Err() == nil, e
	}
	if int64(len(data)) > c.opts.MaxBytes {
		e := c.at(c.Errorf(ErrBadResponse, nil, "the answer is larger than %s", sizeText(c.opts.MaxBytes)), rawURL)
		e.Status = resp.StatusCode
		return nil, false, e
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return data, false, nil
	}
	return nil, resp.StatusCode >= 500, c.statusError(rawURL, resp, data)
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
		detail = Snippet(body)
	}
	msg := "the service answered " + StatusText(resp.StatusCode)
	if detail != "" {
		// The provider's own message may name addresses (a proxy's upstream).
		msg += ": " + errtext.Scrub(detail, hostOf(rawURL))
	}
	e := c.at(c.Errorf(nil, nil, "%s", msg), rawURL)
	e.Status = resp.StatusCode
	if resp.StatusCode == http.StatusTooManyRequests || limited {
		e.Kind = ErrRateLimited
		e.RetryAfter = retryAfter(resp.Header, time.Now())
	}
	return e
}

// retryAfter reads the wait a provider asked for: Retry-After (seconds or
// an HTTP date), else X-Ratelimit-Reset (seconds, as Reddit sends it).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if secs, err := strconv.Atoi(v); err == nil && secs > 0 {
			return time.Duration(secs) * time.Second
		}
		if t, err := http.ParseTime(v); err == nil && t.After(now) {
			return t.Sub(now)
		}
	}
	if v := strings.TrimSpace(h.Get("X-Ratelimit-Reset")); v != "" {
		if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
			return time.Duration(secs * float64(time.Second))
		}
	}
	return 0
}

// sleep waits for d or until ctx is done; it reports whether d elapsed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// StatusText renders "HTTP 503 Service Unavailable".
func StatusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return fmt.Sprintf("HTTP %d %s", status, t)
	}
	return fmt.Sprintf("HTTP %d", status)
}

// Snippet returns the start of body as one line of at most 200 runes, for
// error messages.
func Snippet(body []byte) string {
	var b strings.Builder
	n := 0
	space := false
	for _, r := range string(body) {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			space = b.Len() > 0
			continue
		}
		if n >= maxSnippetRunes {
			b.WriteString("…")
			break
		}
		if space {
			b.WriteByte(' ')
			n++
			space = false
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// hostOf names the server of rawURL without path and query string, which
// may be long or carry secrets.
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

func redact(s string, secrets []string) string {
	for _, k := range secrets {
		s = strings.ReplaceAll(s, k, "[redacted]")
		if q := url.QueryEscape(k); q != k {
			s = strings.ReplaceAll(s, q, "[redacted]")
		}
	}
	return s
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
