// Package coins fetches the data of the crypto group's three tools (seed
// 000 §4.4) from CoinGecko: coin_data (GET /api/v3/coins/{id}), coin_ohlc
// (GET /api/v3/coins/{id}/ohlc) and coin_data_by_contract
// (GET /api/v3/coins/{platform}/contract/{address}).
//
// Without a key the public API is used. With COINGECKO_API_KEY the key is
// sent as x-cg-demo-api-key (Demo plan, public host) or x-cg-pro-api-key
// (paid plans, pro-api.coingecko.com). A key does not tell which plan it
// belongs to, so the plan is SOVA_COINGECKO_PLAN ("demo" or "pro"); when
// that is unset it is "pro" if SOVA_COINGECKO_URL names a pro-api.* host
// and "demo" otherwise.
package coins

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Public addresses and defaults.
const (
	DefaultURL    = "https://api.coingecko.com"
	DefaultProURL = "https://pro-api.coingecko.com"
	// DefaultTimeout bounds one call, its retry included.
	DefaultTimeout = 15 * time.Second
	// DefaultCurrency is the quote currency when a call names none.
	DefaultCurrency = "usd"
)

// Plans, for Config.Plan.
const (
	PlanDemo = "demo"
	PlanPro  = "pro"
)

const providerName = "CoinGecko"

// Config addresses CoinGecko. Its env tags are the settings that
// docs/configuration.md describes; a zero Config means the keyless public
// API.
type Config struct {
	// URL is the API host; paths start with /api/v3. SOVA_COINGECKO_URL,
	// default https://api.coingecko.com, or https://pro-api.coingecko.com
	// on the Pro plan.
	URL string `env:"SOVA_COINGECKO_URL"`
	// APIKey is a Demo or Pro key; empty uses the public API.
	// COINGECKO_API_KEY.
	APIKey string `env:"COINGECKO_API_KEY"`
	// Plan is "demo" or "pro", which decides the key's header and the
	// default host; empty means "pro" when URL's host starts with
	// "pro-api.", else "demo". SOVA_COINGECKO_PLAN.
	Plan string `env:"SOVA_COINGECKO_PLAN"`
	// Timeout bounds one call, its retry included. SOVA_COINGECKO_TIMEOUT,
	// default 15s.
	Timeout time.Duration `env:"SOVA_COINGECKO_TIMEOUT" envDefault:"15s"`

	// RetryBackoff is the pause before retrying a 5xx answer or a network
	// failure; 0 means 500ms, negative turns the retry off.
	RetryBackoff time.Duration
}

// Errors to test with errors.Is. Every error is an *Error.
var (
	ErrRateLimited  = apiclient.ErrRateLimited  // HTTP 429
	ErrNotFound     = apiclient.ErrNotFound     // unknown coin or contract
	ErrInvalidInput = apiclient.ErrInvalidInput // rejected before any request
)

// Error is a failed call; it names CoinGecko and the HTTP status, never the
// key.
type Error = apiclient.Error

// Client calls CoinGecko. It is safe for concurrent use.
type Client struct {
	api    *apiclient.Client
	base   string      // scheme://host, without /api/v3
	header http.Header // the key's header; empty without a key
	plan   string      // "", PlanDemo or PlanPro
}

// New returns a Client for cfg. It fails on an unknown plan or a URL that
// is not an absolute http(s) address.
func New(cfg Config) (*Client, error) {
	key := strings.TrimSpace(cfg.APIKey)
	plan := strings.ToLower(strings.TrimSpace(cfg.Plan))
	switch plan {
	case "", PlanDemo, PlanPro:
	default:
		return nil, apiclient.Invalid(providerName, "SOVA_COINGECKO_PLAN=%s is not a plan (use demo or pro)", cfg.Plan)
	}
	if plan == "" {
		plan = PlanDemo
		if u, err := url.Parse(strings.TrimSpace(cfg.URL)); err == nil && strings.HasPrefix(u.Hostname(), "pro-api.") {
			plan = PlanPro
		}
	}
	def := DefaultURL
	if plan == PlanPro && key != "" {
		def = DefaultProURL
	}
	base, err := apiclient.BaseURL("SOVA_COINGECKO_URL", cfg.URL, def)
	if err != nil {
		return nil, err
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &Client{base: base, header: http.Header{}}
	if key != "" {
		c.plan = plan
		header := "x-cg-demo-api-key"
		if plan == PlanPro {
			header = "x-cg-pro-api-key"
		}
		c.header.Set(header, key)
	}
	c.api = apiclient.New(apiclient.Options{Bases: []string{cfg.URL},
		Provider:     providerName,
		Timeout:      timeout,
		RetryBackoff: cfg.RetryBackoff,
		Secrets:      []string{key},
		Hint:         c.hint,
	})
	return c, nil
}

// getJSON calls GET path?query on CoinGecko with the key's header.
func (c *Client) getJSON(ctx context.Context, path string, query url.Values, out any) error {
	return c.api.GetJSON(ctx, c.base+path+"?"+query.Encode(), c.header, out)
}

// Plan returns "demo" or "pro" when a key is used, "" for the public API.
func (c *Client) Plan() string { return c.plan }

func (c *Client) hint(status int) string {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden:
		if c.plan == "" {
			return "the public API may need a key: set COINGECKO_API_KEY"
		}
		return "check COINGECKO_API_KEY, and that SOVA_COINGECKO_PLAN=" + c.plan + " matches the key's plan"
	case http.StatusTooManyRequests:
		if c.plan == "" {
			return "the keyless public API allows few calls a minute; a free Demo key (COINGECKO_API_KEY) raises the limit"
		}
	}
	return ""
}
