package server

import (
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/limits"
)

// personOr is the person's part of err's text (errtext.ForPerson), or
// fallback where that would show something internal.
func personOr(err error, fallback string) string {
	if msg := errtext.ForPerson(err); msg != "" {
		return msg
	}
	return fallback
}

// usage is the user's usage and limits for GET /api/me; nil without
// limits (no Limiter, the local user, or a role without any).
func (s *Server) usage(r *http.Request, u sova.User) *limits.Usage {
	if s.opt.Limits == nil || u.ID == sova.LocalUserID {
		return nil
	}
	out, err := s.opt.Limits.Usage(r.Context(), u)
	if err != nil {
		s.opt.Logger.Error("reading usage failed", "user", u.ID, "err", err)
		return nil
	}
	return out
}

// rateLimited answers a refusal of the limits: 429 with Retry-After (whole
// seconds, rounded up) and code rate_limited, in the error shape every
// endpoint shares (OpenAI's on /v1), or 503 with Retry-After when the
// limit could not be checked (limits.Unavailable). It reports whether err
// was one.
func rateLimited(w http.ResponseWriter, r *http.Request, err error) bool {
	if cancelled(requestContext(r), err) && errors.As(err, new(*limits.Unavailable)) {
		// The counters did not answer because the client went away.
		w.WriteHeader(StatusClientClosedRequest)
		return true
	}
	var down *limits.Unavailable
	if errors.As(err, &down) {
		// The limit could not be checked: 503, the counters' address and
		// error stay in the log (the caller logs err).
		secs := max(int64(math.Ceil(down.RetryAfter.Seconds())), 1)
		w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
		writeError(w, http.StatusServiceUnavailable, "server_error", "limits_unavailable",
			personOr(down, "the usage limits cannot be checked now; try again shortly"))
		return true
	}
	var ex *limits.Exceeded
	if !errors.As(err, &ex) {
		return false
	}
	secs := max(int64(math.Ceil(ex.RetryAfter.Seconds())), 1)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	if !ex.Resets.IsZero() {
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(ex.Resets.Unix(), 10))
	}
	writeError(w, http.StatusTooManyRequests, "rate_limit_error", "rate_limited", personOr(ex, "a usage limit is reached"))
	return true
}
