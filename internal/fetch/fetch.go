// Package fetch downloads web pages found by search and turns them into
// trimmed Markdown for the model to read.
//
// # Address guard
//
// Search results are chosen by strangers, so every connection goes through
// a guard against server-side request forgery. Only http and https URLs are
// fetched, and the fetcher refuses to connect to private (RFC 1918,
// RFC 4193), loopback, link-local, unspecified, multicast, carrier-grade NAT
// (100.64.0.0/10), 0.0.0.0/8, reserved and documentation addresses, to
// IPv6 forms embedding any of those (IPv4-mapped, NAT64, 6to4), and to
// cloud instance-metadata endpoints (169.254.169.254, fd00:ec2::254,
// metadata.google.internal, ...).
//
// The check runs on the address actually being connected to, inside
// net.Dialer.Control after name resolution, so a host name that resolves
// (or re-resolves, as in DNS rebinding) to a private address is still
// refused. URLs are also checked before the first request and before every
// redirect is followed, so literal private addresses, numeric spellings
// such as http://2130706433/ and metadata host names are refused without
// any lookup or connection.
//
// Go's URL parser takes hosts such as "2130706433" or "0x7f.1" as names;
// the pure-Go resolver then asks DNS for them, but the cgo resolver (glibc
// getaddrinfo) reads them as 127.0.0.1. Such hosts are therefore decoded
// and judged as addresses before any lookup, and the dial-time check
// would catch them anyway.
//
// Config.AllowHosts (SOVA_FETCH_ALLOW_HOSTS) lifts the guard for chosen
// hosts: an exact host name ("searx.lan"), a wildcard ("*.corp.lan"), an IP
// address ("127.0.0.1") or a CIDR range ("10.0.0.0/8"). A host allowed by
// name may resolve to any address. Metadata addresses are unblocked only by
// an entry naming exactly that address, never by a wider range.
//
// # Proxies
//
// Proxy settings from the environment (HTTP_PROXY, HTTPS_PROXY) are
// ignored on purpose: through a proxy the fetcher connects to the proxy,
// not to the target, so the dial-time check could not see where a request
// really goes. A proxy can be set explicitly with Config.Proxy; the
// connection to it is always allowed, and only the URL-level checks
// (scheme, literal addresses, metadata names) still apply to targets, so
// the proxy itself must refuse internal destinations.
//
// # Content
//
// HTML is reduced to its main content by go-trafilatura and go-readability,
// one of whose texts is kept (see chooseContent; shingle F1 0.973 on the
// article-extraction benchmark, "sova bench extract"), and converted to
// Markdown: links absolute (http and https only; other links keep just
// their text), images dropped, the headline moved to Page.Title, and
// scripts, styles, noscript, iframes and other embedded content removed
// before extraction (a <noscript> with a post's worth of text is kept as
// HTML). text/plain and text/markdown pass through. PDF
// documents are read as text (see extractPDF) in a worker process under
// Config.Parse (see internal/isolate); a PDF larger than MaxBytes fails
// with ErrPDFTooLarge, since it cannot be read in part. Other types
// fail with ErrUnsupportedType, decided from the Content-Type header before
// the body is read (a missing or octet-stream type is sniffed from the
// body). The
// charset comes from a byte-order mark, valid UTF-8, the Content-Type
// header or a <meta> declaration, in that order; undeclared non-UTF-8
// text is guessed to be windows-1251, KOI8-R or windows-1252.
//
// # Limits
//
// Each fetch has an overall timeout covering connection, redirects and the
// body. Bodies are read up to Config.MaxBytes (after transport
// decompression); a larger page is not an error: what was read is used and
// the Page is marked Truncated. The extractors see at most the first
// 200,000 characters of text or 30,000 elements of a page (their cost
// grows faster than linearly), again marking it Truncated; HTML over
// maxHTMLBytes is cut before it is parsed, and an extraction that takes
// longer than Config.Parse.Timeout is abandoned (see extractHTMLWithin).
// The extracted Markdown is trimmed to Config.MaxChars characters at a
// paragraph, sentence or word boundary; a trimmed page keeps its whole
// content in Page.Content, from which Page.Excerpt picks the passages that
// match a question within the same budget (SelectPassages).
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/isolate"
	"github.com/sova-ai/sova/internal/metrics"
)

