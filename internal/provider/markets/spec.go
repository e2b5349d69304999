package markets

import (
	"fmt"

	"github.com/sova-ai/sova/internal/provider"
)

// The tools this package serves.
const (
	ChartToolName    = "stock_chart"
	CurrencyToolName = "currency_converter"
)

// Provider describes c (nil: its settings were refused) for the tool
// status.
func Provider(c *Client) provider.Spec {
	return provider.Spec{Name: "markets", Tools: []string{ChartToolName, CurrencyToolName}, Status: func(tool string) provider.Status {
		st := provider.Status{Available: c != nil, Settings: []string{"SOVA_YAHOO_FINANCE_URL"}, Provider: "yahoo finance"}
		if tool == CurrencyToolName {
			st.Settings, st.Provider = []string{"SOVA_FRANKFURTER_URL"}, "frankfurter"
		}
		if c == nil {
			st.Provider, st.Reason = "", "not configured"
		}
		return st
	}}
}

// Settings are the package's settings for the configuration to read.
func Settings() provider.Settings {
	c := &Config{}
	return provider.Settings{Name: "markets", Env: c, Check: func() []error {
		provider.TrimURL(&c.YahooFinanceURL, &c.FrankfurterURL)
		var bad error
		if _, err := New(*c); err != nil {
			bad = fmt.Errorf("markets settings (SOVA_YAHOO_FINANCE_URL, SOVA_FRANKFURTER_URL): %w", err)
		}
		return provider.Errors(bad, provider.CheckPositive("SOVA_MARKETS_TIMEOUT", c.Timeout))
	}}
}
