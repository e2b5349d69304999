package search

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/errtext"
)

// caller performs one provider HTTP call with the shared timeout and retry
// policy.
type caller struct {
	provider string
	client   *http.Client
	cfg      config
	// breaker remembers the provider's failures across calls: with the
	// provider down, a run's dozens of searches fail at once after the
	// first few instead of each being sent and retried.
	breaker *egress.Breaker
}

func newCaller(provider string, client *http.Client, cfg config) caller {
	if client == nil {
		client = &http.Client{}
	}
	return caller{provider: provider, client: client, cfg: cfg, breaker: egress.NewBreaker(egress.BreakerConfig{})}
}

// statusErrorFunc describes a non-2xx answer. The caller fills in Provider
// and Status.
type statusErrorFunc func(status int, body []byte) *Error

// do sends the request built by newReq and returns the body of the first 2xx
// answer. A 5xx, a 429 or a network failure is retried once; any other
// answer is final. The whole call, retry included, is bounded by
// cfg.timeout.
func (c caller) do(ctx context.Context, newReq func(context.Context) (*http.Request, error), statusErr statusErrorFunc) ([]byte, error) {
	body, _, err := c.doStatus(ctx, newReq, statusErr)
	return body, err
}

// doStatus is do that also returns the 2xx status of the answer.
func (c caller) doStatus(ctx context.Context, newReq func(context.Context) (*http.Request, error), statusErr statusErrorFunc) ([]byte, int, error) {
	parent := ctx
	if c.cfg.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.cfg.timeout)
		defer cancel()
	}

	// addr is where the requests went, for the log.
	var addr string
	build := func(ctx context.Context) (*http.Request, error) {
		req, err := newReq(ctx)
		if req != nil {
			addr = hostOf(req.URL)
		}
		return req, err
	}
	var err error
	for attempt := 0; attempt < 2; attempt++ {
		if open := c.breaker.Allow(c.provider); open != nil {
			if err == nil {
				err = &Error{Provider: c.provider, Message: "not asked", Err: open}
			}
			break
		}
		var (
			body   []byte
			status int
			wait   time.Duration
			retry  bool
		)
		body, status, wait, retry, err = c.once(ctx, build, statusErr)
		if ctx.Err() == nil {
			c.breaker.Record(c.provider, err)
		}
		if err == nil {
			return body, status, nil
		}
		if !retry || attempt == 1 || !c.breaker.Sleep(ctx, c.provider, wait) {
			break
		}
	}

	if parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, 0, &Error{
			Provider: c.provider,
			Message:  fmt.Sprintf("no answer within %s (the provider is slow or unreachable)", c.cfg.timeout),
			Err:      context.DeadlineExceeded,
			Addr:     addr,
		}
	}
	if parent.Err() != nil {
		return nil, 0, &Error{Provider: c.provider, Message: "search cancelled", Err: parent.Err(), Addr: addr}
	}
	return nil, 0, err
}

// once performs a single attempt. wait is the pause before a retry and is
// meaningful only when retry is true.
func (c caller) once(ctx context.Context, newReq func(context.Context) (*http.Request, error), statusErr statusErrorFunc) (body []byte, status int, wait time.Duration, retry bool, err error) {
	req, err := newReq(ctx)
	if err != nil {
		return nil, 0, 0, false, &Error{Provider: c.provider, Message: "cannot build the request", Err: err}
	}
	req.Header.Set("User-Agent", c.cfg.userAgent)

	resp, err := c.client.Do(req)
	if err != nil {
		return nil, 0, c.cfg.backoff, ctx.Err() == nil, &Error{
			Provider: c.provider,
			Message:  "cannot reach the service",
			Err:      errtext.Net(unwrapURLError(err)),
			Addr:     hostOf(req.URL),
		}
	}
	defer resp.Body.Close()

	body, err = io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes+1))
	if err != nil {
		return nil, 0, c.cfg.backoff, ctx.Err() == nil, &Error{
			Provider: c.provider,
			Status:   resp.StatusCode,
			Message:  "reading the answer failed",
			Err:      errtext.Net(err),
			Addr:     hostOf(req.URL),
		}
	}
	if len(body) > maxResponseBytes {
		return nil, 0, 0, false, &Error{
			Provider: c.provider,
			Status:   resp.StatusCode,
			Message:  fmt.Sprintf("the answer is larger than %d MiB", maxResponseBytes>>20),
			Addr:     hostOf(req.URL),
		}
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return body, resp.StatusCode, 0, false, nil
	}

	e := statusErr(resp.StatusCode, body)
	e.Provider, e.Status, e.Addr = c.provider, resp.StatusCode, hostOf(req.URL)
	// The service's own message may name addresses (a proxy's upstream).
	e.Message = errtext.Scrub(e.Message, e.Addr)
	switch {
	case resp.StatusCode == http.StatusTooManyRequests:
		wait, retry = retryAfter(resp.Header, c.cfg.backoff, time.Now())
	case resp.StatusCode >= 500:
		wait, retry = c.cfg.backoff, true
	}
	return nil, 0, wait, retry, e
}

// retryAfter is the wait before retrying a 429 answer: what the service
// asked for (egress.RetryAfter), at least def; retry is false when it asks
// for longer than maxRetryAfter.
func retryAfter(h http.Header, def time.Duration, now time.Time) (time.Duration, bool) {
	d := egress.RetryAfter(h, now)
	if d > maxRetryAfter {
		return 0, false
	}
	return max(d, def), true
}

// hostOf names the server of u for the log without the query string,
// which may be long or carry secrets.
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

// statusText renders "HTTP 403 Forbidden".
func statusText(status int) string { return errtext.HTTPStatus(status) }

// snippet quotes the start of an answer's body for error messages.
func snippet(body []byte) string { return errtext.Snippet(body) }
