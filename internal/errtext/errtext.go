// Package errtext keeps what an error tells the person using Sova apart
// from what it tells the operator. The text of an error (Error()) reaches
// clients: the stream's error part, a tool's failed result, a status line,
// the stored message, an API answer. It says which component failed and
// why, and never where that component lives: no address of the model
// endpoint, a search service, a reader service or a proxy, and no address
// a host name resolved to. Those are the error's private detail, for the
// log only.
//
// An error type keeps its detail apart by implementing Private; Detail
// renders an error with the private details of every error it wraps, and
// is what a log line should record. Scrub removes addresses from text that
// comes from elsewhere (an error message a server sent, a network error),
// and Network describes a network failure without its addresses.
package errtext

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"syscall"
)

// Private is implemented by errors that keep a detail out of their text:
// the address of the service that failed, a raw network error. It returns
// that detail, for the log.
type Private interface {
	Private() string
}

// Detail is err's text followed by the private details of err and of every
// error it wraps, in parentheses: what the log records of a failure. It is
// "" for a nil error.
func Detail(err error) string {
	if err == nil {
		return ""
	}
	var parts []string
	walk(err, func(e error) {
		if p, ok := e.(Private); ok {
			if d := strings.TrimSpace(p.Private()); d != "" && !contains(parts, d) {
				parts = append(parts, d)
			}
		}
	})
	if len(parts) == 0 {
		return err.Error()
	}
	return err.Error() + " (" + strings.Join(parts, "; ") + ")"
}

// Public is what a client may be shown of err: its text with any address
// still in it scrubbed. Errors of the model client, the search providers
// and the page fetcher need no scrubbing; Public is the safety net for the
// text of any error.
func Public(err error) string {
	if err == nil {
		return ""
	}
	return Scrub(err.Error())
}

func walk(err error, fn func(error)) {
	for depth := 0; err != nil && depth < 64; depth++ {
		fn(err)
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e, fn)
			}
			return
		case interface{ Unwrap() error }:
			err = u.Unwrap()
		default:
			return
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Redacted stands for an address taken out of a text.
const Redacted = "[address]"

// word is a run of characters that may hold a URL or host:port.
var word = regexp.MustCompile(`[^\s"'()<>,;{}|` + "`" + `]+`)

// Scrub replaces the addresses in s with Redacted: URLs and host:port
// pairs whose host is an IP address, a name without a dot (a container or
// service name), "localhost" or a name under a private suffix (.local,
// .lan, .internal, …); bare IP addresses; and every occurrence of the
// known strings (the configured address of the service at hand). Public
// names (platform.openai.com/docs/…) are kept.
func Scrub(s string, known ...string) string {
	for _, k := range known {
		if k = strings.TrimSpace(k); len(k) >= 3 {
			s = strings.ReplaceAll(s, k, Redacted)
		}
	}
	return word.ReplaceAllStringFunc(s, func(w string) string {
		core := strings.TrimRight(w, ".:!?")
		if core == "" || !private(core) {
			return w
		}
		return Redacted + w[len(core):]
	})
}

// private reports whether w is a URL, host:port or IP address that points
// somewhere private.
func private(w string) bool {
	if i := strings.Index(w, "://"); i > 0 {
		u, err := url.Parse(w[i-schemeLen(w[:i]):])
		if err != nil {
			return true
		}
		return privateHost(u.Hostname())
	}
	if host, port, err := net.SplitHostPort(w); err == nil && port != "" && allDigits(port) {
		return privateHost(host)
	}
	if _, err := netip.ParseAddr(strings.Trim(w, "[]")); err == nil && strings.ContainsAny(w, ".:") {
		return true
	}
	return false
}

// schemeLen is the length of the URL scheme at the end of s.
func schemeLen(s string) int {
	n := 0
	for i := len(s) - 1; i >= 0; i-- {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.' {
			n++
			continue
		}
		break
	}
	return n
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

