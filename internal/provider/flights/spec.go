package flights

import "github.com/sova-ai/sova/internal/provider"

// ToolName is the tool this package serves.
const ToolName = "track_flight"

// Provider describes c (nil: no AVIATIONSTACK_API_KEY) for the tool
// status.
func Provider(c *Client) provider.Spec {
	return provider.Spec{Name: "flights", Tools: []string{ToolName}, Status: func(string) provider.Status {
		st := provider.Status{Available: c != nil, Settings: []string{"AVIATIONSTACK_API_KEY", "SOVA_AVIATIONSTACK_URL"}}
		if c != nil {
			st.Provider = "aviationstack"
		}
		return st
	}}
}

// Settings are the package's settings for the configuration to read.
func Settings() provider.Settings {
	c := &Config{}
	return provider.Settings{Name: "flights", Env: c, Check: func() []error {
		provider.TrimURL(&c.URL)
		provider.TrimSpace(&c.APIKey)
		_, err := New(*c)
		return provider.Errors(err, provider.CheckPositive("SOVA_AVIATIONSTACK_TIMEOUT", c.Timeout))
	}}
}
