package weather

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

const owKey = "0123456789abcdefSECRETowKey00000"

func newTestClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = time.Millisecond
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ptr(f float64) *float64 { return &f }

// wantErr checks that err is an *Error with status whose text holds every
// part and never the key.
var wantErr = apitest.ErrorCheck(owKey)

// openMeteoServer answers geocoding with geo and forecasts with fc.
func openMeteoServer(t *testing.T, geo, fc apitest.Reply) *apitest.Server {
	return apitest.New(t, apitest.ByPath(map[string]apitest.Reply{"/v1/search": geo}, fc))
}

func TestOpenMeteoForecast(t *testing.T) {
	srv := openMeteoServer(t,
		apitest.Reply{Body: apitest.Fixture(t, "om_geocoding_berlin.json")},
		apitest.Reply{Body: apitest.Fixture(t, "om_forecast_berlin.json")})
	c := newTestClient(t, Config{OpenMeteoURL: srv.URL, OpenMeteoGeocodingURL: srv.URL + "/"})
	if c.Provider() != OpenMeteo {
		t.Errorf("Provider = %s", c.Provider())
	}

	f, err := c.Forecast(t.Context(), Request{Location: " Berlin ", Language: "de"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if g := reqs[0]; g.Path != "/v1/search" || g.Query.Encode() != "count=1&format=json&language=de&name=Berlin" {
		t.Errorf("geocoding request = %s?%s", g.Path, g.Query.Encode())
	}
	fq := reqs[1].Query
	if reqs[1].Path != "/v1/forecast" || fq.Get("latitude") != "52.5244" || fq.Get("longitude") != "13.4105" ||
		fq.Get("timezone") != "auto" || fq.Get("forecast_days") != "7" ||
		fq.Get("current") != "temperature_2m,relative_humidity_2m,apparent_temperature,precipitation,weather_code,wind_speed_10m,wind_direction_10m" ||
		fq.Get("daily") != "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max,wind_speed_10m_max" ||
		fq.Has("temperature_unit") {
		t.Errorf("forecast request = %s?%s", reqs[1].Path, fq.Encode())
	}

	want := Place{Name: "Berlin", Region: "Berlin", Country: "Deutschland", CountryCode: "DE", Latitude: 52.52437, Longitude: 13.41053, Timezone: "Europe/Berlin", Population: 3426354}
	if f.Provider != OpenMeteo || f.Place != want || f.Timezone != "Europe/Berlin" || f.Units != (Units{"°C", "km/h", "mm"}) {
		t.Errorf("forecast = %+v", f)
	}
	cur := f.Current
	if cur.Temperature != 19.3 || cur.FeelsLike != 18.1 || cur.Humidity != 58 || cur.WindSpeed != 14.8 || cur.WindDirection != 265 ||
		cur.Precipitation != 0 || cur.Code != 3 || cur.Description != "overcast" {
		t.Errorf("current = %+v", cur)
	}
	if !cur.Time.Equal(time.Date(2024, 6, 12, 12, 15, 0, 0, time.UTC)) {
		t.Errorf("current time = %v, want 14:15 CEST", cur.Time)
	}
	if len(f.Daily) != 7 {
		t.Fatalf("days = %d", len(f.Daily))
	}
	if d := f.Daily[1]; d != (Day{Date: "2024-06-13", TempMax: 17.9, TempMin: 11.6, Precipitation: 4.2, PrecipitationProbability: 84, WindSpeedMax: 22.3, Code: 61, Description: "slight rain"}) {
		t.Errorf("day 2 = %+v", d)
	}
	if d := f.Daily[5]; d.Code != 95 || d.Description != "thunderstorm" || d.TempMax != 25.1 {
		t.Errorf("day 6 = %+v", d)
	}
	if d := f.Daily[6]; d.PrecipitationProbability != -1 {
		t.Errorf("a null probability must read -1: %+v", d)
	}
}

func TestOpenMeteoCoordinatesImperial(t *testing.T) {
	srv := openMeteoServer(t, apitest.Reply{Status: 500}, apitest.Reply{Body: apitest.Fixture(t, "om_forecast_berlin.json")})
	c := newTestClient(t, Config{OpenMeteoURL: srv.URL, OpenMeteoGeocodingURL: srv.URL})
	f, err := c.Forecast(t.Context(), Request{Latitude: ptr(52.52), Longitude: ptr(-13.41), Days: 3, Units: "Imperial"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Path != "/v1/forecast" {
		t.Fatalf("requests = %+v (coordinates need no geocoding)", reqs)
	}
	q := reqs[0].Query
	if q.Get("latitude") != "52.5200" || q.Get("longitude") != "-13.4100" || q.Get("forecast_days") != "3" ||
		q.Get("temperature_unit") != "fahrenheit" || q.Get("wind_speed_unit") != "mph" || q.Get("precipitation_unit") != "inch" {
		t.Errorf("query = %s", q.Encode())
	}
	if f.Units != (Units{"°F", "mph", "inch"}) || f.Place.Latitude != 52.52 || f.Place.Timezone != "Europe/Berlin" {
		t.Errorf("forecast = %+v", f)
	}
}

func TestOpenMeteoQualifiedName(t *testing.T) {
	srv := openMeteoServer(t, apitest.Reply{Body: apitest.Fixture(t, "om_geocoding_paris.json")}, apitest.Reply{})
	c := newTestClient(t, Config{OpenMeteoURL: srv.URL, OpenMeteoGeocodingURL: srv.URL})
	tests := []struct{ name, wantRegion string }{
		{"Paris, Texas", "Texas"},
		{"Paris, US", "Texas"},
		{"Paris, France", "Île-de-France"},
		{"Paris, Narnia", "Île-de-France"},
		{"Paris", "Île-de-France"},
	}
	for _, tt := range tests {
		p, err := c.Geocode(t.Context(), tt.name, "")
		if err != nil || p.Region != tt.wantRegion {
			t.Errorf("Geocode(%q) = %+v, %v; want region %s", tt.name, p, err, tt.wantRegion)
		}
	}
	if q := srv.Requests()[0].Query; q.Get("name") != "Paris" || q.Get("count") != "10" || q.Get("language") != "en" {
		t.Errorf("query = %s", q.Encode())
	}
	if q := srv.Requests()[4].Query; q.Get("count") != "1" {
		t.Errorf("query = %s", q.Encode())
	}
}

func TestOpenMeteoFailures(t *testing.T) {
	geo := apitest.Reply{Body: apitest.Fixture(t, "om_geocoding_berlin.json")}
	fc := apitest.Fixture(t, "om_forecast_berlin.json")
	tests := []struct {
		name     string
		geo, fc  apitest.Reply
		timeout  time.Duration
		wantHits int
		status   int
		want     []string
		is       error
	}{
		{name: "forecast 5xx retried once", geo: geo, fc: apitest.Reply{Status: 502, Body: "Bad Gateway"}, wantHits: 3, status: 502,
			want: []string{"Open-Meteo: ", "HTTP 502 Bad Gateway: Bad Gateway"}},
		{name: "geocoding 5xx", geo: apitest.Reply{Status: 500, Body: `{"error":true,"reason":"Internal error"}`}, wantHits: 2, status: 500,
			want: []string{"Open-Meteo geocoding: ", "HTTP 500", "Internal error"}},
		{name: "forecast 400 reason", geo: geo, fc: apitest.Reply{Status: 400, Body: apitest.Fixture(t, "om_error.json")}, wantHits: 2, status: 400,
			want: []string{"HTTP 400 Bad Request: Latitude must be in range of -90 to 90°. Given: 91.0."}},
		{name: "429", geo: geo, fc: apitest.Reply{Status: 429, Body: `{"error":true,"reason":"Minutely API request limit exceeded. Please try again in one minute."}`}, wantHits: 2, status: 429,
			want: []string{"Minutely API request limit exceeded"}, is: ErrRateLimited},
		{name: "timeout", geo: geo, fc: apitest.Reply{Body: fc, Delay: 3 * time.Second}, timeout: 100 * time.Millisecond, wantHits: 2,
			want: []string{"Open-Meteo", "no answer", "within 100ms"}, is: context.DeadlineExceeded},
		{name: "malformed forecast", geo: geo, fc: apitest.Reply{Body: fc[:200]}, wantHits: 2, want: []string{"Open-Meteo", "not valid JSON"}},
		{name: "malformed geocoding", geo: apitest.Reply{Body: `{"results":[{"name":"Berlin","latitude":"52.5"}]}`}, wantHits: 1, want: []string{"geocoding", "not valid JSON"}},
		{name: "place not found", geo: apitest.Reply{Body: apitest.Fixture(t, "om_geocoding_empty.json")}, wantHits: 1,
			want: []string{`no place named "Berlin"`}, is: ErrNotFound},
		{name: "empty forecast", geo: geo, fc: apitest.Reply{Body: `{"latitude":52.52,"longitude":13.42,"utc_offset_seconds":0,"timezone":"GMT"}`}, wantHits: 2,
			want: []string{"neither current weather nor a daily forecast"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openMeteoServer(t, tt.geo, tt.fc)
			c := newTestClient(t, Config{OpenMeteoURL: srv.URL, OpenMeteoGeocodingURL: srv.URL, Timeout: tt.timeout})
			f, err := c.Forecast(t.Context(), Request{Location: "Berlin"})
			if f != nil {
				t.Errorf("a forecast came with the error: %+v", f)
			}
			wantErr(t, err, tt.status, tt.want...)
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(err, %v) = false: %v", tt.is, err)
			}
			if n := len(srv.Requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
		})
	}
}

func owServer(t *testing.T, geo, fc apitest.Reply) *apitest.Server {
	return apitest.New(t, apitest.ByPath(map[string]apitest.Reply{"/geo/1.0/direct": geo}, fc))
}

func TestOpenWeatherForecast(t *testing.T) {
	srv := owServer(t,
		apitest.Reply{Body: apitest.Fixture(t, "ow_geocoding_london.json")},
		apitest.Reply{Body: apitest.Fixture(t, "ow_forecast_london.json")})
	c := newTestClient(t, Config{OpenWeatherAPIKey: owKey, OpenWeatherURL: srv.URL})
	if c.Provider() != OpenWeather {
		t.Errorf("Provider = %s", c.Provider())
	}
	f, err := c.Forecast(t.Context(), Request{Location: "London,GB", Language: "ru"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if g := reqs[0]; g.Path != "/geo/1.0/direct" || g.Query.Encode() != "appid="+owKey+"&limit=1&q=London%2CGB" {
		t.Errorf("geocoding request = %s?%s", g.Path, g.Query.Encode())
	}
	if r := reqs[1]; r.Path != "/data/2.5/forecast" || r.Query.Encode() != "appid="+owKey+"&lang=ru&lat=51.5073&lon=-0.1276&units=metric" {
		t.Errorf("forecast request = %s?%s", r.Path, r.Query.Encode())
	}

	if f.Provider != OpenWeather || f.Place.Name != "Лондон" || f.Place.Region != "England" || f.Place.CountryCode != "GB" ||
		f.Place.Latitude != 51.5073219 || f.Place.Population != 1000000 || f.Timezone != "UTC+01:00" || f.Units != (Units{"°C", "km/h", "mm"}) {
		t.Errorf("forecast = %+v", f)
	}
	cur := f.Current
	if cur.Temperature != 17.84 || cur.FeelsLike != 17.31 || cur.Humidity != 61 || cur.WindSpeed != 18.4 || cur.WindDirection != 240 ||
		cur.Code != 803 || cur.Description != "broken clouds" || !cur.Time.Equal(time.Date(2024, 6, 12, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("current = %+v", cur)
	}
	want := []Day{
		{Date: "2024-06-12", TempMax: 18.62, TempMin: 13.72, Precipitation: 1.3, PrecipitationProbability: 45, WindSpeedMax: 20.9, Code: 803, Description: "broken clouds"},
		{Date: "2024-06-13", TempMax: 19.12, TempMin: 11.58, Precipitation: 0.2, PrecipitationProbability: 27, WindSpeedMax: 20.3, Code: 800, Description: "clear sky"},
		{Date: "2024-06-14", TempMax: 12.66, TempMin: 11.93, Precipitation: 0, PrecipitationProbability: 0, WindSpeedMax: 9.4, Code: 801, Description: "few clouds"},
	}
	if len(f.Daily) != len(want) {
		t.Fatalf("days = %+v", f.Daily)
	}
	for i := range want {
		if f.Daily[i] != want[i] {
			t.Errorf("day %d = %+v\n want %+v", i, f.Daily[i], want[i])
		}
	}

	// Days caps the folded days; imperial keeps mph and turns mm into inches.
	f, err = c.Forecast(t.Context(), Request{Latitude: ptr(51.5073), Longitude: ptr(-0.1276), Days: 1, Units: "imperial"})
	if err != nil {
		t.Fatal(err)
	}
	if r := srv.Requests()[2]; r.Path != "/data/2.5/forecast" || r.Query.Get("units") != "imperial" || r.Query.Get("lang") != "en" {
		t.Errorf("request = %s?%s", r.Path, r.Query.Encode())
	}
	if len(f.Daily) != 1 || f.Daily[0].Precipitation != 0.05 || f.Daily[0].WindSpeedMax != 5.8 || f.Place.Name != "London" {
		t.Errorf("imperial = %+v", f)
	}
}

func TestOpenWeatherFailures(t *testing.T) {
	geo := apitest.Reply{Body: apitest.Fixture(t, "ow_geocoding_london.json")}
	fc := apitest.Fixture(t, "ow_forecast_london.json")
	tests := []struct {
		name     string
		geo, fc  apitest.Reply
		timeout  time.Duration
		wantHits int
		status   int
		want     []string
		is       error
	}{
		{name: "bad key", geo: apitest.Reply{Status: 401, Body: apitest.Fixture(t, "ow_unauthorized.json")}, wantHits: 1, status: 401,
			want: []string{"OpenWeather: ", "HTTP 401 Unauthorized: Invalid API key.", "check OPENWEATHER_API_KEY"}},
		{name: "5xx retried once", geo: geo, fc: apitest.Reply{Status: 500, Body: `{"cod":"500","message":"Internal error"}`}, wantHits: 3, status: 500,
			want: []string{"HTTP 500 Internal Server Error: Internal error"}},
		{name: "429", geo: geo, fc: apitest.Reply{Status: 429, Body: `{"cod":429,"message":"Your account is temporary blocked due to exceeding of requests limitation of your subscription type."}`}, wantHits: 2, status: 429,
			want: []string{"temporary blocked"}, is: ErrRateLimited},
		{name: "timeout", geo: apitest.Reply{Body: geo.Body, Delay: 3 * time.Second}, timeout: 100 * time.Millisecond, wantHits: 1,
			want: []string{"no answer"}, is: context.DeadlineExceeded},
		{name: "malformed", geo: geo, fc: apitest.Reply{Body: fc[:300]}, wantHits: 2, want: []string{"not valid JSON"}},
		{name: "place not found", geo: apitest.Reply{Body: `[]`}, wantHits: 1, want: []string{`no place named "London,GB"`}, is: ErrNotFound},
		{name: "empty forecast", geo: geo, fc: apitest.Reply{Body: `{"cod":"200","message":0,"cnt":0,"list":[],"city":{}}`}, wantHits: 2, want: []string{"no time slots"}},
		{name: "transport error names no key", geo: apitest.Reply{Status: 418, Body: `{"message":"bad appid=` + owKey + `"}`}, wantHits: 1, status: 418,
			want: []string{"appid=[redacted]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := owServer(t, tt.geo, tt.fc)
			c := newTestClient(t, Config{OpenWeatherAPIKey: owKey, OpenWeatherURL: srv.URL, Timeout: tt.timeout})
			f, err := c.Forecast(t.Context(), Request{Location: "London,GB"})
			if f != nil {
				t.Errorf("a forecast came with the error: %+v", f)
			}
			wantErr(t, err, tt.status, tt.want...)
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(err, %v) = false: %v", tt.is, err)
			}
			if n := len(srv.Requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
		})
	}
}

func TestInputValidation(t *testing.T) {
	srv := openMeteoServer(t, apitest.Reply{}, apitest.Reply{})
	c := newTestClient(t, Config{OpenMeteoURL: srv.URL, OpenMeteoGeocodingURL: srv.URL})
	tests := []struct {
		name string
		r    Request
		want string
	}{
		{"nothing", Request{}, "no location given"},
		{"blank", Request{Location: "  "}, "no location given"},
		{"latitude alone", Request{Latitude: ptr(10)}, "both latitude and longitude"},
		{"latitude too big", Request{Latitude: ptr(90.5), Longitude: ptr(0)}, "latitude 90.5 is out of range"},
		{"longitude too small", Request{Latitude: ptr(0), Longitude: ptr(-180.01)}, "longitude -180.01 is out of range"},
		{"NaN", Request{Latitude: ptr(math.NaN()), Longitude: ptr(0)}, "latitude NaN"},
		{"days", Request{Location: "Berlin", Days: 17}, "days must be between 1 and 16"},
		{"units", Request{Location: "Berlin", Units: "kelvin"}, `units "kelvin"`},
		{"language", Request{Location: "Berlin", Language: "english"}, `language "english"`},
		{"long name", Request{Location: strings.Repeat("x", 201)}, "longer than 200"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Forecast(t.Context(), tt.r)
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalidInput containing %q", err, tt.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests for invalid input", n)
	}
	if _, err := New(Config{OpenMeteoURL: "ftp://example.org"}); err == nil || !strings.Contains(err.Error(), "SOVA_OPEN_METEO_URL") {
		t.Errorf("bad URL: %v", err)
	}
}
