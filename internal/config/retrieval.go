package config

import (
	"fmt"
	"net/url"
	"strings"
)

// normalizeRetrieval tidies the retrieval settings after parsing: names
// lower-cased, the reader key taken from the conventional variable of the
// chosen service when SOVA_READER_API_KEY is unset.
func (c *Config) normalizeRetrieval() {
	c.ReaderFallback = strings.ToLower(strings.TrimSpace(c.ReaderFallback))
	if c.ReaderAPIKey == "" {
		switch c.ReaderFallback {
		case "jina":
			c.ReaderAPIKey = c.JinaAPIKey
		case "firecrawl":
			c.ReaderAPIKey = c.FirecrawlAPIKey
		}
	}
	limits := make(map[string]string, len(c.SearchLimits))
	for k, v := range c.SearchLimits {
		if k = strings.ToLower(strings.TrimSpace(k)); k != "" {
			limits[k] = strings.TrimSpace(v)
		}
	}
	c.SearchLimits = limits
	c.EmbedModel = strings.TrimSpace(c.EmbedModel)
}

// validateRetrieval reports retrieval settings a person has to fix.
// SOVA_SEARCH_LIMITS values are checked where they are used (app), which
// knows the provider names.
func (c *Config) validateRetrieval() []error {
	var errs []error
	switch c.ReaderFallback {
	case "", "jina", "firecrawl":
	default:
		errs = append(errs, fmt.Errorf("SOVA_READER_FALLBACK=%q: use jina, firecrawl or leave it empty", c.ReaderFallback))
	}
	if c.ReaderURL != "" {
		if u, err := url.Parse(c.ReaderURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			errs = append(errs, fmt.Errorf("SOVA_READER_URL=%q is not an http(s) URL", c.ReaderURL))
		}
	}
	if c.SearchCacheTTL < 0 || c.PageCacheTTL < 0 {
		errs = append(errs, fmt.Errorf("SOVA_SEARCH_CACHE_TTL and SOVA_PAGE_CACHE_TTL must not be negative (0 turns the cache off), got %s and %s",
			c.SearchCacheTTL, c.PageCacheTTL))
	}
	if c.ReaderTimeout <= 0 {
		errs = append(errs, fmt.Errorf("SOVA_READER_TIMEOUT must be positive, got %s", c.ReaderTimeout))
	}
	if c.ReaderMinChars < 0 {
		errs = append(errs, fmt.Errorf("SOVA_READER_MIN_CHARS must not be negative, got %d", c.ReaderMinChars))
	}
	if c.EmbedThreshold < -1 || c.EmbedThreshold > 1 {
		errs = append(errs, fmt.Errorf("SOVA_EMBED_THRESHOLD is a cosine similarity between -1 and 1, got %g", c.EmbedThreshold))
	}
	if c.EmbedWeight <= 0 || c.EmbedWeight > 1 {
		errs = append(errs, fmt.Errorf("SOVA_EMBED_WEIGHT is the embedding ranking's share, above 0 and at most 1, got %g", c.EmbedWeight))
	}
	for name, v := range map[string]int{
		"SOVA_EMBED_TOP_K":         c.EmbedTopK,
		"SOVA_DEEP_SEARCH_SOURCES": c.BalancedRerankTopK,
		"SOVA_DEEP_SEARCH_PAGES":   c.BalancedScrapeTopN,
	} {
		if v < 1 {
			errs = append(errs, fmt.Errorf("%s must be at least 1, got %d", settingName(name), v))
		}
	}
	return errs
}
