package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
)

// The kinds of an outbound failure, matched with errors.Is. ErrBlocked
// (guard.go) is the sixth: an address the guard refused.
var (
	// ErrTransient is a failure that may pass: a 5xx answer, a reset
	// connection, no answer in time.
	ErrTransient = errors.New("temporarily unavailable")
	// ErrRateLimited is an answer that says too many requests were sent
	// or a quota is used up (HTTP 429).
	ErrRateLimited = errors.New("rate limited")
	// ErrAuth is a refused key or credential (HTTP 401, 403).
	ErrAuth = errors.New("credentials refused")
	// ErrNotFound is an answer that says there is no such thing (HTTP 404, 410).
	ErrNotFound = errors.New("not found")
	// ErrInvalid is a request the other side, or Sova before sending,
	// refused as malformed (other 4xx).
	ErrInvalid = errors.New("invalid request")
)

// KindOfStatus returns the kind of a non-2xx HTTP status, nil for 2xx/3xx.
func KindOfStatus(status int) error {
	switch {
	case status < 400:
		return nil
	case status == http.StatusTooManyRequests:
		return ErrRateLimited
	case status == http.StatusUnauthorized, status == http.StatusForbidden, status == http.StatusProxyAuthRequired:
		return ErrAuth
	case status == http.StatusNotFound, status == http.StatusGone:
		return ErrNotFound
	case status == http.StatusRequestTimeout, status == http.StatusConflict, status == http.StatusTooEarly:
		return ErrTransient
	case status < 500:
		return ErrInvalid
	default:
		return ErrTransient
	}
}

// KindOf returns the kind of err: one of the kind errors above, ErrBlocked,
// ErrOpen (counted as transient by callers that retry), or nil when err
// says nothing a caller can act on. A done context is not a kind: callers
// look at their context first.
func KindOf(err error) error {
	for _, k := range []error{ErrBlocked, ErrOpen, ErrRateLimited, ErrAuth, ErrNotFound, ErrInvalid, ErrTransient} {
		if errors.Is(err, k) {
			return k
		}
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return ErrTransient
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return ErrTransient
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return ErrTransient
	}
	return nil
}

// Error is a failed outbound request with its kind. Its text names the
// endpoint by host only; what it is for (the model endpoint, a provider)
// is said by the caller.
type Error struct {
	Endpoint string // scheme://host of the endpoint
	Status   int    // HTTP status, 0 when no answer came
	Kind     error  // one of the kinds above
	Err      error  // the cause
}

func (e *Error) Error() string {
	s := e.Endpoint
	if e.Status != 0 {
		s += " answered " + http.StatusText(e.Status)
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is matches the error's kind.
func (e *Error) Is(target error) bool { return e.Kind != nil && target == e.Kind }

// Redact replaces every non-empty secret in s by "[redacted]", so that
// keys that travel in URLs or headers never reach an error's text or a log.
func Redact(s string, secrets ...string) string {
	for _, v := range secrets {
		if len(v) >= 4 {
			s = strings.ReplaceAll(s, v, "[redacted]")
		}
	}
	return s
}
