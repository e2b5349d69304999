package markets

import "github.com/sova-ai/sova/internal/provider"

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
