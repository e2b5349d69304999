package llm

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/errtext"
)

// APIError is an error answer from the model endpoint: an HTTP error
// status, or an error event in the middle of a stream (StatusCode 0 unless
// the event carried one). Use errors.As to get it from any error this
// package returns.
//
// The text of every error of this package names the model endpoint by its
// role, never by its address: that text reaches clients. The address is
// the errors' private detail (errtext.Detail), and the client logs it once
// per failed call.
type APIError struct {
	StatusCode int
	Type       string
	Code       string
	Message    string
	Param      string
	// Endpoint is the configured base URL, without credentials. It is
	// kept out of Error(), whose text clients see; Private has it.
	Endpoint string
	// Model is the model the failed request asked for.
	Model string
	// RetryAfter is the wait the server asked for (Retry-After or
	// retry-after-ms), zero when it gave none.
	RetryAfter time.Duration

	// body is the raw error body (redacted), used to recognise capability
	// errors that servers describe only in free text.
	body string
}

// Error says what the endpoint answered, for whom the run is for: the
// status, the model, the server's message with any address in it scrubbed,
// and what to do. The endpoint's address is not in it (see Private).
func (e *APIError) Error() string {
	var b strings.Builder
	if e.StatusCode > 0 {
		fmt.Fprintf(&b, "the model endpoint answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	} else {
		b.WriteString("the model endpoint reported an error while streaming")
	}
	if e.Model != "" {
		fmt.Fprintf(&b, " for model %q", e.Model)
	}
	if msg := e.publicMessage(); msg != "" {
		b.WriteString(": ")
		b.WriteString(msg)
	} else if e.Type != "" || e.Code != "" {
		b.WriteString(": ")
		b.WriteString(strings.Trim(e.Type+" "+e.Code, " "))
	}
	if h := e.hint(); h != "" {
		b.WriteString(" — ")
		b.WriteString(h)
	}
	return b.String()
}

// Private is the endpoint's address and, when scrubbing changed it, the
// server's message as sent: for the log (errtext.Detail).
func (e *APIError) Private() string {
	d := "endpoint " + e.Endpoint
	if msg := e.publicMessage(); msg != e.Message {
		d += ", which said: " + e.Message
	}
	return d
}

// publicMessage is the server's message without addresses: proxies in
// front of a model (LiteLLM, gateways) name the upstreams they could not
// reach.
func (e *APIError) publicMessage() string {
	return errtext.Scrub(e.Message, e.Endpoint, hostOf(e.Endpoint))
}

func (e *APIError) hint() string {
	switch {
	case e.StatusCode == http.StatusUnauthorized:
		return "the model endpoint refused the API key: set SOVA_LLM_API_KEY or OPENAI_API_KEY"
	case e.StatusCode == http.StatusForbidden:
		return "the model endpoint refused the API key for this request: check SOVA_LLM_API_KEY and that the key may use this model"
	case e.StatusCode == http.StatusNotFound && e.modelNotFound():
		return fmt.Sprintf("the endpoint does not serve model %q: set SOVA_MODEL or SOVA_FAST_MODEL to a model it lists (sova doctor shows whether they are)", e.Model)
	case e.StatusCode == http.StatusNotFound:
		return "check SOVA_LLM_BASE_URL (it usually ends in /v1) and the model name"
	case e.StatusCode == http.StatusTooManyRequests:
		return "the endpoint is rate limiting or out of quota; retry later or set SOVA_FALLBACK_MODEL"
	case e.overloaded():
		return "the model is overloaded; retry later or set SOVA_FALLBACK_MODEL"
	case e.StatusCode >= 500:
		return "the model server failed; check its logs"
	}
	return ""
}

// modelNotFound reports whether a 404 says that the model does not exist
// (OpenAI's model_not_found, Ollama's "model ... not found") rather than
// that the URL is wrong.
func (e *APIError) modelNotFound() bool {
	if e.Model == "" {
		return false
	}
	if strings.Contains(e.Code, "model_not_found") {
		return true
	}
	msg := strings.ToLower(e.Message)
	return strings.Contains(msg, "model") && (strings.Contains(msg, "not found") || strings.Contains(msg, "does not exist"))
}

// overloaded reports whether the error says the model is busy rather than
// that the request is wrong, which is what makes a fallback model useful.
func (e *APIError) overloaded() bool {
	switch e.StatusCode {
	case http.StatusTooManyRequests, http.StatusServiceUnavailable, 529:
		return true
	}
	return strings.Contains(strings.ToLower(e.Type+" "+e.Code), "overload")
}

func (e *APIError) retryable() bool {
	if e.StatusCode == 0 {
		// A stream error event: retry unless it blames the request.
		return !strings.Contains(strings.ToLower(e.Type), "invalid_request")
	}
	return e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// transportError means the endpoint could not be reached or stopped
// answering. It is worth a retry unless it is permanent.
type transportError struct {
	endpoint  string
	timeout   time.Duration // set when the per-call timeout expired
	midStream bool          // the stream had started
	err       error
	// reason and fix are set when another attempt would fail the same way
	// (see permanentNetError): the call then fails at once.
	reason, fix string
}

func (e *transportError) permanent() bool { return e.reason != "" }

func (e *transportError) Error() string {
	if e.permanent() {
		return fmt.Sprintf("the model endpoint cannot be reached: %s — %s", e.reason, e.fix)
	}
	if e.midStream && e.timeout > 0 {
		return fmt.Sprintf("the model endpoint stopped streaming for %s — raise SOVA_LLM_TIMEOUT or check the model server", e.timeout)
	}
	if e.midStream {
		return "the connection to the model endpoint broke mid-stream: " + errtext.Network(e.err)
	}
	if e.timeout > 0 {
		return fmt.Sprintf("the model endpoint did not answer within %s — raise SOVA_LLM_TIMEOUT or check the model server", e.timeout)
	}
	return "cannot reach the model endpoint: " + errtext.Network(e.err) + " — check SOVA_LLM_BASE_URL and that the model server is running"
}

// Private is the endpoint's address and the network error as it was.
func (e *transportError) Private() string {
	d := "endpoint " + e.endpoint
	if e.err != nil {
		d += ": " + e.err.Error()
	}
	return d
}

func (e *transportError) Unwrap() error { return e.err }

// badResponseError means the endpoint answered 2xx with something that is
// not a chat completion (garbage JSON, an HTML page, a cut-off stream).
// It is treated as a server fault and retried: such answers usually come
// from a proxy or an overloaded server and rarely repeat.
type badResponseError struct {
	endpoint string
	detail   string
	err      error
}

func (e *badResponseError) Error() string {
	msg := "the model endpoint sent an invalid response: " + errtext.Scrub(e.detail, e.endpoint, hostOf(e.endpoint))
	if e.err != nil {
		msg += ": " + errtext.Scrub(e.err.Error(), e.endpoint, hostOf(e.endpoint))
	}
	return msg
}

// Private is the endpoint's address.
func (e *badResponseError) Private() string { return "endpoint " + e.endpoint }

func (e *badResponseError) Unwrap() error { return e.err }

// retryable reports whether another attempt at the same call may succeed.
func retryable(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.retryable()
	}
	var te *transportError
	if errors.As(err, &te) {
		return !te.permanent()
	}
	var be *badResponseError
	return errors.As(err, &be)
}

// permanentNetError recognises network failures that another attempt
// would not change, so that a misconfigured endpoint fails at once with
// what to fix instead of after minutes of retries: a host name that does
// not exist (NXDOMAIN), a refused connection (nothing listens on the
// port), a certificate that is not trusted and a server that does not
// speak TLS on an https URL. Timeouts, resets and temporary DNS failures
// are not among them.
func permanentNetError(err error) (reason, fix string, ok bool) {
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return "no such host", "check the host name in SOVA_LLM_BASE_URL", true
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "connection refused",
			"is the server running? set SOVA_LLM_BASE_URL", true
	}
	if detail := untrustedCertificate(err); detail != "" {
		return detail, "check the address in SOVA_LLM_BASE_URL, or add the server's CA certificate to the trusted ones (SSL_CERT_FILE)", true
	}
	var notTLS tls.RecordHeaderError
	if errors.Is(err, http.ErrSchemeMismatch) || errors.As(err, &notTLS) {
		return "it does not speak TLS", "use http:// instead of https:// in SOVA_LLM_BASE_URL", true
	}
	return "", "", false
}

