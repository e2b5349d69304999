package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/event"
)

// StatusClientClosedRequest is written (for the log; nobody reads it) when
// the client went away before its answer: a cancelled request is not a
// server failure.
const StatusClientClosedRequest = 499

// failure is the one mapping from an error's kind to an HTTP answer for
// failures a handler has no better words for. Kinds a person can act on
// keep the person's part of their text (errtext.ForPerson); everything
// else, and any text that would show SQL, an address or a Go error, is
// answered in the server's words with an error id, which the one log
// line with the details carries too. what says, in a few words, what
// could not be done.
func (s *Server) failure(w http.ResponseWriter, r *http.Request, err error, what string) {
	ctx := requestContext(r)
	status, typ, code, msg := classify(ctx, err)
	switch {
	case status == StatusClientClosedRequest:
		s.opt.Logger.Debug(what+" failed: the client went away", "err", err)
		w.WriteHeader(status)
		return
	case status == 0:
		id := errtext.NewID()
		s.opt.Logger.Error(what+" failed", "error_id", id, "err", errtext.Detail(err))
		writeError(w, http.StatusInternalServerError, "server_error", "internal",
			what+" failed (error id "+id+"); the server log has the details")
		return
	case msg == "":
		// A kind the person can act on whose text is not for them.
		id := errtext.NewID()
		s.opt.Logger.Log(ctx, slogLevel(status), what+" failed", "error_id", id, "status", status, "err", errtext.Detail(err))
		writeError(w, status, typ, code, genericText(status)+" (error id "+id+")")
		return
	}
	if status >= 500 {
		s.opt.Logger.Log(ctx, slogLevel(status), what+" failed", "status", status, "err", errtext.Detail(err))
	}
	writeError(w, status, typ, code, msg)
}

// refuse answers a refusal a handler knows the status and code of with
// the person's part of err's text (errtext.ForPerson). Text that would
// show something internal is replaced by fallback and an error id, and
// logged whole; a cancelled request gets no answer (499 for the log).
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, typ, code string, err error, fallback string) {
	if cancelled(requestContext(r), err) {
		w.WriteHeader(StatusClientClosedRequest)
		return
	}
	msg := errtext.ForPerson(err, sova.ErrInvalid, sova.ErrNotFound, sova.ErrConflict)
	var (
		ue *url.Error
		oe *net.OpError
		de *net.DNSError
	)
	if msg == "" && (errors.As(err, &ue) || errors.As(err, &oe) || errors.As(err, &de)) {
		// A source the person named could not be reached: say why in
		// words that name no address.
		msg = fallback + ": " + errtext.Network(err)
	}
	if msg == "" {
		id := errtext.NewID()
		s.opt.Logger.Log(requestContext(r), slogLevel(status), "request refused", "error_id", id, "status", status, "code", code, "err", errtext.Detail(err))
		msg = fallback + " (error id " + id + ")"
	}
	writeError(w, status, typ, code, msg)
}

// upstreamFailure answers a failure of a service the request needed (the
// model endpoint behind a run or the assistant, the voice service): the
// kinds the one mapping knows answer as failure says (a cancelled request
// is a 499, never a 5xx); anything else is a 502 whose text says what
// failed, in words that name no address, and is logged whole.
func (s *Server) upstreamFailure(w http.ResponseWriter, r *http.Request, err error, code, what string) {
	if status, _, _, _ := classify(requestContext(r), err); status != 0 {
		s.failure(w, r, err, what)
		return
	}
	var (
		ue *url.Error
		oe *net.OpError
	)
	text := ""
	if errors.As(err, &ue) || errors.As(err, &oe) {
		// A raw network failure's text is Go's ("dial tcp …"): say it
		// in words instead.
		text = errtext.Network(err)
	} else {
		text = errtext.ForPerson(err)
	}
	if errtext.Internal(text) {
		text = ""
	}
	msg := what + " failed"
	if text != "" {
		msg += ": " + text
	}
	if m := errorIDRE.FindStringSubmatch(text); m != nil {
		// A run's failure carries the id its own log line has: one id
		// for one failure.
		s.opt.Logger.Warn(what+" failed", "error_id", m[1], "err", errtext.Detail(err))
	} else {
		id := errtext.NewID()
		s.opt.Logger.Error(what+" failed", "error_id", id, "err", errtext.Detail(err))
		msg += " (error id " + id + ")"
	}
	writeError(w, http.StatusBadGateway, "server_error", code, msg)
}

