package reddit

import "github.com/sova-ai/sova/internal/provider"

// ToolName is the tool this package serves.
const ToolName = "reddit_search"

// Provider describes c (nil: not configured) for the tool status.
func Provider(c *Client) provider.Spec {
	return provider.Spec{Name: "reddit", Tools: []string{ToolName}, Status: func(string) provider.Status {
		st := provider.Status{Available: c != nil, Settings: []string{"TAVILY_API_KEY", "SOVA_REDDIT_URL", "SOVA_REDDIT_USER_AGENT"}}
		switch {
		case c == nil:
		case c.HasTavily():
			st.Provider = "tavily"
		default:
			st.Provider = "reddit"
			st.Note = "TAVILY_API_KEY switches to Tavily limited to reddit.com (Reddit often refuses server addresses)"
		}
		return st
	}}
}

// Settings are the package's settings for the configuration to read.
func Settings() provider.Settings {
	c := &Config{}
	return provider.Settings{Name: "reddit", Env: c, Check: func() []error {
		provider.TrimURL(&c.RedditURL, &c.TavilyURL)
		provider.TrimSpace(&c.TavilyAPIKey)
		return provider.Errors(provider.CheckURL("SOVA_REDDIT_URL", c.RedditURL))
	}}
}