// untrustedCertificate describes a TLS certificate verification failure,
// or returns "" when err is not one.
func untrustedCertificate(err error) string {
	var (
		unknownCA x509.UnknownAuthorityError
		badHost   x509.HostnameError
		badCert   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
	)
	switch {
	case errors.As(err, &unknownCA):
		return "its TLS certificate is signed by an unknown authority"
	case errors.As(err, &badHost):
		return "its TLS certificate is not valid for the host name in SOVA_LLM_BASE_URL"
	case errors.As(err, &badCert):
		return "its TLS certificate is invalid: " + errtext.Scrub(badCert.Error())
	case errors.As(err, &verify):
		return "its TLS certificate failed verification: " + errtext.Scrub(verify.Err.Error())
	}
	return ""
}

// overloadError reports whether err says the model is overloaded.
func overloadError(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.overloaded()
}

// maxErrorBody bounds how much of an error answer is read.
const maxErrorBody = 64 << 10

// maxResponseBody bounds a non-streamed completion.
const maxResponseBody = 32 << 20

// check turns an error answer into an *APIError (whatever its shape)
// and rejects a 2xx body that is not what was asked for, so that the
// retry logic can tell server faults from network faults. A JSON body
// comes back read and bounded; an event stream is checked chunk by chunk
// as it is read (events).
func (k *core) check(res *http.Response, model string, stream bool) (*http.Response, error) {
	if res.StatusCode >= 400 {
		body, _ := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		_ = res.Body.Close()
		return nil, k.apiError(res.StatusCode, res.Header, body, model)
	}
	mediaType, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type"))
	isJSON := strings.Contains(mediaType, "json")
	if stream && !isJSON {
		return res, nil
	}
	body, err := io.ReadAll(io.LimitReader(res.Body, maxResponseBody+1))
	_ = res.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(body) > maxResponseBody {
		return nil, &badResponseError{endpoint: k.endpoint, detail: "body larger than 32 MiB"}
	}
	if e := embeddedError(body); e != nil {
		// Some servers answer 200 with an error object.
		return nil, k.apiError(e.status, res.Header, body, model)
	}
	switch {
	case stream:
		return nil, &badResponseError{endpoint: k.endpoint, detail: fmt.Sprintf("asked for a stream but got %q (%s)", mediaType, k.redact(snippet(body)))}
	case !json.Valid(body):
		return nil, &badResponseError{endpoint: k.endpoint, detail: fmt.Sprintf("body is not valid JSON (%s)", k.redact(snippet(body)))}
	}
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res, nil
}

