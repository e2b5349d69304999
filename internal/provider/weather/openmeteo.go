package weather

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Variables asked of Open-Meteo.
const (
	omCurrent = "temperature_2m,relative_humidity_2m,apparent_temperature,precipitation,weather_code,wind_speed_10m,wind_direction_10m"
	omDaily   = "weather_code,temperature_2m_max,temperature_2m_min,precipitation_sum,precipitation_probability_max,wind_speed_10m_max"
)

// omGeocode asks GET /v1/search?name=&count=1&language=&format=json. The
// geocoder matches names only, so for "Paris, France" it looks up "Paris"
// among ten candidates and keeps the first whose country, country code or
// region starts with the words after the comma.
func (c *Client) omGeocode(ctx context.Context, name, lang string) (*Place, error) {
	query, qualifier, _ := strings.Cut(name, ",")
	query, qualifier = strings.TrimSpace(query), strings.ToLower(strings.TrimSpace(qualifier))
	if query == "" {
		query, qualifier = name, ""
	}
	count := "1"
	if qualifier != "" {
		count = "10"
	}
	var resp struct {
		Results []struct {
			Name        string  `json:"name"`
			Latitude    float64 `json:"latitude"`
			Longitude   float64 `json:"longitude"`
			CountryCode string  `json:"country_code"`
			Country     string  `json:"country"`
			Admin1      string  `json:"admin1"`
			Timezone    string  `json:"timezone"`
			Population  int     `json:"population"`
		} `json:"results"`
	}
	q := url.Values{"name": {query}, "count": {count}, "language": {lang}, "format": {"json"}}
	err := c.geocoding.GetJSON(ctx, c.geocodingURL+"/v1/search?"+q.Encode(), nil, &resp)
	if err != nil {
		return nil, err
	}
	if len(resp.Results) == 0 {
		return nil, apiclient.NotFound(c.geocoding.Provider(), "no place named %q", name)
	}
	best := resp.Results[0]
	for _, r := range resp.Results {
		if qualifier == "" {
			break
		}
		if strings.HasPrefix(strings.ToLower(r.Country), qualifier) || strings.EqualFold(r.CountryCode, qualifier) ||
			strings.HasPrefix(strings.ToLower(r.Admin1), qualifier) {
			best = r
			break
		}
	}
	return &Place{
		Name: best.Name, Region: best.Admin1, Country: best.Country, CountryCode: best.CountryCode,
		Latitude: best.Latitude, Longitude: best.Longitude, Timezone: best.Timezone, Population: best.Population,
	}, nil
}

// openMeteo asks GET /v1/forecast?latitude=&longitude=&current=&daily=
// &timezone=auto&forecast_days=.
func (c *Client) openMeteo(ctx context.Context, place Place, r Request) (*Forecast, error) {
	q := url.Values{
		"latitude":      {coord(place.Latitude)},
		"longitude":     {coord(place.Longitude)},
		"current":       {omCurrent},
		"daily":         {omDaily},
		"timezone":      {"auto"},
		"forecast_days": {strconv.Itoa(r.Days)},
	}
	if r.Units == "imperial" {
		q.Set("temperature_unit", "fahrenheit")
		q.Set("wind_speed_unit", "mph")
		q.Set("precipitation_unit", "inch")
	}
	var resp omForecast
	if err := c.forecast.GetJSON(ctx, c.forecastURL+"/v1/forecast?"+q.Encode(), nil, &resp); err != nil {
		return nil, err
	}
	if resp.Current == nil && len(resp.Daily.Time) == 0 {
		return nil, &Error{Provider: OpenMeteo, Message: "the answer has neither current weather nor a daily forecast"}
	}

	f := &Forecast{Provider: OpenMeteo, Place: place, Timezone: resp.Timezone, Units: unitsOf(r.Units)}
	if f.Place.Timezone == "" {
		f.Place.Timezone = resp.Timezone
	}
	if cur := resp.Current; cur != nil {
		loc := time.FixedZone(resp.TimezoneAbbreviation, resp.UTCOffsetSeconds)
		t, _ := time.ParseInLocation("2006-01-02T15:04", cur.Time, loc)
		f.Current = Current{
			Time:          t,
			Temperature:   val(cur.Temperature),
			FeelsLike:     val(cur.ApparentTemperature),
			Humidity:      int(val(cur.RelativeHumidity)),
			WindSpeed:     val(cur.WindSpeed),
			WindDirection: int(val(cur.WindDirection)),
			Precipitation: val(cur.Precipitation),
			Code:          int(val(cur.WeatherCode)),
		}
		f.Current.Description = wmoDescription(f.Current.Code)
	}
	d := resp.Daily
	for i, date := range d.Time {
		day := Day{
			Date:                     date,
			TempMax:                  at(d.TemperatureMax, i),
			TempMin:                  at(d.TemperatureMin, i),
			Precipitation:            at(d.PrecipitationSum, i),
			PrecipitationProbability: -1,
			WindSpeedMax:             at(d.WindSpeedMax, i),
			Code:                     int(at(d.WeatherCode, i)),
		}
		if i < len(d.PrecipitationProbabilityMax) && d.PrecipitationProbabilityMax[i] != nil {
			day.PrecipitationProbability = int(*d.PrecipitationProbabilityMax[i])
		}
		day.Description = wmoDescription(day.Code)
		f.Daily = append(f.Daily, day)
	}
	return f, nil
}

