package fetch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/errtext"
)

// External reader services.
const (
	ReaderJina      = "jina"      // Jina Reader: GET https://r.jina.ai/<url>
	ReaderFirecrawl = "firecrawl" // Firecrawl: POST https://api.firecrawl.dev/v1/scrape
)

// Default bases of the external reader services.
const (
	DefaultJinaURL      = "https://r.jina.ai"
	DefaultFirecrawlURL = "https://api.firecrawl.dev"
)

// ExternalConfig configures an ExternalReader.
type ExternalConfig struct {
	// Service is ReaderJina or ReaderFirecrawl.
	Service string
	// BaseURL is the service's address ("" for its public default); a
	// self-hosted instance works the same.
	BaseURL string
	// APIKey is sent as a bearer token; Jina Reader works without one, at
	// a lower rate.
	APIKey string
	// Timeout bounds one read (default DefaultTimeout): these services
	// render pages in a browser and take longer than a plain fetch.
	Timeout time.Duration
	// MaxBytes caps the answer read (default DefaultMaxBytes).
	MaxBytes int64
	// MaxChars is the length the Markdown is trimmed to, as for Fetcher
	// (default DefaultMaxChars; negative: no trimming).
	MaxChars int
	// CheckURL, when set, vets each page URL before it is handed to the
	// service, so that a service inside the network cannot be used to
	// reach what the fetcher's guard refuses. Fetcher.CheckURL fits.
	CheckURL func(rawURL string) error
	// HTTPClient talks to the service (default: a client with Timeout).
	HTTPClient *http.Client
	// Logger, when set, gets one line per failed read with the service's
	// address, which the error's text leaves out.
	Logger *slog.Logger
}

// ExternalReader reads pages through a reader service that renders them
// and returns Markdown (Jina Reader or Firecrawl's scrape API). It is the
// fallback for pages the built-in fetcher cannot read (seed 000 §8.3).
type ExternalReader struct {
	cfg    ExternalConfig
	client *http.Client
}

var _ Reader = (*ExternalReader)(nil)

// NewExternalReader returns a reader for cfg.
func NewExternalReader(cfg ExternalConfig) (*ExternalReader, error) {
	cfg.Service = strings.ToLower(strings.TrimSpace(cfg.Service))
	switch cfg.Service {
	case ReaderJina:
		if cfg.BaseURL == "" {
			cfg.BaseURL = DefaultJinaURL
		}
	case ReaderFirecrawl:
		if cfg.BaseURL == "" {
			cfg.BaseURL = DefaultFirecrawlURL
		}
	default:
		return nil, fmt.Errorf("unknown reader service %q: use %s or %s", cfg.Service, ReaderJina, ReaderFirecrawl)
	}
	cfg.BaseURL = strings.TrimRight(strings.TrimSpace(cfg.BaseURL), "/")
	if u, err := url.Parse(cfg.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("reader service address %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.MaxChars == 0 {
		cfg.MaxChars = DefaultMaxChars
	}
	client := cfg.HTTPClient
	if client == nil {
		client = egress.ServiceClient(cfg.Timeout, cfg.BaseURL)
	}
	return &ExternalReader{cfg: cfg, client: client}, nil
}

// Service returns the service name (ReaderJina or ReaderFirecrawl).
func (e *ExternalReader) Service() string { return e.cfg.Service }

// Fetch implements Reader.
//
// Errors name the service (jina, firecrawl) and the page, not the
// service's address: that is their private detail (errtext), for the log.
func (e *ExternalReader) Fetch(ctx context.Context, rawURL string) (page *Page, err error) {
	parent := ctx
	defer func() {
		if err == nil {
			return
		}
		err = errtext.At(err, e.cfg.BaseURL)
		if parent.Err() == nil && e.cfg.Logger != nil {
			e.cfg.Logger.InfoContext(parent, "reader service failed", "service", e.cfg.Service, "url", rawURL, "err", errtext.Detail(err))
		}
	}()
	rawURL = strings.TrimSpace(rawURL)
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%s reader: %q is not an http(s) URL", e.cfg.Service, rawURL)
	}
	if e.cfg.CheckURL != nil {
		if err := e.cfg.CheckURL(rawURL); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()

	var req *http.Request
	switch e.cfg.Service {
	case ReaderJina:
		// The page URL goes verbatim after the service address.
		req, err = http.NewRequestWithContext(ctx, http.MethodGet, e.cfg.BaseURL+"/"+u.String(), nil)
	case ReaderFirecrawl:
		body, _ := json.Marshal(map[string]any{
			"url": u.String(), "formats": []string{"markdown"}, "onlyMainContent": true,
			"timeout": e.cfg.Timeout.Milliseconds(),
		})
		req, err = http.NewRequestWithContext(ctx, http.MethodPost, e.cfg.BaseURL+"/v1/scrape", bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s reader: building the request: %w", e.cfg.Service, err)
	}
	req.Header.Set("Accept", "application/json")
	if e.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.cfg.APIKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the URL, key-bearing or not
		}
		return nil, fmt.Errorf("%s reader: %s: %w", e.cfg.Service, u.Redacted(), errtext.Net(err))
	}
	defer resp.Body.Close()
	body, truncated, err := readLimited(resp.Body, e.cfg.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("%s reader: %s: reading the answer: %w", e.cfg.Service, u.Redacted(), errtext.Net(err))
	}
	if truncated {
		return nil, fmt.Errorf("%s reader: %s: the answer is larger than %d bytes", e.cfg.Service, u.Redacted(), e.cfg.MaxBytes)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("%s reader: %s: the service answered HTTP %d: %s", e.cfg.Service, u.Redacted(),
			resp.StatusCode, errtext.Scrub(e.redact(serviceError(body)), e.cfg.BaseURL))
	}
	switch e.cfg.Service {
	case ReaderJina:
		page, err = e.jinaPage(body, u)
	default:
		page, err = e.firecrawlPage(body, u)
	}
	if err != nil {
		return nil, fmt.Errorf("%s reader: %s: %w", e.cfg.Service, u.Redacted(), err)
	}
	return page, nil
}

