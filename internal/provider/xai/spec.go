package xai

import "github.com/sova-ai/sova/internal/provider"

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