type bodyError struct {
	status int
}

// embeddedError recognises a 2xx body that is really an error object.
func embeddedError(body []byte) *bodyError {
	var probe struct {
		Error  json.RawMessage `json:"error"`
		Object string          `json:"object"`
		Code   json.RawMessage `json:"code"`
	}
	if json.Unmarshal(body, &probe) != nil {
		return nil
	}
	if len(probe.Error) == 0 && probe.Object != "error" {
		return nil
	}
	if string(probe.Error) == "null" {
		return nil
	}
	status := http.StatusBadGateway
	if n, err := strconv.Atoi(strings.Trim(string(probe.Code), `"`)); err == nil && n >= 400 && n < 600 {
		status = n
	}
	return &bodyError{status: status}
}

// apiError builds an *APIError from an error answer in any of the shapes
// OpenAI-compatible servers use: {"error":{...}}, {"error":"text"},
// vLLM's top-level {"object":"error","message":...}, FastAPI's {"detail":...}
// or plain text.
func (k *core) apiError(status int, h http.Header, body []byte, model string) *APIError {
	e := &APIError{
		StatusCode: status,
		Endpoint:   k.endpoint,
		Model:      model,
		RetryAfter: egress.RetryAfter(h, time.Now()),
	}
	fillFromBody(e, body)
	e.Message = k.redact(e.Message)
	e.body = k.redact(string(body))
	return e
}

