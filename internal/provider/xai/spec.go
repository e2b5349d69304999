package xai

import (
	"errors"

	"github.com/sova-ai/sova/internal/provider"
)

// ToolName is the tool this package serves.
const ToolName = "x_search"

// Provider describes c (nil: no XAI_API_KEY) for the tool status.
func Provider(c *Client) provider.Spec {
	return provider.Spec{Name: "xai", Tools: []string{ToolName}, Status: func(string) provider.Status {
		st := provider.Status{Available: c != nil, Settings: []string{"XAI_API_KEY", "SOVA_XAI_URL", "SOVA_XAI_MODEL"}}
		if c != nil {
			st.Provider = "xai"
		}
		return st
	}}
}

// Settings are the package's settings for the configuration to read.
func Settings() provider.Settings {
	c := &Config{}
	return provider.Settings{Name: "xai", Env: c, Check: func() []error {
		provider.TrimURL(&c.URL)
		provider.TrimSpace(&c.APIKey, &c.Model)
		var empty error
		if c.Model == "" {
			empty = errors.New("SOVA_XAI_MODEL must not be empty")
		}
		return provider.Errors(provider.CheckURL("SOVA_XAI_URL", c.URL), empty)
	}}
}
