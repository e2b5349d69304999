package config

import (
	"strings"
	"testing"
	"time"
)

func TestRetrievalDefaults(t *testing.T) {
	cfg, err := FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SearchProvider != "auto" || cfg.SearchCacheTTL != time.Hour || cfg.PageCacheTTL != 24*time.Hour ||
		cfg.BalancedRerankTopK != 12 || cfg.BalancedScrapeTopN != 8 || cfg.BalancedIterations != 6 ||
		cfg.ReaderFallback != "" || cfg.ReaderMinChars != 100 || cfg.EmbedModel != "" ||
		cfg.EmbedThreshold != 0.2 || cfg.EmbedTopK != 50 || cfg.EmbedWeight != 0.7 || len(cfg.SearchLimits) != 0 {
		t.Errorf("defaults: %+v", cfg)
	}
}

func TestRetrievalSettings(t *testing.T) {
	cfg, err := FromEnv(map[string]string{
		"SOVA_SEARCH_LIMITS":   "SearXNG=2:1.5, brave=20:20",
		"SOVA_READER_FALLBACK": " Firecrawl ",
		"FIRECRAWL_API_KEY":    "fc-key",
		"JINA_API_KEY":         "jina-key",
		"SOVA_EMBED_MODEL":     " text-embedding-3-small ",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SearchLimits["searxng"] != "2:1.5" || cfg.SearchLimits["brave"] != "20:20" || len(cfg.SearchLimits) != 2 {
		t.Errorf("limits = %v", cfg.SearchLimits)
	}
	if cfg.ReaderFallback != "firecrawl" || cfg.ReaderAPIKey != "fc-key" || cfg.EmbedModel != "text-embedding-3-small" {
		t.Errorf("reader %q key %q, embed %q", cfg.ReaderFallback, cfg.ReaderAPIKey, cfg.EmbedModel)
	}
	cfg, _ = FromEnv(map[string]string{"SOVA_READER_FALLBACK": "jina", "JINA_API_KEY": "jina-key", "SOVA_READER_API_KEY": "explicit"})
	if cfg.ReaderAPIKey != "explicit" {
		t.Errorf("SOVA_READER_API_KEY must win, got %q", cfg.ReaderAPIKey)
	}
}

func TestRetrievalInvalid(t *testing.T) {
	tests := map[string]string{
		"SOVA_READER_FALLBACK":       "diffbot",
		"SOVA_READER_URL":            "reader.local",
		"SOVA_PAGE_CACHE_TTL":        "-1h",
		"SOVA_READER_TIMEOUT":        "0s",
		"SOVA_EMBED_THRESHOLD":       "1.5",
		"SOVA_EMBED_WEIGHT":          "0",
		"SOVA_EMBED_TOP_K":           "0",
		"SOVA_BALANCED_RERANK_TOP_K": "0",
		"SOVA_BALANCED_SCRAPE_TOP_N": "0",
	}
	for k, v := range tests {
		if _, err := FromEnv(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: err = %v, want one naming the variable", k, v, err)
		}
	}
}
