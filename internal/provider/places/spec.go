package places

import (
	"fmt"

	"github.com/sova-ai/sova/internal/provider"
)

// ToolName is the tool this package serves.
const ToolName = "nearby_places_search"

// Provider describes c (nil: its settings were refused) for the tool
// status.
func Provider(c *Client) provider.Spec {
	return provider.Spec{Name: "places", Tools: []string{ToolName}, Status: func(string) provider.Status {
		st := provider.Status{Available: c != nil,
			Settings: []string{"GOOGLE_MAPS_API_KEY", "SOVA_NOMINATIM_URL", "SOVA_OVERPASS_URL", "SOVA_NOMINATIM_USER_AGENT"}}
		if c == nil {
			st.Reason = "not configured"
			return st
		}
		st.Provider = c.Provider()
		if st.Provider != "Google Places" {
			st.Note = "GOOGLE_MAPS_API_KEY switches the places to Google Places"
		}
		return st
	}}
}

// Settings are the package's settings for the configuration to read.
func Settings() provider.Settings {
	c := &Config{}
	return provider.Settings{Name: "places", Env: c, Check: func() []error {
		provider.TrimURL(&c.NominatimURL, &c.OverpassURL, &c.GooglePlacesURL)
		provider.TrimSpace(&c.GoogleMapsAPIKey)
		var bad error
		if _, err := New(*c); err != nil {
			bad = fmt.Errorf("places settings (SOVA_NOMINATIM_URL, SOVA_OVERPASS_URL…): %w", err)
		}
		return provider.Errors(bad, provider.CheckPositive("SOVA_PLACES_TIMEOUT", c.Timeout))
	}}
}
