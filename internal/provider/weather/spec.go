package weather

import (
	"fmt"

	"github.com/sova-ai/sova/internal/provider"
)

// ToolName is the tool this package serves.
const ToolName = "get_weather_data"

// Provider describes c (nil: its settings were refused) for the tool
// status.
func Provider(c *Client) provider.Spec {
	return provider.Spec{Name: "weather", Tools: []string{ToolName}, Status: func(string) provider.Status {
		st := provider.Status{Available: c != nil,
			Settings: []string{"OPENWEATHER_API_KEY", "SOVA_OPEN_METEO_URL", "SOVA_OPEN_METEO_GEOCODING_URL", "SOVA_OPENWEATHER_URL"}}
		if c == nil {
			st.Reason = "not configured"
			return st
		}
		st.Provider = c.Provider()
		if st.Provider != "OpenWeather" {
			st.Note = "OPENWEATHER_API_KEY switches to OpenWeather"
		}
		return st
	}}
}

// Settings are the package's settings for the configuration to read.
func Settings() provider.Settings {
	c := &Config{}
	return provider.Settings{Name: "weather", Env: c, Check: func() []error {
		provider.TrimURL(&c.OpenMeteoURL, &c.OpenMeteoGeocodingURL, &c.OpenWeatherURL)
		provider.TrimSpace(&c.OpenWeatherAPIKey)
		var bad error
		if _, err := New(*c); err != nil {
			bad = fmt.Errorf("weather settings (SOVA_OPEN_METEO_URL, SOVA_OPENWEATHER_URL…): %w", err)
		}
		return provider.Errors(bad, provider.CheckPositive("SOVA_WEATHER_TIMEOUT", c.Timeout))
	}}
}
