package weather

import (
	"testing"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("SOVA_WEATHER_TIMEOUT", "5s")
	cfg, err := env.ParseAs[Config]()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{OpenMeteoURL: DefaultOpenMeteoURL, OpenMeteoGeocodingURL: DefaultOpenMeteoGeocodingURL, OpenWeatherURL: DefaultOpenWeatherURL, Timeout: 5 * time.Second}
	if cfg != want {
		t.Errorf("Config = %+v, want %+v", cfg, want)
	}
	c := newTestClient(t, cfg)
	if c.Provider() != OpenMeteo || c.forecast.Options().Timeout != 5*time.Second {
		t.Errorf("client = %s, timeout %v", c.Provider(), c.forecast.Options().Timeout)
	}
	apitest.Documented(t, cfg, "../../../docs/configuration.md")
}
