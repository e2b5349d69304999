package movies

import "github.com/sova-ai/sova/internal/provider"

// ToolName is the tool this package serves.
const ToolName = "movie_or_tv_search"

// Provider describes c (nil: no TMDB_API_KEY) for the tool status.
func Provider(c *Client) provider.Spec {
	return provider.Spec{Name: "movies", Tools: []string{ToolName}, Status: func(string) provider.Status {
		st := provider.Status{Available: c != nil, Settings: []string{"TMDB_API_KEY", "SOVA_TMDB_URL"}}
		if c != nil {
			st.Provider = "tmdb"
		}
		return st
	}}
}

// Settings are the package's settings for the configuration to read.
func Settings() provider.Settings {
	c := &Config{}
	return provider.Settings{Name: "movies", Env: c, Check: func() []error {
		provider.TrimURL(&c.URL, &c.ImageURL)
		provider.TrimSpace(&c.APIKey)
		_, err := New(*c)
		return provider.Errors(err, provider.CheckPositive("SOVA_TMDB_TIMEOUT", c.Timeout))
	}}
}
