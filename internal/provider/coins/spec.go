package coins

import (
	"fmt"

	"github.com/sova-ai/sova/internal/provider"
)

// The tools this package serves.
const (
	DataToolName           = "coin_data"
	OHLCToolName           = "coin_ohlc"
	DataByContractToolName = "coin_data_by_contract"
)

// Provider describes c (nil: its settings were refused) for the tool
// status.
func Provider(c *Client) provider.Spec {
	return provider.Spec{Name: "coins", Tools: []string{DataToolName, OHLCToolName, DataByContractToolName}, Status: func(string) provider.Status {
		st := provider.Status{Available: c != nil, Settings: []string{"COINGECKO_API_KEY", "SOVA_COINGECKO_URL", "SOVA_COINGECKO_PLAN"}}
		switch {
		case c == nil:
			st.Reason = "not configured"
		case c.Plan() != "":
			st.Provider = "coingecko (" + c.Plan() + ")"
		default:
			st.Provider = "coingecko"
			st.Note = "COINGECKO_API_KEY raises CoinGecko's rate limit"
		}
		return st
	}}
}

// Settings are the package's settings for the configuration to read.
func Settings() provider.Settings {
	c := &Config{}
	return provider.Settings{Name: "coins", Env: c, Check: func() []error {
		provider.TrimURL(&c.URL)
		provider.TrimSpace(&c.APIKey, &c.Plan)
		var bad error
		if _, err := New(*c); err != nil {
			bad = fmt.Errorf("CoinGecko settings (SOVA_COINGECKO_URL, SOVA_COINGECKO_PLAN): %w", err)
		}
		return provider.Errors(bad, provider.CheckPositive("SOVA_COINGECKO_TIMEOUT", c.Timeout))
	}}
}