// Defaults used for zero Config fields.
const (
	DefaultMaxBytes     int64 = 5 << 20
	DefaultTimeout            = 20 * time.Second
	DefaultMaxRedirects       = 5
	DefaultMaxChars           = 3000
	DefaultUserAgent          = "Mozilla/5.0 (compatible; Sova; +https://github.com/sova-ai/sova)"
)

// Config configures a Fetcher. The zero value is usable.
type Config struct {
	// AllowHosts lists hosts the guard lets through even though they are
	// private: host names ("searx.lan"), wildcards ("*.corp.lan"), IP
	// addresses ("127.0.0.1", "::1") or CIDR ranges ("10.0.0.0/8").
	// Entries that cannot be parsed allow nothing; see Validate.
	AllowHosts []string
	// MaxBytes caps how much of a response body is read (default 5 MiB).
	MaxBytes int64
	// Timeout bounds a whole fetch, body included (default 20s).
	Timeout time.Duration
	// MaxRedirects is how many redirects are followed (default 5; a
	// negative value follows none).
	MaxRedirects int
	// MaxChars is the length, in characters, the Markdown is trimmed to
	// (default 3000; a negative value disables trimming).
	MaxChars int
	// UserAgent is sent with every request (default DefaultUserAgent).
	UserAgent string
	// Proxy is an optional proxy URL (http, https or socks5). Empty means
	// direct connections; the environment is never consulted. See the
	// package documentation for what the guard can still check through a
	// proxy.
	Proxy string
	// Parse limits the reading of a page's content (SOVA_PARSE_TIMEOUT,
	// SOVA_PARSE_MEMORY): a PDF is read in a worker process under both
	// limits; HTML extraction, in this process, under the time limit.
	Parse isolate.Limits
	// Logger, when set, gets one line per failed fetch with what the
	// error's text leaves out (the address a host resolved to, a
	// network error as it was).
	Logger *slog.Logger
	// Metrics, when set, counts the pages read and their time.
	Metrics *metrics.Metrics
}

// Validate reports configuration mistakes an operator should fix, such as
// AllowHosts entries that are neither host names, addresses nor CIDR
// ranges. New accepts an invalid Config but ignores the bad parts.
func (c Config) Validate() error {
	var errs []error
	for _, e := range c.AllowHosts {
		if _, _, err := egress.ParseAllowEntry(e); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", AllowHostsEnv, err))
		}
	}
	if c.Proxy != "" {
		if _, err := parseProxy(c.Proxy); err != nil {
			errs = append(errs, err)
		}
	}
	if c.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("fetch max bytes must not be negative, got %d", c.MaxBytes))
	}
	if c.Timeout < 0 {
		errs = append(errs, fmt.Errorf("fetch timeout must not be negative, got %s", c.Timeout))
	}
	if c.Parse.Timeout < 0 || c.Parse.Memory < 0 {
		errs = append(errs, fmt.Errorf("parse limits must not be negative, got %s and %d bytes", c.Parse.Timeout, c.Parse.Memory))
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxRedirects == 0 {
		c.MaxRedirects = DefaultMaxRedirects
	} else if c.MaxRedirects < 0 {
		c.MaxRedirects = 0
	}
	if c.MaxChars == 0 {
		c.MaxChars = DefaultMaxChars
	}
	if strings.TrimSpace(c.UserAgent) == "" {
		c.UserAgent = DefaultUserAgent
	}
	if c.Parse.Timeout <= 0 {
		c.Parse.Timeout = isolate.DefaultTimeout
	}
	return c
}

