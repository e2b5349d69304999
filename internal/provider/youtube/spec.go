package youtube

import "github.com/sova-ai/sova/internal/provider"

// ToolName is the tool this package serves.
const ToolName = "youtube_search"

// Provider describes c (nil: not configured) for the tool status.
func Provider(c *Client) provider.Spec {
	return provider.Spec{Name: "youtube", Tools: []string{ToolName}, Status: func(string) provider.Status {
		st := provider.Status{Available: c != nil, Settings: []string{"YOUTUBE_API_KEY", "SOVA_YOUTUBE_URL", "SOVA_INVIDIOUS_URL"}}
		switch {
		case c == nil:
		case c.HasKey():
			st.Provider = "youtube+invidious"
		default:
			st.Provider = "invidious"
			st.Note = "YOUTUBE_API_KEY switches the search to the YouTube Data API (transcripts stay with Invidious)"
		}
		return st
	}}
}

// Settings are the package's settings for the configuration to read
// (SOVA_PROVIDER_TIMEOUT is checked with the academic search's).
func Settings() provider.Settings {
	c := &Config{}
	return provider.Settings{Name: "youtube", Env: c, Check: func() []error {
		provider.TrimURL(&c.YouTubeURL, &c.InvidiousURL)
		provider.TrimSpace(&c.APIKey)
		return provider.Errors(provider.CheckURL("SOVA_YOUTUBE_URL", c.YouTubeURL), provider.CheckURL("SOVA_INVIDIOUS_URL", c.InvidiousURL))
	}}
}
