package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/provider/coins"
	"github.com/sova-ai/sova/internal/provider/flights"
	"github.com/sova-ai/sova/internal/provider/markets"
	"github.com/sova-ai/sova/internal/provider/movies"
	"github.com/sova-ai/sova/internal/provider/places"
	"github.com/sova-ai/sova/internal/provider/weather"
)

// normalizeGroups tidies the settings of the search groups' providers:
// base URLs without a trailing slash, keys trimmed, and
// SOVA_ARXIV_INTERVAL=0 as no pause between arXiv requests.
func (c *Config) normalizeGroups() {
	for _, p := range []*string{&c.Academic.OpenAlexURL, &c.Academic.ArxivURL, &c.Academic.ExaURL,
		&c.YouTube.YouTubeURL, &c.YouTube.InvidiousURL, &c.Reddit.RedditURL, &c.Reddit.TavilyURL, &c.XAI.URL,
		&c.Weather.OpenMeteoURL, &c.Weather.OpenMeteoGeocodingURL, &c.Weather.OpenWeatherURL,
		&c.Places.NominatimURL, &c.Places.OverpassURL, &c.Places.GooglePlacesURL,
		&c.Markets.YahooFinanceURL, &c.Markets.FrankfurterURL, &c.Coins.URL,
		&c.Flights.URL, &c.Movies.URL, &c.Movies.ImageURL} {
		*p = strings.TrimRight(strings.TrimSpace(*p), "/")
	}
	for _, p := range []*string{&c.Academic.OpenAlexAPIKey, &c.Academic.ExaAPIKey, &c.YouTube.APIKey,
		&c.Reddit.TavilyAPIKey, &c.XAI.APIKey, &c.XAI.Model,
		&c.Weather.OpenWeatherAPIKey, &c.Places.GoogleMapsAPIKey, &c.Coins.APIKey, &c.Coins.Plan,
		&c.Flights.APIKey, &c.Movies.APIKey} {
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
	// The data tools' packages check their own addresses and plan.
	if _, err := weather.New(c.Weather); err != nil {
		errs = append(errs, fmt.Errorf("weather settings (SOVA_OPEN_METEO_URL, SOVA_OPENWEATHER_URL…): %w", err))
	}
	if _, err := places.New(c.Places); err != nil {
		errs = append(errs, fmt.Errorf("places settings (SOVA_NOMINATIM_URL, SOVA_OVERPASS_URL…): %w", err))
	}
	if _, err := markets.New(c.Markets); err != nil {
		errs = append(errs, fmt.Errorf("markets settings (SOVA_YAHOO_FINANCE_URL, SOVA_FRANKFURTER_URL): %w", err))
	}
	if _, err := coins.New(c.Coins); err != nil {
		errs = append(errs, fmt.Errorf("CoinGecko settings (SOVA_COINGECKO_URL, SOVA_COINGECKO_PLAN): %w", err))
	}
	if _, err := flights.New(c.Flights); err != nil {
		errs = append(errs, err)
	}
	if _, err := movies.New(c.Movies); err != nil {
		errs = append(errs, err)
	}
	for _, d := range []struct {
		name  string
		value time.Duration
	}{
		{"SOVA_WEATHER_TIMEOUT", c.Weather.Timeout}, {"SOVA_PLACES_TIMEOUT", c.Places.Timeout},
		{"SOVA_MARKETS_TIMEOUT", c.Markets.Timeout}, {"SOVA_COINGECKO_TIMEOUT", c.Coins.Timeout},
		{"SOVA_AVIATIONSTACK_TIMEOUT", c.Flights.Timeout}, {"SOVA_TMDB_TIMEOUT", c.Movies.Timeout},
	} {
		if d.value <= 0 {
			errs = append(errs, fmt.Errorf("%s must be positive, got %s", d.name, d.value))
		}
	}
	if c.XAI.Model == "" {
		errs = append(errs, fmt.Errorf("SOVA_XAI_MODEL must not be empty"))
	}
	return errs
}