func parseProxy(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("fetch proxy %q is not a valid URL: %w", raw, err)
	}
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return nil, fmt.Errorf("fetch proxy %q: scheme must be http, https or socks5", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("fetch proxy %q has no host", raw)
	}
	return u, nil
}

// Page is a fetched page reduced to its main content.
type Page struct {
	URL         string // final URL, after redirects
	Title       string
	Markdown    string // main content, trimmed to MaxChars
	Chars       int    // length of the Markdown in characters before trimming
	ContentType string // media type, e.g. "text/html"
	Status      int    // HTTP status code (2xx; other statuses are a *StatusError)
	// Truncated is true when Markdown is not the whole content: it was
	// trimmed to MaxChars, or the body exceeded MaxBytes (or held more
	// text than the extractors are given) and only its beginning was read.
	Truncated bool
	Published string // publication date as YYYY-MM-DD, when found
	Author    string
	SiteName  string
	Language  string `json:",omitempty"` // as the page declares it (<html lang>), when it does
	// Content is the whole main content when Markdown had to be trimmed
	// (at most MaxContentChars characters; empty otherwise), and Budget
	// the length it was trimmed to: Excerpt picks from Content the
	// passages that answer a question, within the same budget.
	Content string `json:",omitempty"`
	Budget  int    `json:",omitempty"`
}

// MaxContentChars bounds Page.Content.
const MaxContentChars = 100_000

// Excerpt is the page's text to read for a question: with Content, the
// passages that best match queries within Budget characters (see
// SelectPassages); without, Markdown as it is.
func (p *Page) Excerpt(queries ...string) Excerpt {
	if p.Content == "" || p.Budget <= 0 {
		return Excerpt{Markdown: p.Markdown, Whole: !p.Truncated}
	}
	return SelectPassages(p.Content, queries, p.Budget)
}

// setContent fills Markdown, trimmed to maxChars, and, when it was
// trimmed, Content and Budget. It reports whether it trimmed.
func (p *Page) setContent(md string, maxChars int) bool {
	var trimmed bool
	p.Markdown, trimmed = trimText(md, maxChars)
	if trimmed {
		p.Content, _ = trimText(md, MaxContentChars)
		p.Budget = maxChars
	}
	return trimmed
}

// ErrUnsupportedType is matched (errors.Is) when a response is neither
// HTML, plain text, Markdown nor PDF, e.g. an image. Use errors.As
// with *UnsupportedTypeError for the content type.
var ErrUnsupportedType = errors.New("unsupported content type")

// UnsupportedTypeError reports a response whose content type the fetcher
// cannot read.
type UnsupportedTypeError struct {
	URL         string
	ContentType string
}

func (e *UnsupportedTypeError) Error() string {
	return fmt.Sprintf("%s: content type %q is not supported (only HTML, plain text, Markdown and PDF are read)", e.URL, e.ContentType)
}

// Is makes errors.Is(err, ErrUnsupportedType) true.
func (e *UnsupportedTypeError) Is(target error) bool { return target == ErrUnsupportedType }

// StatusError reports a response with a status outside 2xx.
type StatusError struct {
	URL    string
	Status int
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s answered HTTP %d %s", e.URL, e.Status, http.StatusText(e.Status))
}

// ErrTooManyRedirects is matched (errors.Is) when a fetch stops because
// the redirect limit was reached.
var ErrTooManyRedirects = egress.ErrTooManyRedirects

// ErrNoContent is matched (errors.Is) when a page has no readable text.
var ErrNoContent = errors.New("no readable content")

// Fetcher downloads pages through the address guard. It is safe for
// concurrent use.
type Fetcher struct {
	cfg    Config
	guard  *egress.Guard
	client *http.Client

	// testDialAddr, when set (tests only), rewrites the host:port about to
	// be dialled, standing in for DNS: the guard still judges the rewritten
	// address, while name-based allowances use the original host.
	testDialAddr func(hostport string) string
}

