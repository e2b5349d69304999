package llm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sova-ai/sova/internal/egress"
)

// DefaultBreakerCooldown is how long calls to a failing model endpoint
// are paused. A run makes many model calls, each retried, so an endpoint
// that answers only 5xx (or not at all) is given up on after 3 or 4
// failures in a row (a call's retries, up to 4 attempts) instead of being
// asked dozens of times while the person waits: with the default backoff
// the run fails within about 4 seconds.
const DefaultBreakerCooldown = 15 * time.Second

func newBreaker(cfg egress.BreakerConfig, maxRetries int) *egress.Breaker {
	if cfg.Failures <= 0 {
		cfg.Failures = min(max(maxRetries+1, 3), 4)
	}
	if cfg.Cooldown <= 0 {
		cfg.Cooldown = DefaultBreakerCooldown
	}
	return egress.NewBreaker(cfg)
}

// record tells the breaker how an attempt went. Failures that say the
// endpoint is unwell (5xx, 429, no answer, a broken answer) count; an
// answer refusing the request (400, 401, 404) shows the endpoint is up; a
// call its caller stopped says nothing.
func (k *core) record(ctx context.Context, err error) {
	switch {
	case err == nil:
		k.breaker.Record(k.endpoint, nil)
	case ctx.Err() != nil:
	case endpointFault(err):
		k.breaker.Record(k.endpoint, &egress.Error{Kind: egress.ErrTransient, Err: err})
	default:
		k.breaker.Record(k.endpoint, nil)
	}
}

// endpointFault reports whether err blames the endpoint rather than the
// request.
func endpointFault(err error) bool {
	var te *transportError
	if errors.As(err, &te) {
		return true // permanent ones too: nothing listens there
	}
	return retryable(err)
}

// pausedError is a call not sent because the model endpoint failed too
// often lately. Its text says so without the endpoint's address, which
// stays in the log (Private).
type pausedError struct {
	model    string
	endpoint string
	open     *egress.OpenError
}

func (e *pausedError) Error() string {
	s := fmt.Sprintf("model %s: the model endpoint failed %d times in a row; calls to it are paused for %s", e.model, e.open.Failures, e.open.Left.Round(time.Second))
	var last *egress.Error
	if errors.As(e.open.Last, &last) && last.Err != nil {
		s += " (last failure: " + last.Err.Error() + ")"
	}
	return s + " — check SOVA_LLM_BASE_URL and the model server"
}

// Private is the endpoint's address.
func (e *pausedError) Private() string { return "endpoint " + e.endpoint }

// Unwrap returns the breaker's refusal (errors.Is(err, egress.ErrOpen)).
func (e *pausedError) Unwrap() error { return e.open }

func (k *core) paused(model string, err error) error {
	var open *egress.OpenError
	if !errors.As(err, &open) {
		return fmt.Errorf("model %s: %w", model, err)
	}
	return &pausedError{model: model, endpoint: k.endpoint, open: open}
}
