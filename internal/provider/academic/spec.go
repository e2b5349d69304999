package academic

import (
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/provider"
)

// ToolName is the tool this package serves.
const ToolName = "academic_search"

// Provider describes s (nil: not configured) for the tool status.
func Provider(s Searcher) provider.Spec {
	return provider.Spec{Name: "academic", Tools: []string{ToolName}, Status: func(string) provider.Status {
		st := provider.Status{Available: s != nil,
			Settings: []string{"EXA_API_KEY", "SOVA_OPENALEX_URL", "OPENALEX_API_KEY", "SOVA_ARXIV_URL"}}
		if s != nil {
			st.Provider = s.Name()
			if !strings.Contains(st.Provider, "exa") {
				st.Note = "EXA_API_KEY switches to Exa's research-paper search"
			}
		}
		return st
	}}
}

// Settings are the package's settings for the configuration to read.
func Settings() provider.Settings {
	c := &Config{}
	return provider.Settings{Name: "academic", Env: c, Check: func() []error {
		provider.TrimURL(&c.OpenAlexURL, &c.ArxivURL, &c.ExaURL)
		provider.TrimSpace(&c.OpenAlexAPIKey, &c.ExaAPIKey)
		if c.ArxivInterval == 0 {
			c.ArxivInterval = -1 // New reads 0 as its default; the setting's 0 means no pause
		}
		var errs []error
		for _, u := range []struct{ name, value string }{{"SOVA_OPENALEX_URL", c.OpenAlexURL}, {"SOVA_ARXIV_URL", c.ArxivURL}} {
			if err := provider.CheckURL(u.name, u.value); err != nil {
				errs = append(errs, err)
			}
		}
		if err := provider.CheckPositive("SOVA_PROVIDER_TIMEOUT", c.Timeout); err != nil {
			errs = append(errs, err)
		}
		if c.ArxivInterval < -1 {
			errs = append(errs, fmt.Errorf("SOVA_ARXIV_INTERVAL must not be negative (0: no pause), got %s", c.ArxivInterval))
		}
		return errs
	}}
}