// New returns a Fetcher for cfg, with defaults filled in.
func New(cfg Config) *Fetcher {
	cfg = cfg.withDefaults()
	f := &Fetcher{cfg: cfg}

	proxyHost := ""
	var proxy func(*http.Request) (*url.URL, error)
	if cfg.Proxy != "" {
		pu, err := parseProxy(cfg.Proxy)
		if err != nil {
			// Fail closed: never fall back to direct connections when
			// the operator asked for a proxy.
			proxy = func(*http.Request) (*url.URL, error) { return nil, err }
		} else {
			proxyHost = pu.Hostname()
			proxy = http.ProxyURL(pu)
		}
	}
	f.guard = egress.NewGuard(egress.Policy{
		Allow: cfg.AllowHosts, AllowSetting: AllowHostsEnv, Proxy: proxyHost,
		Rewrite: func(addr string) string {
			if f.testDialAddr != nil {
				return f.testDialAddr(addr)
			}
			return addr
		},
	})

	base := &http.Transport{
		Proxy:                 proxy, // nil: no proxy, environment ignored
		DialContext:           f.guard.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cfg.Timeout,
		ExpectContinueTimeout: time.Second,
	}
	f.client = &http.Client{
		Transport:     egress.WithGuard(f.guard, base),
		CheckRedirect: egress.CheckRedirect(f.guard, cfg.MaxRedirects, "SOVA_FETCH_MAX_REDIRECTS"),
		Timeout:       cfg.Timeout,
	}
	return f
}

// Client returns the guarded HTTP client the Fetcher uses, so other
// packages can make requests under the same address rules, redirect limit
// and timeout. It must not be modified.
func (f *Fetcher) Client() *http.Client { return f.client }

