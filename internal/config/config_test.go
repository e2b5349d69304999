package config

import (
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	cfg, err := FromEnv(map[string]string{"HOME": "/home/ann"})
	if err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"addr", cfg.Addr, "127.0.0.1:8080"},
		{"data dir", cfg.DataDir, "/home/ann/.local/share/sova"},
		{"base url", cfg.LLMBaseURL, DefaultOpenAIURL},
		{"fast model", cfg.FastModel, cfg.Model},
		{"queries", cfg.DeepSearchQueries, 3},
		{"speed iterations", cfg.SpeedMaxIterations, 2},
		{"balanced iterations", cfg.BalancedIterations, 6},
		{"max results", cfg.DeepSearchMaxResults, 8},
		{"rerank top k", cfg.RerankTopK, 6},
		{"scrape top n", cfg.ScrapeTopN, 4},
		{"content chars", cfg.ContentMaxChars, 3000},
		{"chat max tokens", cfg.ChatMaxTokens, 16384},
		{"search timeout", cfg.SearchTimeout, 30 * time.Second},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func TestFallbacksAndLists(t *testing.T) {
	cfg, err := FromEnv(map[string]string{
		"OPENAI_API_KEY":              "sk-x",
		"OPENAI_BASE_URL":             "http://localhost:11434/v1",
		"SOVA_MODEL":                  "llama3",
		"SOVA_SEARCH_PROVIDER":        " SearXNG ",
		"SOVA_SEARCH_FALLBACK":        "tavily, ",
		"SOVA_SEARCH_BLOCKED_DOMAINS": "pinterest.com, quora.com",
		"SOVA_FETCH_ALLOW_HOSTS":      "10.0.0.0/8,searx.lan",
		"XDG_DATA_HOME":               "/data",
	})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LLMAPIKey != "sk-x" || cfg.LLMBaseURL != "http://localhost:11434/v1" || cfg.FastModel != "llama3" {
		t.Errorf("fallbacks: %+v", cfg)
	}
	if cfg.SearchProvider != "searxng" || strings.Join(cfg.SearchFallback, "|") != "tavily" ||
		strings.Join(cfg.BlockedDomains, "|") != "pinterest.com|quora.com" || len(cfg.FetchAllowHosts) != 2 || cfg.DataDir != "/data/sova" {
		t.Errorf("lists: %+v", cfg)
	}
}

func TestInvalid(t *testing.T) {
	tests := map[string]string{
		"SOVA_DEEP_SEARCH_QUERIES": "0",
		"SOVA_RUN_TIMEOUT":         "soon",
		"SOVA_MAX_BODY_BYTES":      "10",
		"SOVA_LLM_MAX_RETRIES":     "-1",
	}
	for k, v := range tests {
		if _, err := FromEnv(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: err = %v, want one naming the variable", k, v, err)
		}
	}
}
