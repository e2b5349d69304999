package config

import (
	"fmt"
	"net/url"
	"strings"
)

// normalizeGroups tidies the settings of the search groups' providers:
// base URLs without a trailing slash, keys trimmed, and
// SOVA_ARXIV_INTERVAL=0 as no pause between arXiv requests.
func (c *Config) normalizeGroups() {
	for _, p := range []*string{&c.Academic.OpenAlexURL, &c.Academic.ArxivURL, &c.Academic.ExaURL,
		&c.YouTube.YouTubeURL, &c.YouTube.InvidiousURL, &c.Reddit.RedditURL, &c.Reddit.TavilyURL, &c.XAI.URL} {
		*p = strings.TrimRight(strings.TrimSpace(*p), "/")
	}
	for _, p := range []*string{&c.Academic.OpenAlexAPIKey, &c.Academic.ExaAPIKey, &c.YouTube.APIKey,
		&c.Reddit.TavilyAPIKey, &c.XAI.APIKey, &c.XAI.Model} {
		*p = strings.TrimSpace(*p)
	}
	if c.Academic.ArxivInterval == 0 {
		c.Academic.ArxivInterval = -1 // the package reads 0 as its default
	}
}

// validateGroups reports provider settings a person has to fix.
func (c *Config) validateGroups() []error {
	var errs []error
	urls := []struct{ name, value string }{
		{"SOVA_OPENALEX_URL", c.Academic.OpenAlexURL},
		{"SOVA_ARXIV_URL", c.Academic.ArxivURL},
		{"SOVA_YOUTUBE_URL", c.YouTube.YouTubeURL},
		{"SOVA_INVIDIOUS_URL", c.YouTube.InvidiousURL},
		{"SOVA_REDDIT_URL", c.Reddit.RedditURL},
		{"SOVA_XAI_URL", c.XAI.URL},
	}
	for _, u := range urls {
		if p, err := url.Parse(u.value); err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			errs = append(errs, fmt.Errorf("%s=%q is not an http(s) URL", u.name, u.value))
		}
	}
	if c.Academic.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("SOVA_PROVIDER_TIMEOUT must be positive, got %s", c.Academic.Timeout))
	}
	if c.Academic.ArxivInterval < -1 {
		errs = append(errs, fmt.Errorf("SOVA_ARXIV_INTERVAL must not be negative (0: no pause), got %s", c.Academic.ArxivInterval))
	}
	if c.XAI.Model == "" {
		errs = append(errs, fmt.Errorf("SOVA_XAI_MODEL must not be empty"))
	}
	return errs
}
