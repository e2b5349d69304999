// Package weather fetches the data of the get_weather_data tool (seed 000
// §1.2): current conditions and a daily forecast for a place named in
// words or given by coordinates.
//
// Without a key it asks Open-Meteo, which needs none: the geocoding API
// (GET /v1/search) finds the place and GET /v1/forecast gives the weather.
// With OPENWEATHER_API_KEY it asks OpenWeather instead: GET /geo/1.0/direct
// and the 5-day, 3-hour GET /data/2.5/forecast, whose slots are folded into
// days. Both answer in the same types and units.
package weather

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Public addresses and defaults.
const (
	DefaultOpenMeteoURL          = "https://api.open-meteo.com"
	DefaultOpenMeteoGeocodingURL = "https://geocoding-api.open-meteo.com"
	DefaultOpenWeatherURL        = "https://api.openweathermap.org"
	DefaultTimeout               = 15 * time.Second
	// DefaultDays is the forecast length when a request names none.
	DefaultDays = 7
	// MaxDays is the longest forecast Open-Meteo gives; OpenWeather's
	// free forecast covers 5 days (6 dates, the first and last partial).
	MaxDays = 16
)

// Provider names, as Forecast.Provider and errors give them.
const (
	OpenMeteo   = "Open-Meteo"
	OpenWeather = "OpenWeather"
)

// Config addresses the providers. Its env tags are the settings that
// docs/configuration.md describes; a zero Config means keyless Open-Meteo.
type Config struct {
	// OpenMeteoURL is the base of GET /v1/forecast.
	// SOVA_OPEN_METEO_URL, default https://api.open-meteo.com.
	OpenMeteoURL string `env:"SOVA_OPEN_METEO_URL" envDefault:"https://api.open-meteo.com"`
	// OpenMeteoGeocodingURL is the base of GET /v1/search.
	// SOVA_OPEN_METEO_GEOCODING_URL, default https://geocoding-api.open-meteo.com.
	OpenMeteoGeocodingURL string `env:"SOVA_OPEN_METEO_GEOCODING_URL" envDefault:"https://geocoding-api.open-meteo.com"`
	// OpenWeatherAPIKey switches to OpenWeather. OPENWEATHER_API_KEY.
	OpenWeatherAPIKey string `env:"OPENWEATHER_API_KEY"`
	// OpenWeatherURL is the base of /geo/1.0/direct and /data/2.5/forecast.
	// SOVA_OPENWEATHER_URL, default https://api.openweathermap.org.
	OpenWeatherURL string `env:"SOVA_OPENWEATHER_URL" envDefault:"https://api.openweathermap.org"`
	// Timeout bounds one call, its retry included. SOVA_WEATHER_TIMEOUT,
	// default 15s.
	Timeout time.Duration `env:"SOVA_WEATHER_TIMEOUT" envDefault:"15s"`

	// RetryBackoff is the pause before retrying a 5xx answer or a network
	// failure; 0 means 500ms, negative turns the retry off.
	RetryBackoff time.Duration
}

// Errors to test with errors.Is. Every error is an *Error.
var (
	ErrRateLimited  = apiclient.ErrRateLimited  // HTTP 429
	ErrNotFound     = apiclient.ErrNotFound     // no place by that name
	ErrInvalidInput = apiclient.ErrInvalidInput // rejected before any request
)

// Error is a failed call; it names the provider and the HTTP status, never
// the key.
type Error = apiclient.Error

// Request asks for the weather at one place.
type Request struct {
	// Location is a place name ("Berlin", "Paris, France", "Москва");
	// it is geocoded unless Latitude and Longitude are both set.
	Location  string
	Latitude  *float64
	Longitude *float64
	// Language of place names and OpenWeather's descriptions: "en", "ru",
	// ...; "" means "en".
	Language string
	// Days of daily forecast, 1–MaxDays; 0 means DefaultDays.
	Days int
	// Units is "metric" (°C, km/h, mm; the default) or "imperial" (°F,
	// mph, inch).
	Units string
}