var privateSuffixes = []string{".local", ".lan", ".internal", ".intranet", ".corp", ".home", ".localdomain", ".svc", ".arpa", ".test", ".invalid", ".localhost"}

func privateHost(host string) bool {
	host = strings.ToLower(strings.Trim(host, "[]"))
	if host == "" {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	if host == "localhost" {
		return true
	}
	if !strings.Contains(strings.TrimSuffix(host, "."), ".") {
		// A container or service name ("vllm", "searxng"); a number
		// before a colon ("12:30") is not a host.
		return strings.ContainsFunc(host, func(r rune) bool { return r >= 'a' && r <= 'z' })
	}
	for _, s := range privateSuffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// Network describes a network failure in words that name no address:
// "connection refused", "no such host", "timed out", "its TLS certificate
// is signed by an unknown authority". A failure to reach a proxy says so.
// Anything else is err's text, scrubbed.
func Network(err error) string {
	if err == nil {
		return ""
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "proxyconnect" {
		return "cannot reach the proxy: " + reason(op.Err)
	}
	return reason(err)
}

func reason(err error) string {
	var (
		dnsErr    *net.DNSError
		unknownCA x509.UnknownAuthorityError
		badHost   x509.HostnameError
		badCert   x509.CertificateInvalidError
		verify    *tls.CertificateVerificationError
		notTLS    tls.RecordHeaderError
		ne        net.Error
	)
	switch {
	case err == nil:
		return "failed"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	case errors.As(err, &dnsErr) && dnsErr.IsNotFound:
		return "no such host"
	case errors.As(err, &dnsErr):
		return "the host name could not be resolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, syscall.EHOSTUNREACH):
		return "host unreachable"
	case errors.Is(err, syscall.ENETUNREACH):
		return "network unreachable"
	case errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ECONNABORTED):
		return "the connection broke"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the connection closed early"
	case errors.As(err, &unknownCA):
		return "its TLS certificate is signed by an unknown authority"
	case errors.As(err, &badHost):
		return "its TLS certificate is not valid for this host"
	case errors.As(err, &badCert):
		return "its TLS certificate is invalid"
	case errors.As(err, &verify):
		return "its TLS certificate failed verification"
	case errors.Is(err, http.ErrSchemeMismatch), errors.As(err, &notTLS):
		return "it does not speak TLS"
	}
	return Scrub(err.Error())
}

// Net wraps a network failure so that its text is Network(err) and the
// raw error, addresses and all, is its private detail. errors.Is and
// errors.As still see err. A nil err stays nil.
func Net(err error) error {
	if err == nil {
		return nil
	}
	var ne *netError
	if errors.As(err, &ne) {
		return err
	}
	return &netError{err: err}
}

type netError struct{ err error }

func (e *netError) Error() string   { return Network(e.err) }
func (e *netError) Private() string { return e.err.Error() }
func (e *netError) Unwrap() error   { return e.err }

// Hide returns an error whose text is text and whose private detail is
// err's text: for a failure whose own words would show an address.
// errors.Is and errors.As still see err. A nil err stays nil.
func Hide(text string, err error) error {
	if err == nil {
		return nil
	}
	return &hidden{text: text, err: err}
}

type hidden struct {
	text string
	err  error
}

func (e *hidden) Error() string   { return e.text }
func (e *hidden) Private() string { return e.err.Error() }
func (e *hidden) Unwrap() error   { return e.err }

// At returns err with addr, where the failing service lives, as its
// private detail: the text stays err's. A nil err stays nil.
func At(err error, addr string) error {
	if err == nil || addr == "" {
		return err
	}
	return &at{err: err, addr: addr}
}

type at struct {
	err  error
	addr string
}

func (e *at) Error() string   { return e.err.Error() }
func (e *at) Private() string { return "at " + e.addr }
func (e *at) Unwrap() error   { return e.err }