// omForecast is the part of Open-Meteo's /v1/forecast answer that is
// used. Values may be null.
type omForecast struct {
	Latitude             float64 `json:"latitude"`
	Longitude            float64 `json:"longitude"`
	UTCOffsetSeconds     int     `json:"utc_offset_seconds"`
	Timezone             string  `json:"timezone"`
	TimezoneAbbreviation string  `json:"timezone_abbreviation"`
	Current              *struct {
		Time                string   `json:"time"`
		Temperature         *float64 `json:"temperature_2m"`
		RelativeHumidity    *float64 `json:"relative_humidity_2m"`
		ApparentTemperature *float64 `json:"apparent_temperature"`
		Precipitation       *float64 `json:"precipitation"`
		WeatherCode         *float64 `json:"weather_code"`
		WindSpeed           *float64 `json:"wind_speed_10m"`
		WindDirection       *float64 `json:"wind_direction_10m"`
	} `json:"current"`
	Daily struct {
		Time                        []string   `json:"time"`
		WeatherCode                 []*float64 `json:"weather_code"`
		TemperatureMax              []*float64 `json:"temperature_2m_max"`
		TemperatureMin              []*float64 `json:"temperature_2m_min"`
		PrecipitationSum            []*float64 `json:"precipitation_sum"`
		PrecipitationProbabilityMax []*float64 `json:"precipitation_probability_max"`
		WindSpeedMax                []*float64 `json:"wind_speed_10m_max"`
	} `json:"daily"`
}

func val(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func at(s []*float64, i int) float64 {
	if i < len(s) {
		return val(s[i])
	}
	return 0
}

// wmoDescription says a WMO weather interpretation code (WW) in words, as
// Open-Meteo's documentation lists them.
func wmoDescription(code int) string {
	switch code {
	case 0:
		return "clear sky"
	case 1:
		return "mainly clear"
	case 2:
		return "partly cloudy"
	case 3:
		return "overcast"
	case 45:
		return "fog"
	case 48:
		return "depositing rime fog"
	case 51:
		return "light drizzle"
	case 53:
		return "moderate drizzle"
	case 55:
		return "dense drizzle"
	case 56:
		return "light freezing drizzle"
	case 57:
		return "dense freezing drizzle"
	case 61:
		return "slight rain"
	case 63:
		return "moderate rain"
	case 65:
		return "heavy rain"
	case 66:
		return "light freezing rain"
	case 67:
		return "heavy freezing rain"
	case 71:
		return "slight snowfall"
	case 73:
		return "moderate snowfall"
	case 75:
		return "heavy snowfall"
	case 77:
		return "snow grains"
	case 80:
		return "slight rain showers"
	case 81:
		return "moderate rain showers"
	case 82:
		return "violent rain showers"
	case 85:
		return "slight snow showers"
	case 86:
		return "heavy snow showers"
	case 95:
		return "thunderstorm"
	case 96:
		return "thunderstorm with slight hail"
	case 99:
		return "thunderstorm with heavy hail"
	}
	return "weather code " + strconv.Itoa(code)
}
