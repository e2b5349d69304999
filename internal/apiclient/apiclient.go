// Package apiclient calls the JSON APIs of the data providers behind
// Sova's data tools (markets, coins, weather, places). It gives them one
// policy: a base URL, an *http.Client with timeouts, a cap on how much of an
// answer is read, an optional rate limit, one retry after a 5xx answer or a
// network failure, and errors that name the provider and the HTTP status but
// never an API key.
//
// Callers tell the kind of failure with errors.Is: ErrRateLimited (HTTP 429),
// ErrNotFound (HTTP 404, or nothing matched), ErrInvalidInput (rejected
// before any request) and context.DeadlineExceeded (no answer in time).
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
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/time/rate"
)

// Defaults used when a Client leaves a value unset.
const (
	// DefaultMaxBytes caps how much of an answer is read (4 MiB).
	DefaultMaxBytes = 4 << 20
	// DefaultTimeout bounds one request, reading the answer included.
	DefaultTimeout = 15 * time.Second
	// DefaultBackoff is the pause before the retry.
	DefaultBackoff = 300 * time.Millisecond
	// DefaultUserAgent identifies Sova to providers.
	DefaultUserAgent = "Sova/1.0 (+https://github.com/sova-ai/sova)"

	maxSnippetRunes = 200
)

// Errors that Error matches with errors.Is.
var (
	// ErrRateLimited: the provider answered 429 Too Many Requests.
	ErrRateLimited = errors.New("rate limited")
	// ErrNotFound: the provider answered 404, or found nothing for the input.
	ErrNotFound = errors.New("not found")
	// ErrInvalidInput: the input was rejected before any request was sent.
	ErrInvalidInput = errors.New("invalid input")
)

// Error is a failed provider call. Its text starts with the provider's name
// and, when an answer arrived, carries its HTTP status.
type Error struct {
	Provider   string        // e.g. "Yahoo Finance"
	Status     int           // HTTP status of the answer; 0 when none arrived
	Message    string        // what went wrong
	RetryAfter time.Duration // a 429 answer's Retry-After; 0 when absent
	Err        error         // the cause; may be nil

	secrets []string
}

func (e *Error) Error() string {
	s := e.Provider + ": " + e.Message
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return Redact(s, e.secrets...)
}

func (e *Error) Unwrap() error { return e.Err }

// Is reports a 429 answer as ErrRateLimited and a 404 answer as ErrNotFound.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	}
	return false
}

// Invalid returns an ErrInvalidInput error for provider.
func Invalid(provider, format string, args ...any) error {
	return &Error{Provider: provider, Message: fmt.Sprintf(format, args...), Err: ErrInvalidInput}
}

// NotFound returns an ErrNotFound error for provider.
func NotFound(provider, format string, args ...any) error {
	return &Error{Provider: provider, Message: fmt.Sprintf(format, args...), Err: ErrNotFound}
}

