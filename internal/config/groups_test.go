package config

import (
	"strings"
	"testing"
	"time"
)

func TestGroupProviderDefaults(t *testing.T) {
	cfg, err := FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	a, y, r, x := cfg.Academic, cfg.YouTube, cfg.Reddit, cfg.XAI
	if a.OpenAlexURL != "https://api.openalex.org" || a.ArxivURL != "https://export.arxiv.org" || a.ArxivInterval != 3*time.Second ||
		a.Timeout != 30*time.Second || a.ExaURL != "https://api.exa.ai" || a.ExaAPIKey != "" {
		t.Errorf("academic: %+v", a)
	}
	if y.YouTubeURL != "https://www.googleapis.com/youtube/v3" || y.InvidiousURL != "https://inv.nadeko.net" || y.APIKey != "" || y.Timeout != 30*time.Second {
		t.Errorf("youtube: %+v", y)
	}
	if r.RedditURL != "https://www.reddit.com" || r.TavilyURL != "https://api.tavily.com" || r.UserAgent != "" {
		t.Errorf("reddit: %+v", r)
	}
	if x.URL != "https://api.x.ai/v1" || x.Model != "grok-4-fast-non-reasoning" || x.APIKey != "" {
		t.Errorf("xai: %+v", x)
	}
}

func TestGroupProviderSettings(t *testing.T) {
	cfg, err := FromEnv(map[string]string{
		"SOVA_OPENALEX_URL": "http://mirror.local/openalex/", "SOVA_ARXIV_URL": "http://mirror.local/arxiv", "SOVA_ARXIV_INTERVAL": "0",
		"OPENALEX_API_KEY": "oa", "EXA_API_KEY": "exa", "YOUTUBE_API_KEY": " yt ", "SOVA_YOUTUBE_URL": "http://yt.local",
		"SOVA_INVIDIOUS_URL": "http://inv.local/", "SOVA_REDDIT_URL": "http://reddit.local", "SOVA_REDDIT_USER_AGENT": "ua",
		"TAVILY_API_KEY": "tv", "XAI_API_KEY": "xk", "SOVA_XAI_URL": "http://xai.local/v1", "SOVA_XAI_MODEL": "grok-x",
		"SOVA_PROVIDER_TIMEOUT": "7s",
	})
	if err != nil {
		t.Fatal(err)
	}
	a, y, r, x := cfg.Academic, cfg.YouTube, cfg.Reddit, cfg.XAI
	if a.OpenAlexURL != "http://mirror.local/openalex" || a.ArxivInterval >= 0 || a.OpenAlexAPIKey != "oa" || a.ExaAPIKey != "exa" || a.Timeout != 7*time.Second {
		t.Errorf("academic: %+v", a)
	}
	if y.APIKey != "yt" || y.YouTubeURL != "http://yt.local" || y.InvidiousURL != "http://inv.local" || y.Timeout != 7*time.Second {
		t.Errorf("youtube: %+v", y)
	}
	if r.RedditURL != "http://reddit.local" || r.UserAgent != "ua" || r.TavilyAPIKey != "tv" || cfg.TavilyAPIKey != "tv" {
		t.Errorf("reddit: %+v", r)
	}
	if x.APIKey != "xk" || x.URL != "http://xai.local/v1" || x.Model != "grok-x" || x.Timeout != 7*time.Second {
		t.Errorf("xai: %+v", x)
	}
}

func TestGroupProviderInvalid(t *testing.T) {
	for k, v := range map[string]string{
		"SOVA_OPENALEX_URL":     "api.openalex.org",
		"SOVA_ARXIV_URL":        "ftp://arxiv.org",
		"SOVA_YOUTUBE_URL":      "youtube",
		"SOVA_INVIDIOUS_URL":    "inv",
		"SOVA_REDDIT_URL":       "reddit.com",
		"SOVA_XAI_URL":          "x.ai",
		"SOVA_PROVIDER_TIMEOUT": "0s",
		"SOVA_ARXIV_INTERVAL":   "-1s",
		"SOVA_XAI_MODEL":        " ",
	} {
		if _, err := FromEnv(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=%s: err = %v, want one naming the variable", k, v, err)
		}
	}
}
