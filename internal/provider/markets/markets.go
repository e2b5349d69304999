// Package markets fetches the data of the stocks group's tools (seed 000
// §1.2): price charts from Yahoo Finance for stock_chart and exchange rates
// from Frankfurter for currency_converter. Neither service needs a key.
package markets

import (
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Public addresses used when a Config leaves a URL empty.
const (
	DefaultYahooFinanceURL = "https://query1.finance.yahoo.com"
	DefaultFrankfurterURL  = "https://api.frankfurter.app"
	DefaultTimeout         = 15 * time.Second
)

// yahooUserAgent is sent to Yahoo Finance, which refuses (429) many
// requests that do not look like they come from a browser.
const yahooUserAgent = "Mozilla/5.0 (compatible; Sova/1.0; +https://github.com/sova-ai/sova)"

// Config addresses the providers. Its env tags are the settings that
// docs/configuration.md describes; a zero Config means the public services.
type Config struct {
	// YahooFinanceURL is the base of GET /v8/finance/chart/{symbol}.
	// SOVA_YAHOO_FINANCE_URL, default https://query1.finance.yahoo.com.
	YahooFinanceURL string `env:"SOVA_YAHOO_FINANCE_URL" envDefault:"https://query1.finance.yahoo.com"`
	// FrankfurterURL is the base of GET /latest?from=&to=&amount= (a
	// self-hosted Frankfurter, or https://api.frankfurter.dev/v1).
	// SOVA_FRANKFURTER_URL, default https://api.frankfurter.app.
	FrankfurterURL string `env:"SOVA_FRANKFURTER_URL" envDefault:"https://api.frankfurter.app"`
	// Timeout bounds one call, its retry included. SOVA_MARKETS_TIMEOUT,
	// default 15s.
	Timeout time.Duration `env:"SOVA_MARKETS_TIMEOUT" envDefault:"15s"`

	// RetryBackoff is the pause before retrying a 5xx answer or a network
	// failure; 0 means 500ms, negative turns the retry off.
	RetryBackoff time.Duration
}

// Errors to test with errors.Is. Every error is an *Error.
var (
	ErrRateLimited  = apiclient.ErrRateLimited  // HTTP 429
	ErrNotFound     = apiclient.ErrNotFound     // unknown symbol or currency
	ErrInvalidInput = apiclient.ErrInvalidInput // rejected before any request
)

// Error is a failed call; it names the provider and the HTTP status.
type Error = apiclient.Error

// Provider names, as they appear in errors.
const (
	yahooName       = "Yahoo Finance"
	frankfurterName = "Frankfurter"
)

// Client fetches charts and exchange rates. It is safe for concurrent use.
type Client struct {
	yahooURL       string
	frankfurterURL string
	yahoo          *apiclient.Client
	frankfurter    *apiclient.Client
}

// New returns a Client for cfg. It fails when a URL is not an absolute
// http(s) address.
func New(cfg Config) (*Client, error) {
	yahooURL, err := apiclient.BaseURL("SOVA_YAHOO_FINANCE_URL", cfg.YahooFinanceURL, DefaultYahooFinanceURL)
	if err != nil {
		return nil, err
	}
	frankfurterURL, err := apiclient.BaseURL("SOVA_FRANKFURTER_URL", cfg.FrankfurterURL, DefaultFrankfurterURL)
	if err != nil {
		return nil, err
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{
		yahooURL:       yahooURL,
		frankfurterURL: frankfurterURL,
		yahoo: apiclient.New(apiclient.Options{Bases: []string{yahooURL},
			Provider: yahooName, Timeout: timeout, RetryBackoff: cfg.RetryBackoff,
			UserAgent: yahooUserAgent, Describe: describeYahoo,
		}),
		frankfurter: apiclient.New(apiclient.Options{Bases: []string{frankfurterURL}, Provider: frankfurterName, Timeout: timeout, RetryBackoff: cfg.RetryBackoff}),
	}, nil
}

func orDefault(s, def string) string {
	if s = strings.TrimSpace(s); s == "" {
		return def
	}
	return s
}