// Fetch downloads rawURL and returns its main content as Markdown.
//
// Errors match ErrBlocked when the guard refuses an address,
// ErrUnsupportedType for content that is not HTML or text,
// ErrTooManyRedirects, ErrNoContent, and *StatusError for non-2xx answers.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (page *Page, err error) {
	start := time.Now()
	defer func() {
		f.cfg.Metrics.PageRead(time.Since(start), err != nil)
		if err != nil && ctx.Err() == nil && f.cfg.Logger != nil {
			f.cfg.Logger.InfoContext(ctx, "page fetch failed", "url", rawURL, "err", errtext.Detail(err))
		}
	}()
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return nil, fmt.Errorf("fetch %q: not a valid URL: %w", rawURL, err)
	}
	if err := f.guard.CheckURL(u); err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}

	fctx, cancel := context.WithTimeout(ctx, f.cfg.Timeout)
	defer cancel()

	req, err := http.NewRequestWithContext(fctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: building request: %w", u.Redacted(), err)
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,text/markdown;q=0.9,text/plain;q=0.8,application/pdf;q=0.7,*/*;q=0.5")

	resp, err := f.client.Do(req)
	if err != nil {
		return nil, f.requestError(ctx, u, err)
	}
	defer resp.Body.Close()

	final := resp.Request.URL
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &StatusError{URL: final.Redacted(), Status: resp.StatusCode}
	}

	header := resp.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(header)
	mediaType = strings.ToLower(mediaType)
	kind := kindOf(mediaType)
	if kind == kindUnsupported {
		return nil, &UnsupportedTypeError{URL: final.Redacted(), ContentType: mediaType}
	}

	body, truncated, err := readLimited(resp.Body, f.cfg.MaxBytes)
	if err != nil {
		return nil, f.requestError(ctx, final, fmt.Errorf("reading body: %w", err))
	}
	if kind == kindSniff {
		mediaType, _, _ = mime.ParseMediaType(http.DetectContentType(body))
		// The sniffed charset is a guess; let decoding look for itself.
		header = ""
		if kind = kindOf(mediaType); kind == kindUnsupported || kind == kindSniff {
			return nil, &UnsupportedTypeError{URL: final.Redacted(), ContentType: mediaType}
		}
	}

	page = &Page{
		URL:         final.String(),
		ContentType: mediaType,
		Status:      resp.StatusCode,
	}
	var ex extraction
	switch kind {
	case kindHTML:
		ex, err = extractHTMLWithin(fctx, f.cfg.Parse.Timeout, decode(body, header), final)
	case kindPDF:
		if truncated {
			return nil, fmt.Errorf("fetch %s: %w", final.Redacted(), ErrPDFTooLarge)
		}
		ex, err = f.readPDF(fctx, body)
	default:
		ex = extractText(decode(body, header), mediaType)
	}
	if err != nil {
		if ctx.Err() == nil && fctx.Err() != nil {
			// The fetch's own deadline passed while the content was read.
			return nil, fmt.Errorf("fetch %s: timed out after %s: %w", final.Redacted(), f.cfg.Timeout, err)
		}
		return nil, fmt.Errorf("fetch %s: %w", final.Redacted(), err)
	}
	if strings.TrimSpace(ex.markdown) == "" {
		return nil, fmt.Errorf("fetch %s: %w", final.Redacted(), ErrNoContent)
	}

	page.Title = ex.title
	page.Author = ex.author
	page.SiteName = ex.siteName
	page.Published = ex.published
	page.Language = ex.language
	page.Chars = utf8.RuneCountInString(ex.markdown)
	trimmed := page.setContent(ex.markdown, f.cfg.MaxChars)
	page.Truncated = truncated || trimmed || ex.cut
	return page, nil
}

// requestError wraps a transport error with the URL and, when the
// fetcher's own deadline expired (not the caller's), a plain statement of
// the timeout.
//
// The page's URL is the run's own business and stays in the text; the
// addresses a network error names (what the host resolved to, the proxy)
// do not: they are the error's private detail (errtext), for the log.
func (f *Fetcher) requestError(parent context.Context, u *url.URL, err error) error {
	// Unwrap *url.Error so the message does not repeat the URL.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	// A refusal of the guard speaks for itself; the dial error around it
	// would name the address the host resolved to.
	var (
		be *BlockedError
		op *net.OpError
	)
	if errors.As(err, &op) && errors.As(op.Err, &be) {
		return fmt.Errorf("fetch %s: %w", u.Redacted(), be)
	}
	if errors.As(err, &be) {
		return fmt.Errorf("fetch %s: %w", u.Redacted(), err) // a redirect refused: its target is in the text
	}
	if perr := parent.Err(); perr != nil {
		if !errors.Is(err, perr) {
			err = fmt.Errorf("%w (%w)", perr, errtext.Net(err))
		}
		return fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
		return fmt.Errorf("fetch %s: %w", u.Redacted(), errtext.Hide(fmt.Sprintf("timed out after %s", f.cfg.Timeout), err))
	}
	return fmt.Errorf("fetch %s: %w", u.Redacted(), errtext.Net(err))
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

type contentKind int

const (
	kindUnsupported contentKind = iota
	kindHTML
	kindText
	kindPDF
	kindSniff // no usable Content-Type: decide from the body
)

func kindOf(mediaType string) contentKind {
	switch mediaType {
	case "text/html", "application/xhtml+xml":
		return kindHTML
	case "text/plain", "text/markdown", "text/x-markdown":
		return kindText
	case "application/pdf", "application/x-pdf":
		return kindPDF
	case "", "application/octet-stream", "binary/octet-stream":
		return kindSniff
	}
	return kindUnsupported
}

// readLimited reads at most limit bytes of r. It reports truncated when
// the body had more.
func readLimited(r io.Reader, limit int64) (body []byte, truncated bool, err error) {
	body, err = io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > limit {
		return body[:limit], true, nil
	}
	return body, false, nil
}