// Forecast is the weather at a place.
type Forecast struct {
	Provider string // OpenMeteo or OpenWeather
	Place    Place
	Timezone string // the place's IANA zone (Open-Meteo) or UTC offset (OpenWeather)
	Units    Units
	Current  Current
	Daily    []Day // from today, in the place's local dates
}

// Place is a geocoded location.
type Place struct {
	Name        string
	Region      string // first-level administrative area; may be empty
	Country     string
	CountryCode string // ISO 3166-1 alpha-2, e.g. "DE"
	Latitude    float64
	Longitude   float64
	Timezone    string // IANA zone when the geocoder gives one
	Population  int    // 0 when unknown
}

// Units names the units of a Forecast's figures.
type Units struct {
	Temperature   string // "°C" or "°F"
	WindSpeed     string // "km/h" or "mph"
	Precipitation string // "mm" or "inch"
}

// Current is the present conditions. On OpenWeather they are the first
// three-hour slot of the forecast.
type Current struct {
	Time          time.Time
	Temperature   float64
	FeelsLike     float64
	Humidity      int // percent
	WindSpeed     float64
	WindDirection int     // degrees, where the wind comes from
	Precipitation float64 // over the last interval
	// Code is the WMO weather code on Open-Meteo and the condition id on
	// OpenWeather; Description says it in words either way.
	Code        int
	Description string
}

// Day is one day of forecast.
type Day struct {
	Date                     string // YYYY-MM-DD, local
	TempMax                  float64
	TempMin                  float64
	Precipitation            float64 // the day's total
	PrecipitationProbability int     // percent, the day's highest; -1 when unknown
	WindSpeedMax             float64
	Code                     int // as in Current
	Description              string
}

// Client fetches forecasts. It is safe for concurrent use.
type Client struct {
	forecast     *apiclient.Client // Open-Meteo forecast
	geocoding    *apiclient.Client // Open-Meteo geocoding
	ow           *apiclient.Client // OpenWeather; nil without a key
	forecastURL  string
	geocodingURL string
	owURL        string
	owKey        string
}

// New returns a Client for cfg: OpenWeather when cfg has its key, else
// Open-Meteo. It fails when a URL is not an absolute http(s) address.
func New(cfg Config) (*Client, error) {
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	c := &Client{}
	key := strings.TrimSpace(cfg.OpenWeatherAPIKey)
	if key != "" {
		base, err := apiclient.BaseURL("SOVA_OPENWEATHER_URL", cfg.OpenWeatherURL, DefaultOpenWeatherURL)
		if err != nil {
			return nil, err
		}
		c.owURL, c.owKey = base, key
		c.ow = apiclient.New(apiclient.Options{Bases: []string{base},
			Provider: OpenWeather, Timeout: timeout, RetryBackoff: cfg.RetryBackoff, Secrets: []string{key},
			Hint: func(status int) string {
				if status == http.StatusUnauthorized {
					return "check OPENWEATHER_API_KEY; a new key takes up to a few hours to work"
				}
				return ""
			},
		})
		return c, nil
	}
	fc, err := apiclient.BaseURL("SOVA_OPEN_METEO_URL", cfg.OpenMeteoURL, DefaultOpenMeteoURL)
	if err != nil {
		return nil, err
	}
	geo, err := apiclient.BaseURL("SOVA_OPEN_METEO_GEOCODING_URL", cfg.OpenMeteoGeocodingURL, DefaultOpenMeteoGeocodingURL)
	if err != nil {
		return nil, err
	}
	c.forecastURL, c.geocodingURL = fc, geo
	c.forecast = apiclient.New(apiclient.Options{Bases: []string{fc}, Provider: OpenMeteo, Timeout: timeout, RetryBackoff: cfg.RetryBackoff})
	c.geocoding = apiclient.New(apiclient.Options{Bases: []string{geo}, Provider: OpenMeteo + " geocoding", Timeout: timeout, RetryBackoff: cfg.RetryBackoff})
	return c, nil
}

// Provider names the service that answers: OpenMeteo or OpenWeather.
func (c *Client) Provider() string {
	if c.ow != nil {
		return OpenWeather
	}
	return OpenMeteo
}

