// Package imageproxy fetches remote images (thumbnails, favicons, the
// images of a web search) for the browser UI, so that the page never loads
// anything from another site: a site learns nothing of who reads about it,
// and the page's Content-Security-Policy can keep images to its own origin.
//
// Images are fetched through the page fetcher's guarded client (private,
// loopback and cloud metadata addresses refused at dial time and on every
// redirect), under a time and size limit, and only raster image types are
// passed on: the declared type must be one of them and the first bytes
// must not say otherwise.
package imageproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/fetch"
)

// Defaults used when a Proxy leaves a limit unset.
const (
	DefaultMaxBytes int64 = 5 << 20
	DefaultTimeout        = 10 * time.Second
	// MaxURLLength bounds the address asked for.
	MaxURLLength = 4096
	userAgent    = "Mozilla/5.0 (compatible; Sova image proxy; +https://github.com/sova-ai/sova)"
)

// Types are the image types passed on. SVG is not among them: opened on
// its own, an SVG document runs its scripts.
var Types = map[string]bool{
	"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true, "image/avif": true,
	"image/bmp": true, "image/x-icon": true, "image/vnd.microsoft.icon": true,
}

// Proxy fetches images. The zero value is not usable: Client is required.
type Proxy struct {
	// Client is the guarded client of the page fetcher
	// (fetch.Fetcher.Client); its guard decides which addresses may be
	// reached.
	Client *http.Client
	// MaxBytes caps an image's size (default DefaultMaxBytes).
	MaxBytes int64
	// Timeout bounds one fetch, body included (default DefaultTimeout).
	Timeout time.Duration
}

// Image is a fetched image.
type Image struct {
	Type string // one of Types
	Body []byte
	// Modified is the origin's Last-Modified, when it gave one.
	Modified string
}

// Error is a refused or failed fetch: the HTTP status and code the
// server answers with, and a message a person can act on (no address the
// host resolved to).
type Error struct {
	Status  int
	Code    string
	Message string
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

// Codes of the errors.
const (
	CodeBadURL   = "invalid_url"
	CodeRefused  = "address_refused"
	CodeNotImage = "not_an_image"
	CodeTooLarge = "image_too_large"
	CodeUpstream = "upstream_error"
	CodeTimeout  = "upstream_timeout"
)

// Fetch fetches the image at rawURL.
func (p *Proxy) Fetch(ctx context.Context, rawURL string) (*Image, error) {
	u, err := checkURL(rawURL)
	if err != nil {
		return nil, err
	}
	maxBytes, timeout := p.MaxBytes, p.Timeout
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, &Error{Status: http.StatusBadRequest, Code: CodeBadURL, Message: "not a valid image address", Err: err}
	}
	req.Header.Set("Accept", "image/avif,image/webp,image/png,image/jpeg,image/gif,image/*;q=0.8")
	req.Header.Set("User-Agent", userAgent)
	resp, err := p.Client.Do(req)
	if err != nil {
		return nil, transportError(ctx, err, timeout)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, &Error{Status: http.StatusBadGateway, Code: CodeUpstream,
			Message: fmt.Sprintf("the image's server answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))}
	}
	typ, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	typ = strings.ToLower(typ)
	if !Types[typ] {
		if typ == "" {
			typ = "no type"
		}
		return nil, &Error{Status: http.StatusUnsupportedMediaType, Code: CodeNotImage,
			Message: fmt.Sprintf("not an image the page may show (%s)", typ)}
	}
	if resp.ContentLength > maxBytes {
		return nil, tooLarge(maxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil {
		return nil, transportError(ctx, err, timeout)
	}
	if int64(len(body)) > maxBytes {
		return nil, tooLarge(maxBytes)
	}
	// The declared type may lie; markup or a script under an image type
	// is refused (the sniffer knows the raster formats; what it does not
	// know comes back as application/octet-stream).
	if sniffed := http.DetectContentType(body); !strings.HasPrefix(sniffed, "image/") && sniffed != "application/octet-stream" {
		return nil, &Error{Status: http.StatusUnsupportedMediaType, Code: CodeNotImage,
			Message: fmt.Sprintf("declared as %s but its content is %s", typ, strings.SplitN(sniffed, ";", 2)[0])}
	}
	return &Image{Type: typ, Body: body, Modified: resp.Header.Get("Last-Modified")}, nil
}

// checkURL accepts absolute http(s) URLs without credentials.
func checkURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	bad := func(msg string) error { return &Error{Status: http.StatusBadRequest, Code: CodeBadURL, Message: msg} }
	if raw == "" {
		return nil, bad("the url parameter is required")
	}
	if len(raw) > MaxURLLength {
		return nil, bad(fmt.Sprintf("the image address is longer than %d characters", MaxURLLength))
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, bad("the image address must be an absolute http or https URL")
	}
	if u.User != nil {
		return nil, bad("the image address must not carry a user name or password")
	}
	u.Fragment = ""
	return u, nil
}

func tooLarge(limit int64) error {
	return &Error{Status: http.StatusBadGateway, Code: CodeTooLarge,
		Message: fmt.Sprintf("the image is larger than %d KiB", limit>>10)}
}

// transportError says why no image arrived: the guard refused the address,
// the time ran out, or the network failed.
func transportError(ctx context.Context, err error, timeout time.Duration) error {
	if errors.Is(err, fetch.ErrBlocked) {
		var be *fetch.BlockedError
		msg := "the image's address is not reachable from this server"
		if errors.As(err, &be) {
			msg = be.Error()
		}
		return &Error{Status: http.StatusForbidden, Code: CodeRefused, Message: msg, Err: err}
	}
	if errors.Is(err, fetch.ErrTooManyRedirects) {
		return &Error{Status: http.StatusBadGateway, Code: CodeUpstream, Message: "too many redirects", Err: err}
	}
	if ctx.Err() != nil {
		return &Error{Status: http.StatusGatewayTimeout, Code: CodeTimeout, Message: fmt.Sprintf("no image within %s", timeout), Err: err}
	}
	return &Error{Status: http.StatusBadGateway, Code: CodeUpstream, Message: "the image could not be fetched: " + errtext.Network(err), Err: err}
}