// NewHTTPClient returns an *http.Client whose requests, reading the answer
// included, end after timeout (DefaultTimeout when timeout <= 0), with
// bounded connection and TLS handshake times.
func NewHTTPClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = (&net.Dialer{Timeout: min(timeout, 10*time.Second), KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = min(timeout, 10*time.Second)
	tr.ResponseHeaderTimeout = timeout
	tr.MaxIdleConnsPerHost = 4
	return &http.Client{Timeout: timeout, Transport: tr}
}

// Client calls one provider's API. The zero value of every field but
// Provider and BaseURL is usable. A Client is safe for concurrent use once
// built; its fields must not change afterwards.
type Client struct {
	Provider  string        // named in every error
	BaseURL   string        // scheme://host[/prefix], no trailing slash needed
	HTTP      *http.Client  // nil means NewHTTPClient(DefaultTimeout)
	Header    http.Header   // sent with every request (API keys go here)
	Secrets   []string      // strings (API keys) never shown in errors
	UserAgent string        // "" means DefaultUserAgent
	MaxBytes  int64         // answer size cap; <= 0 means DefaultMaxBytes
	Retries   int           // further attempts after a 5xx or network failure
	Backoff   time.Duration // pause before a retry
	Limiter   *rate.Limiter // waited on before every attempt; nil = no limit
	// Detail extracts the provider's message from an error answer's body;
	// nil or "" falls back to ErrorDetail.
	Detail func(body []byte) string
	// Hint adds advice to the error of a status (e.g. "check the API key").
	Hint func(status int) string
}

// Request is one call. Path is appended to BaseURL and must be escaped
// already (use url.PathEscape on the segments that come from input).
type Request struct {
	Method      string // "" means GET
	Path        string
	Query       url.Values
	Header      http.Header
	Body        []byte
	ContentType string
}

// JSON performs r and decodes the answer into out. An answer that is not
// valid JSON is an error quoting its start.
func (c *Client) JSON(ctx context.Context, r Request, out any) error {
	body, err := c.Do(ctx, r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return c.errorf(0, err, "the answer is not valid JSON; it starts with %q", snippet(body))
	}
	return nil
}

// Do performs r and returns the body of a 2xx answer. A 5xx answer or a
// network failure is retried c.Retries times after c.Backoff; a timeout, a
// cancelled context and any 4xx answer are final.
func (c *Client) Do(ctx context.Context, r Request) ([]byte, error) {
	var err error
	for attempt := 0; ; attempt++ {
		var body []byte
		var retry bool
		body, retry, err = c.once(ctx, r)
		if err == nil {
			return body, nil
		}
		if !retry || attempt >= c.Retries || !sleep(ctx, c.Backoff) {
			return nil, err
		}
	}
}

func (c *Client) once(ctx context.Context, r Request) (body []byte, retry bool, err error) {
	if c.Limiter != nil {
		if err := c.Limiter.Wait(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, false, c.ctxError(ctx)
			}
			// The limiter refuses at once a wait that would outlast the
			// context's deadline.
			return nil, false, c.errorf(0, context.DeadlineExceeded, "no turn before the deadline (this service takes one request every %s)", time.Duration(float64(time.Second)/float64(c.Limiter.Limit())))
		}
	}
	req, err := c.newRequest(ctx, r)
	if err != nil {
		return nil, false, c.errorf(0, err, "cannot build the request")
	}
	resp, err := c.httpClient().Do(req)
	if err != nil {
		return nil, c.transient(ctx, err), c.networkError(ctx, req, err)
	}
	defer resp.Body.Close()

	limit := c.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	body, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		e := c.networkError(ctx, req, err)
		e.Status = resp.StatusCode
		return nil, c.transient(ctx, err), e
	}
	if int64(len(body)) > limit {
		return nil, false, c.errorf(resp.StatusCode, nil, "the answer from %s is larger than %s", hostOf(req.URL), sizeText(limit))
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return body, false, nil
	}
	return nil, resp.StatusCode >= 500, c.statusError(req, resp, body)
}

func (c *Client) newRequest(ctx context.Context, r Request) (*http.Request, error) {
	u := strings.TrimRight(c.BaseURL, "/") + r.Path
	if len(r.Query) > 0 {
		u += "?" + r.Query.Encode()
	}
	method := r.Method
	if method == "" {
		method = http.MethodGet
	}
	var body io.Reader
	if r.Body != nil {
		body = bytes.NewReader(r.Body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, errors.New(Redact(err.Error(), c.Secrets...))
	}
	ua := c.UserAgent
	if ua == "" {
		ua = DefaultUserAgent
	}
	req.Header.Set("User-Agent", ua)
	req.Header.Set("Accept", "application/json")
	if r.ContentType != "" {
		req.Header.Set("Content-Type", r.ContentType)
	}
	for k, vs := range c.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	for k, vs := range r.Header {
		req.Header[k] = append([]string(nil), vs...)
	}
	return req, nil
}

func (c *Client) httpClient() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

var defaultHTTP = NewHTTPClient(DefaultTimeout)

// transient reports whether a failed attempt is worth repeating: not after a
// timeout, nor once the caller's context is done.
func (c *Client) transient(ctx context.Context, err error) bool {
	return ctx.Err() == nil && !isTimeout(err)
}

func (c *Client) networkError(ctx context.Context, req *http.Request, err error) *Error {
	if ctx.Err() != nil {
		return c.ctxError(ctx)
	}
	if isTimeout(err) {
		within := ""
		if t := c.httpClient().Timeout; t > 0 {
			within = " within " + t.String()
		}
		return c.errorf(0, context.DeadlineExceeded, "no answer from %s%s (the service is slow or unreachable)", hostOf(req.URL), within)
	}
	return c.errorf(0, unwrapURLError(err), "cannot reach %s", hostOf(req.URL))
}

func (c *Client) ctxError(ctx context.Context) *Error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return c.errorf(0, context.DeadlineExceeded, "no answer before the deadline")
	}
	return c.errorf(0, ctx.Err(), "request cancelled")
}