func fillFromBody(e *APIError, body []byte) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &raw) != nil {
		text := strings.TrimSpace(string(body))
		if text != "" && !strings.HasPrefix(text, "<") {
			e.Message = truncate(text, 300)
		}
		return
	}
	obj := raw
	if inner, ok := raw["error"]; ok {
		var nested map[string]json.RawMessage
		if json.Unmarshal(inner, &nested) == nil {
			obj = nested
		} else {
			e.Message = truncate(jsonText(inner), 300)
			return
		}
	}
	e.Message = truncate(jsonText(obj["message"]), 300)
	e.Type = jsonText(obj["type"])
	e.Code = jsonText(obj["code"])
	e.Param = jsonText(obj["param"])
	if e.Message == "" {
		if d, ok := raw["detail"]; ok {
			e.Message = truncate(jsonText(d), 300)
		}
	}
}

// jsonText renders a JSON value as text: strings unquoted, null as "",
// anything else as compact JSON.
func jsonText(v json.RawMessage) string {
	if len(v) == 0 || string(v) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	var buf bytes.Buffer
	if json.Compact(&buf, v) == nil {
		return buf.String()
	}
	return string(v)
}

// streamAPIError turns an error event inside a stream into an *APIError.
func (k *core) streamAPIError(data []byte, event, model string) *APIError {
	e := &APIError{Endpoint: k.endpoint, Model: model}
	fillFromBody(e, data)
	if e.Message == "" {
		e.Message = "error event in the stream"
		if event != "" && event != "error" {
			e.Message += " (" + event + ")"
		}
	}
	if n, err := strconv.Atoi(e.Code); err == nil && n >= 400 && n < 600 {
		e.StatusCode = n
	}
	e.Message = k.redact(e.Message)
	e.body = k.redact(string(data))
	return e
}

// isNetworkError recognises failures to reach or read from the endpoint.
func isNetworkError(err error) bool {
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	for _, target := range []error{io.ErrUnexpectedEOF, io.EOF, syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.EPIPE, syscall.ECONNABORTED} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// isDecodeError recognises a chunk or body that is not the JSON expected.
func isDecodeError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te)
}

// redact removes the API key from text that came from the server, which
// sometimes echoes (part of) the credential it rejected.
func (k *core) redact(s string) string {
	if key := k.cfg.APIKey; len(key) >= 4 {
		s = strings.ReplaceAll(s, key, "[redacted]")
	}
	return s
}

// hostOf is the host:port of an endpoint URL ("" when it has none).
func hostOf(endpoint string) string {
	if u, err := url.Parse(endpoint); err == nil {
		return u.Host
	}
	return ""
}

func snippet(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "empty body"
	}
	return strconv.Quote(truncate(s, 80))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !isRuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// IsSetupError reports whether err says that the model endpoint is set up
// wrongly, so that every later call would fail the same way: the key
// refused (401, 403), a model or URL the endpoint does not know (404), a
// host that does not exist or refuses connections, a certificate not
// trusted. A run stops at once on such an error, naming the endpoint and
// the setting to fix (the error's text does), instead of going on without
// the model and blaming something else at the end.
func IsSetupError(err error) bool {
	var ae *APIError
	if errors.As(err, &ae) {
		switch ae.StatusCode {
		case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound:
			return true
		}
		return false
	}
	var te *transportError
	return errors.As(err, &te) && te.permanent()
}
