package places

import (
	"testing"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("SOVA_NOMINATIM_USER_AGENT", "Sova at example.org (admin@example.org)")
	cfg, err := env.ParseAs[Config]()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{
		NominatimURL: DefaultNominatimURL, OverpassURL: DefaultOverpassURL, UserAgent: "Sova at example.org (admin@example.org)",
		NominatimInterval: time.Second, GooglePlacesURL: DefaultGooglePlacesURL, Timeout: 30 * time.Second,
	}
	if cfg != want {
		t.Errorf("Config = %+v, want %+v", cfg, want)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider() != OpenStreetMap || c.nominatim.Options().UserAgent != want.UserAgent || c.overpass.Options().UserAgent != want.UserAgent {
		t.Errorf("client = %+v", c.nominatim.Options())
	}
	apitest.Documented(t, cfg, "../../../docs/configuration.md")
}