func (c *Client) statusError(req *http.Request, resp *http.Response, body []byte) *Error {
	msg := fmt.Sprintf("%s answered %s", hostOf(req.URL), statusText(resp.StatusCode))
	detail := ""
	if c.Detail != nil {
		detail = c.Detail(body)
	}
	if detail == "" {
		detail = ErrorDetail(body)
	}
	if detail == "" {
		detail = snippet(body)
	}
	if detail != "" {
		msg += ": " + detail
	}
	if c.Hint != nil {
		if h := c.Hint(resp.StatusCode); h != "" {
			msg += " (" + h + ")"
		}
	}
	e := c.errorf(resp.StatusCode, nil, "%s", msg)
	if resp.StatusCode == http.StatusTooManyRequests {
		e.RetryAfter = retryAfter(resp.Header.Get("Retry-After"), time.Now())
		if e.RetryAfter > 0 {
			e.Message += fmt.Sprintf("; retry after %s", e.RetryAfter)
		}
	}
	return e
}

func (c *Client) errorf(status int, cause error, format string, args ...any) *Error {
	return &Error{
		Provider: c.Provider,
		Status:   status,
		Message:  fmt.Sprintf(format, args...),
		Err:      cause,
		secrets:  c.Secrets,
	}
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
	var status map[string]json.RawMessage
	if json.Unmarshal(m["status"], &status) == nil {
		if s := stringField(status["error_message"]); s != "" {
			return s
		}
	}
	return stringField(m["description"])
}

// errorField reads "error" as a string or as an object with a message,
// a description or a nested status.error_message.
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
	var status map[string]json.RawMessage
	if json.Unmarshal(o["status"], &status) == nil {
		return stringField(status["error_message"])
	}
	return ""
}

// stringField returns raw as a clipped one-line string, "" when it is not
// a non-blank JSON string.
func stringField(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return clip(s)
}

func clip(s string) string { return snippet([]byte(s)) }

// keyParam matches query parameters that commonly carry credentials.
var keyParam = regexp.MustCompile(`(?i)\b(appid|api_?key|apikey|key|token|access_token|x_cg_(?:demo|pro)_api_key)=[^&\s"']+`)

// Redact removes every secret from s and blanks the values of query
// parameters that usually carry keys (appid=, key=, api_key=, token=, ...).
func Redact(s string, secrets ...string) string {
	for _, k := range secrets {
		if k != "" {
			s = strings.ReplaceAll(s, k, "[redacted]")
		}
	}
	return keyParam.ReplaceAllString(s, "$1=[redacted]")
}

// hostOf names the server of u without the path and query, which may carry
// input or keys.
func hostOf(u *url.URL) string {
	if u == nil {
		return "the provider"
	}
	return u.Scheme + "://" + u.Host
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the full
// request URL, keeping the cause.
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

func statusText(status int) string {
	if t := http.StatusText(status); t != "" {
		return fmt.Sprintf("HTTP %d %s", status, t)
	}
	return fmt.Sprintf("HTTP %d", status)
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// retryAfter interprets a Retry-After header (seconds or an HTTP date); 0
// when absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0
	}
	if secs, err := strconv.Atoi(h); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil && t.After(now) {
		return t.Sub(now).Round(time.Second)
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// tagRE matches HTML tags, so that an HTML error page reads as text.
var tagRE = regexp.MustCompile(`(?s)<(script|style)[^>]*>.*?</(script|style)>|<[^>]*>`)

// snippet returns the start of body as one line of at most maxSnippetRunes
// runes, with HTML tags removed.
func snippet(body []byte) string {
	s := string(body)
	if strings.Contains(s, "<") && strings.Contains(s, ">") {
		s = tagRE.ReplaceAllString(s, " ")
	}
	var b strings.Builder
	n := 0
	space := false
	for _, r := range s {
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

// BaseURL returns s, or def when s is blank, without a trailing slash. It
// fails, naming the setting, when the address is not an absolute http or
// https URL.
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