// jinaPage reads Jina Reader's JSON answer
// {"code":200,"status":20000,"data":{"title","url","content",...}}.
func (e *ExternalReader) jinaPage(body []byte, u *url.URL) (*Page, error) {
	var r struct {
		Code int `json:"code"`
		Data *struct {
			Title         string `json:"title"`
			URL           string `json:"url"`
			Content       string `json:"content"`
			PublishedTime string `json:"publishedTime"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("the answer is not Jina Reader JSON: %w", err)
	}
	if r.Data == nil {
		return nil, fmt.Errorf("the answer has no data: %s", errtext.Scrub(e.redact(serviceError(body)), e.cfg.BaseURL))
	}
	return e.page(r.Data.Title, r.Data.URL, r.Data.Content, r.Data.PublishedTime, u)
}

// firecrawlPage reads Firecrawl's scrape answer
// {"success":true,"data":{"markdown","metadata":{"title","sourceURL","statusCode",...}}}.
func (e *ExternalReader) firecrawlPage(body []byte, u *url.URL) (*Page, error) {
	var r struct {
		Success bool   `json:"success"`
		Error   string `json:"error"`
		Data    *struct {
			Markdown string `json:"markdown"`
			Metadata struct {
				Title         string `json:"title"`
				SourceURL     string `json:"sourceURL"`
				URL           string `json:"url"`
				StatusCode    int    `json:"statusCode"`
				Error         string `json:"error"`
				PublishedTime string `json:"publishedTime"`
			} `json:"metadata"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("the answer is not Firecrawl JSON: %w", err)
	}
	if !r.Success || r.Data == nil {
		msg := r.Error
		if msg == "" {
			msg = "success is false"
		}
		return nil, fmt.Errorf("the scrape failed: %s", errtext.Scrub(e.redact(msg), e.cfg.BaseURL))
	}
	md := r.Data.Metadata
	if md.StatusCode != 0 && (md.StatusCode < 200 || md.StatusCode > 299) {
		return nil, &StatusError{URL: u.Redacted(), Status: md.StatusCode}
	}
	final := md.URL
	if final == "" {
		final = md.SourceURL
	}
	return e.page(md.Title, final, r.Data.Markdown, md.PublishedTime, u)
}

func (e *ExternalReader) page(title, final, content, published string, u *url.URL) (*Page, error) {
	md := tidyMarkdown(content)
	if md == "" {
		return nil, ErrNoContent
	}
	if final == "" {
		final = u.String()
	}
	p := &Page{
		URL:         final,
		Title:       cleanLine(title),
		ContentType: "text/markdown",
		Status:      http.StatusOK,
		Chars:       utf8.RuneCountInString(md),
	}
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(published)); err == nil {
		p.Published = t.Format("2006-01-02")
	}
	p.Truncated = p.setContent(md, e.cfg.MaxChars)
	return p, nil
}

// serviceError extracts the message of a reader service's error body
// (Jina: readableMessage or message; Firecrawl: error), or the body's start.
func serviceError(body []byte) string {
	var e struct {
		ReadableMessage string `json:"readableMessage"`
		Message         string `json:"message"`
		Error           string `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil {
		for _, s := range []string{e.ReadableMessage, e.Message, e.Error} {
			if s = strings.TrimSpace(s); s != "" {
				return oneLineClip(s, 300)
			}
		}
	}
	return oneLineClip(string(body), 200)
}

func oneLineClip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

func (e *ExternalReader) redact(s string) string {
	if e.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, e.cfg.APIKey, "[redacted]")
}

// CheckURL reports whether the fetcher's guard would let rawURL through
// before any connection: its scheme, literal addresses and metadata host
// names. (Connections are judged again when they are made.)
func (f *Fetcher) CheckURL(rawURL string) error {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return fmt.Errorf("fetch %q: not a valid URL: %w", rawURL, err)
	}
	if err := f.guard.CheckURL(u); err != nil {
		return fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	return nil
}
