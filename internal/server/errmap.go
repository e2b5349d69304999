package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/errtext"
)

// StatusClientClosedRequest is written (for the log; nobody reads it) when
// the client went away before its answer: a cancelled request is not a
// server failure.
const StatusClientClosedRequest = 499

// failure is the one mapping from an error's kind to an HTTP answer for
// failures a handler has no better words for. Kinds a person can act on
// keep their text (scrubbed of addresses); everything else is a 500 that
// carries only an error id, which the one log line with the details
// carries too. what says, in a few words, what could not be done.
func (s *Server) failure(w http.ResponseWriter, r *http.Request, err error, what string) {
	var ctx context.Context = context.Background()
	if r != nil {
		ctx = r.Context()
	}
	status, typ, code, msg := classify(ctx, err)
	if status == 0 {
		id := errorID()
		s.opt.Logger.Error(what+" failed", "error_id", id, "err", err)
		writeError(w, http.StatusInternalServerError, "server_error", "internal",
			what+" failed (error id "+id+"); the server log has the details")
		return
	}
	if status >= 500 || status == StatusClientClosedRequest {
		s.opt.Logger.Log(ctx, slogLevel(status), what+" failed", "status", status, "err", err)
	}
	if status == StatusClientClosedRequest {
		w.WriteHeader(status)
		return
	}
	writeError(w, status, typ, code, msg)
}

// upstreamFailure answers a failure of a service the request needed (the
// model endpoint behind a run or the assistant, the voice service): the
// kinds the one mapping knows answer as failure says (a cancelled request
// is a 499, never a 5xx); anything else is a 502 whose text says what
// failed, scrubbed of addresses, and is logged whole.
func (s *Server) upstreamFailure(w http.ResponseWriter, r *http.Request, err error, code, what string) {
	var ctx context.Context = context.Background()
	if r != nil {
		ctx = r.Context()
	}
	if status, _, _, _ := classify(ctx, err); status != 0 {
		s.failure(w, r, err, what)
		return
	}
	text := publicText(err)
	var (
		ue *url.Error
		oe *net.OpError
	)
	if errors.As(err, &ue) || errors.As(err, &oe) {
		// A raw network failure's text is Go's ("dial tcp …"): say it
		// in words instead.
		text = errtext.Network(err)
	}
	id := errorID()
	s.opt.Logger.Error(what+" failed", "error_id", id, "err", err)
	writeError(w, http.StatusBadGateway, "server_error", code, what+" failed: "+text+" (error id "+id+")")
}

// classify returns the answer to err, or status 0 for an internal failure
// whose text must not be shown.
func classify(ctx context.Context, err error) (status int, typ, code, msg string) {
	switch {
	case errors.Is(err, context.Canceled), ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		return StatusClientClosedRequest, "", "", ""
	case errors.Is(err, sova.ErrNotFound):
		return http.StatusNotFound, "not_found", "not_found", "not found"
	case errors.Is(err, sova.ErrConflict):
		return http.StatusConflict, "invalid_request_error", "conflict", "already exists"
	case errors.Is(err, sova.ErrLimit):
		return http.StatusConflict, "invalid_request_error", "limit_reached", publicText(err)
	case errors.Is(err, sova.ErrInvalid):
		return http.StatusBadRequest, "invalid_request_error", "invalid_request", publicText(err)
	case errors.Is(err, egress.ErrBlocked):
		return http.StatusBadRequest, "invalid_request_error", "address_refused", publicText(err)
	case errors.Is(err, egress.ErrOpen), errors.Is(err, egress.ErrRateLimited), errors.Is(err, egress.ErrTransient):
		return http.StatusServiceUnavailable, "server_error", "upstream_unavailable", publicText(err)
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, "server_error", "timeout", "the request took too long"
	}
	return 0, "", "", ""
}

// publicText is err's text with addresses scrubbed, cut to a length a
// person reads.
func publicText(err error) string {
	s := errtext.Scrub(err.Error())
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

func slogLevel(status int) slog.Level {
	if status >= 500 {
		return slog.LevelWarn
	}
	return slog.LevelDebug
}

// errorID names one failure in the answer and the log line.
func errorID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// validText refuses, at the edge and on every route, what no store keeps
// and no person means: NUL characters and invalid UTF-8, in the path, the
// query and JSON bodies (a NUL written as \u0000 too). PostgreSQL refuses
// NUL in text with an error mid-request, which left half-written chats.
func validText(next http.Handler, maxBody int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if bad := badText(r.URL.Path); bad != "" {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_text", "the path "+bad)
			return
		}
		if r.URL.RawQuery != "" {
			q, err := url.ParseQuery(r.URL.RawQuery)
			if err == nil {
				for k, vs := range q {
					for _, v := range append(vs, k) {
						if bad := badText(v); bad != "" {
							writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_text", "the query "+bad)
							return
						}
					}
				}
			}
		}
		if r.Body != nil && r.Body != http.NoBody && isJSON(r.Header.Get("Content-Type")) {
			limit := maxBody
			if limit <= 0 {
				limit = 1 << 20
			}
			b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
			if err != nil {
				writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_body", "the request body could not be read")
				return
			}
			// A body over the limit is passed on whole-looking, for the
			// handler's own limit to answer 413.
			rest := r.Body
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(b), rest), rest}
			if int64(len(b)) <= limit {
				if bad := badJSONText(b); bad != "" {
					writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_text", "the request body "+bad)
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func isJSON(ct string) bool {
	ct = strings.ToLower(ct)
	return strings.Contains(ct, "json")
}

// badText says what is wrong with s, or "".
func badText(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "contains a NUL character"
	}
	return ""
}

// badJSONText is badText for a JSON document, whose strings may also
// spell NUL as an escape.
func badJSONText(b []byte) string {
	switch {
	case !utf8.Valid(b):
		return "is not valid UTF-8"
	case bytes.IndexByte(b, 0) >= 0:
		return "contains a NUL character"
	}
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte(`\u0000`))
		if j < 0 {
			return ""
		}
		j += i
		// Count the backslashes before: an even number means the
		// backslash of \u0000 is itself escaped text.
		n := 0
		for k := j - 1; k >= 0 && b[k] == '\\'; k-- {
			n++
		}
		if n%2 == 0 {
			return "contains a NUL character (\\u0000)"
		}
		i = j + 6
	}
}