// errorIDRE finds the error id at the end of a failure's text.
var errorIDRE = regexp.MustCompile(`\(error id ([0-9a-f]{12})\)$`)

// safeEvent is e as a client may be shown it: the message of an error
// event or a failed tool's result that would show SQL, an address or a
// Go error (the run service writes none; an event of an older log or
// another version may) is replaced by the server's words and an error
// id, and logged whole.
func (s *Server) safeEvent(runID string, e event.Event) event.Event {
	hide := func(text, what string) (string, bool) {
		if !errtext.Internal(text) {
			return text, false
		}
		id := errtext.NewID()
		s.opt.Logger.Error(what+" failed", "run", runID, "error_id", id, "err", text)
		// The person keeps what the text said before the internal part.
		if kept := errtext.Cut(errtext.Scrub(text)); kept != "" {
			return kept + " (error id " + id + ")", true
		}
		return what + " failed (error id " + id + ")", true
	}
	switch {
	case e.Type == event.TypeError && e.Error != nil:
		if msg, hidden := hide(e.Error.Message, "the run"); hidden {
			e.Error = &event.Error{Message: msg, Code: e.Error.Code}
		}
	case e.Type == event.TypeToolResult && e.ToolResult != nil && e.ToolResult.Error != "":
		if msg, hidden := hide(e.ToolResult.Error, "the tool"); hidden {
			tr := *e.ToolResult
			tr.Error, tr.Text = msg, msg
			e.ToolResult = &tr
		}
	}
	return e
}

// classify returns the answer to err, or status 0 for an internal failure
// whose text must not be shown. msg is "" for a kind the person can act
// on whose text is not for them.
func classify(ctx context.Context, err error) (status int, typ, code, msg string) {
	switch {
	case cancelled(ctx, err):
		return StatusClientClosedRequest, "", "", ""
	case errors.Is(err, sova.ErrNotFound):
		return http.StatusNotFound, "not_found", "not_found", "not found"
	case errors.Is(err, sova.ErrConflict):
		return http.StatusConflict, "invalid_request_error", "conflict", "already exists"
	case errors.Is(err, sova.ErrLimit):
		return http.StatusConflict, "invalid_request_error", "limit_reached", errtext.ForPerson(err, sova.ErrLimit)
	case errors.Is(err, sova.ErrInvalid):
		return http.StatusBadRequest, "invalid_request_error", "invalid_request", errtext.ForPerson(err, sova.ErrInvalid)
	case errors.Is(err, egress.ErrBlocked):
		return http.StatusBadRequest, "invalid_request_error", "address_refused", errtext.ForPerson(err)
	case errors.Is(err, egress.ErrOpen), errors.Is(err, egress.ErrRateLimited), errors.Is(err, egress.ErrTransient):
		return http.StatusServiceUnavailable, "server_error", "upstream_unavailable", errtext.ForPerson(err)
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusGatewayTimeout, "server_error", "timeout", "the request took too long"
	}
	return 0, "", "", ""
}

// cancelled reports whether the request's client went away: its failure
// is nobody's fault and never a 5xx.
func cancelled(ctx context.Context, err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled)
}

func requestContext(r *http.Request) context.Context {
	if r == nil {
		return context.Background()
	}
	return r.Context()
}

// genericText says in the server's words what went wrong, for a failure
// whose own text is not for the client.
func genericText(status int) string {
	switch {
	case status == http.StatusNotFound:
		return "not found"
	case status == http.StatusConflict:
		return "conflicts with what is stored"
	case status == http.StatusServiceUnavailable:
		return "a service this request needs is unavailable; try again shortly"
	case status >= 500:
		return "the request failed"
	}
	return "the request is invalid"
}

func slogLevel(status int) slog.Level {
	if status >= 500 {
		return slog.LevelWarn
	}
	return slog.LevelDebug
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