// Forecast returns the current weather and a daily forecast for r.
func (c *Client) Forecast(ctx context.Context, r Request) (*Forecast, error) {
	q, err := c.normalize(r)
	if err != nil {
		return nil, err
	}
	var place *Place
	if q.Latitude != nil {
		place = &Place{Latitude: *q.Latitude, Longitude: *q.Longitude, Name: q.Location}
	} else {
		place, err = c.Geocode(ctx, q.Location, q.Language)
		if err != nil {
			return nil, err
		}
	}
	if c.ow != nil {
		return c.openWeather(ctx, *place, q)
	}
	return c.openMeteo(ctx, *place, q)
}

// Geocode finds the place best matching name.
func (c *Client) Geocode(ctx context.Context, name, language string) (*Place, error) {
	name = strings.TrimSpace(name)
	if err := c.checkLocation(name); err != nil {
		return nil, err
	}
	lang, err := c.checkLanguage(language)
	if err != nil {
		return nil, err
	}
	if c.ow != nil {
		return c.owGeocode(ctx, name, lang)
	}
	return c.omGeocode(ctx, name, lang)
}

var languageRE = regexp.MustCompile(`^[a-z]{2,3}([-_][A-Za-z]{2,4})?$`)

func (c *Client) normalize(r Request) (Request, error) {
	q := r
	q.Location = strings.TrimSpace(r.Location)
	if (r.Latitude == nil) != (r.Longitude == nil) {
		return q, c.invalid("give both latitude and longitude, or neither")
	}
	if r.Latitude != nil {
		if err := c.checkCoordinates(*r.Latitude, *r.Longitude); err != nil {
			return q, err
		}
	} else if err := c.checkLocation(q.Location); err != nil {
		return q, err
	}
	lang, err := c.checkLanguage(r.Language)
	if err != nil {
		return q, err
	}
	q.Language = lang
	switch {
	case r.Days == 0:
		q.Days = DefaultDays
	case r.Days < 1 || r.Days > MaxDays:
		return q, c.invalid("days must be between 1 and %d, not %d", MaxDays, r.Days)
	}
	q.Units = strings.ToLower(strings.TrimSpace(r.Units))
	switch q.Units {
	case "":
		q.Units = "metric"
	case "metric", "imperial":
	default:
		return q, c.invalid("units %q: use metric or imperial", r.Units)
	}
	return q, nil
}

func (c *Client) checkCoordinates(lat, lon float64) error {
	if math.IsNaN(lat) || lat < -90 || lat > 90 {
		return c.invalid("latitude %v is out of range (-90 to 90)", lat)
	}
	if math.IsNaN(lon) || lon < -180 || lon > 180 {
		return c.invalid("longitude %v is out of range (-180 to 180)", lon)
	}
	return nil
}

func (c *Client) checkLocation(name string) error {
	if name == "" {
		return c.invalid("no location given: name a place or give latitude and longitude")
	}
	if len([]rune(name)) > 200 {
		return c.invalid("the location name is longer than 200 characters")
	}
	return nil
}

func (c *Client) checkLanguage(lang string) (string, error) {
	lang = strings.TrimSpace(lang)
	if lang == "" {
		return "en", nil
	}
	if !languageRE.MatchString(lang) {
		return "", c.invalid("language %q is not a language code such as en or ru", lang)
	}
	primary, _, _ := strings.Cut(strings.ReplaceAll(lang, "_", "-"), "-")
	return strings.ToLower(primary), nil
}

func (c *Client) invalid(format string, args ...any) error {
	return apiclient.Invalid(c.Provider(), format, args...)
}

func unitsOf(system string) Units {
	if system == "imperial" {
		return Units{Temperature: "°F", WindSpeed: "mph", Precipitation: "inch"}
	}
	return Units{Temperature: "°C", WindSpeed: "km/h", Precipitation: "mm"}
}

// coord formats a coordinate for a query string.
func coord(x float64) string { return fmt.Sprintf("%.4f", x) }

func round1(x float64) float64 { return math.Round(x*10) / 10 }

func round2(x float64) float64 { return math.Round(x*100) / 100 }
