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
