package config

import (
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/provider"
	"github.com/sova-ai/sova/internal/provider/academic"
	"github.com/sova-ai/sova/internal/provider/coins"
	"github.com/sova-ai/sova/internal/provider/markets"
	"github.com/sova-ai/sova/internal/provider/places"
	"github.com/sova-ai/sova/internal/provider/reddit"
	"github.com/sova-ai/sova/internal/provider/weather"
	"github.com/sova-ai/sova/internal/provider/xai"
	"github.com/sova-ai/sova/internal/provider/youtube"
)

// get is the provider settings of type T the configuration read.
func get[T any](t *testing.T, cfg *Config) T {
	t.Helper()
	v, ok := provider.Get[T](cfg.Providers)
	if !ok {
		t.Fatalf("no %T among the provider settings", v)
	}
	return v
}

func TestGroupProviderDefaults(t *testing.T) {
	cfg, err := FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	a, y, r, x := get[academic.Config](t, cfg), get[youtube.Config](t, cfg), get[reddit.Config](t, cfg), get[xai.Config](t, cfg)
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
	a, y, r, x := get[academic.Config](t, cfg), get[youtube.Config](t, cfg), get[reddit.Config](t, cfg), get[xai.Config](t, cfg)
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

func TestDataProviderSettings(t *testing.T) {
	cfg, err := FromEnv(map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if get[weather.Config](t, cfg).OpenMeteoURL != "https://api.open-meteo.com" || get[places.Config](t, cfg).NominatimURL != "https://nominatim.openstreetmap.org" ||
		get[markets.Config](t, cfg).YahooFinanceURL != "https://query1.finance.yahoo.com" || get[coins.Config](t, cfg).Timeout != 15*time.Second || get[coins.Config](t, cfg).APIKey != "" {
		t.Errorf("defaults: %+v %+v %+v %+v", get[weather.Config](t, cfg), get[places.Config](t, cfg), get[markets.Config](t, cfg), get[coins.Config](t, cfg))
	}
	cfg, err = FromEnv(map[string]string{
		"OPENWEATHER_API_KEY": " ow ", "SOVA_OPEN_METEO_URL": "http://meteo.local/", "GOOGLE_MAPS_API_KEY": "gm",
		"SOVA_FRANKFURTER_URL": "http://fx.local/v1/", "COINGECKO_API_KEY": "cg", "SOVA_COINGECKO_PLAN": "pro",
		"SOVA_MARKETS_TIMEOUT": "3s",
	})
	if err != nil {
		t.Fatal(err)
	}
	if get[weather.Config](t, cfg).OpenWeatherAPIKey != "ow" || get[weather.Config](t, cfg).OpenMeteoURL != "http://meteo.local" || get[places.Config](t, cfg).GoogleMapsAPIKey != "gm" ||
		get[markets.Config](t, cfg).FrankfurterURL != "http://fx.local/v1" || get[markets.Config](t, cfg).Timeout != 3*time.Second || get[coins.Config](t, cfg).APIKey != "cg" || get[coins.Config](t, cfg).Plan != "pro" {
		t.Errorf("settings: %+v %+v %+v %+v", get[weather.Config](t, cfg), get[places.Config](t, cfg), get[markets.Config](t, cfg), get[coins.Config](t, cfg))
	}
	for k, v := range map[string]string{"SOVA_YAHOO_FINANCE_URL": "ftp://x", "SOVA_COINGECKO_PLAN": "gold", "SOVA_WEATHER_TIMEOUT": "0s"} {
		if _, err := FromEnv(map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), k) && !strings.Contains(err.Error(), strings.ToLower(v)) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}

// A provider setting that does not parse is named with its value, as the
// configuration's own settings are.
func TestProviderSettingUnparsable(t *testing.T) {
	for k, v := range map[string]string{"SOVA_WEATHER_TIMEOUT": "soon", "SOVA_PROVIDER_TIMEOUT": "30", "SOVA_NOMINATIM_INTERVAL": "x"} {
		_, err := FromEnv(map[string]string{k: v})
		if err == nil || !strings.Contains(err.Error(), k+`="`+v+`"`) {
			t.Errorf("%s=%s: %v", k, v, err)
		}
	}
}
