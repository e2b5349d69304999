package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/weather"
)

// GetWeatherDataName is the web group's weather tool (seed 000 §1.2).
const GetWeatherDataName = weather.ToolName

// WeatherArgs are get_weather_data's arguments: a place in words, or its
// coordinates.
type WeatherArgs struct {
	Location  string   `json:"location,omitempty" jsonschema:"the place, as a person names it: a city, optionally with its country (Berlin; Paris, France)"`
	Latitude  *float64 `json:"latitude,omitempty" jsonschema:"latitude of the place, with longitude, instead of location"`
	Longitude *float64 `json:"longitude,omitempty" jsonschema:"longitude of the place, with latitude, instead of location"`
	Days      int      `json:"days,omitempty" jsonschema:"days of forecast from today, 1 to 16 (default 7)"`
	Units     string   `json:"units,omitempty" jsonschema:"metric (default: °C, km/h, mm) or imperial (°F, mph, inch)"`
}

// WeatherResult is get_weather_data's output.
type WeatherResult struct {
	Provider string       `json:"provider"`
	Location WeatherPlace `json:"location"`
	Timezone string       `json:"timezone"`
	Units    weatherUnits `json:"units"`
	Current  weatherNow   `json:"current"`
	Daily    []weatherDay `json:"daily"`
}

// WeatherPlace is the place the forecast is for.
type WeatherPlace struct {
	Name        string  `json:"name"`
	Region      string  `json:"region,omitempty"`
	Country     string  `json:"country,omitempty"`
	CountryCode string  `json:"countryCode,omitempty"`
	Latitude    float64 `json:"latitude"`
	Longitude   float64 `json:"longitude"`
}

type weatherUnits struct {
	Temperature   string `json:"temperature"`
	WindSpeed     string `json:"windSpeed"`
	Precipitation string `json:"precipitation"`
}

type weatherNow struct {
	Time          string  `json:"time"`
	Temperature   float64 `json:"temperature"`
	FeelsLike     float64 `json:"feelsLike"`
	Humidity      int     `json:"humidity"`
	WindSpeed     float64 `json:"windSpeed"`
	WindDirection int     `json:"windDirection"`
	Precipitation float64 `json:"precipitation"`
	Code          int     `json:"code"`
	Description   string  `json:"description"`
}

type weatherDay struct {
	Date                     string  `json:"date"`
	TempMax                  float64 `json:"tempMax"`
	TempMin                  float64 `json:"tempMin"`
	Precipitation            float64 `json:"precipitation"`
	PrecipitationProbability int     `json:"precipitationProbability"`
	WindSpeedMax             float64 `json:"windSpeedMax"`
	Code                     int     `json:"code"`
	Description              string  `json:"description"`
}

// WeatherOptions tune a get_weather_data tool.
type WeatherOptions struct {
	// Language of place names and descriptions ("en", "ru", …).
	Language string
}

// GetWeatherData is the get_weather_data tool: current conditions and a
// daily forecast from Open-Meteo, or OpenWeather with its key.
func GetWeatherData(run *Run, o WeatherOptions) agent.Tool {
	call := func(ctx context.Context, a WeatherArgs) (agent.Output, error) {
		if run.p.Weather == nil {
			return agent.Output{}, errors.New("weather data is not available")
		}
		if strings.TrimSpace(a.Location) == "" && (a.Latitude == nil || a.Longitude == nil) {
			return agent.Output{}, errors.New("give the location, or its latitude and longitude")
		}
		f, err := run.p.Weather.Forecast(ctx, weather.Request{Location: a.Location, Latitude: a.Latitude, Longitude: a.Longitude,
			Days: a.Days, Units: a.Units, Language: o.Language})
		if err != nil {
			return agent.Output{}, err
		}
		out := WeatherResult{Provider: f.Provider, Timezone: f.Timezone,
			Location: WeatherPlace{Name: f.Place.Name, Region: f.Place.Region, Country: f.Place.Country, CountryCode: f.Place.CountryCode,
				Latitude: f.Place.Latitude, Longitude: f.Place.Longitude},
			Units: weatherUnits{f.Units.Temperature, f.Units.WindSpeed, f.Units.Precipitation},
			Current: weatherNow{Time: f.Current.Time.Format("2006-01-02T15:04Z07:00"), Temperature: f.Current.Temperature, FeelsLike: f.Current.FeelsLike,
				Humidity: f.Current.Humidity, WindSpeed: f.Current.WindSpeed, WindDirection: f.Current.WindDirection,
				Precipitation: f.Current.Precipitation, Code: f.Current.Code, Description: f.Current.Description},
			Daily: []weatherDay{},
		}
		for _, d := range f.Daily {
			out.Daily = append(out.Daily, weatherDay{d.Date, d.TempMax, d.TempMin, d.Precipitation, d.PrecipitationProbability, d.WindSpeedMax, d.Code, d.Description})
		}
		return jsonOutput(out, fmt.Sprintf("Weather in %s: %.0f%s, %s", f.Place.Name, f.Current.Temperature, f.Units.Temperature, f.Current.Description))
	}
	return agent.NewTool(GetWeatherDataName,
		"Get the current weather and a daily forecast (temperatures, precipitation, wind) for a place, by name or by coordinates.", call,
		agent.WithTitle(func(a WeatherArgs) string {
			if a.Location != "" {
				return "Getting the weather in " + clip(a.Location, 60)
			}
			return "Getting the weather"
		}),
		agent.WithSchema(func(s *jsonschema.Schema) { s.Properties["units"].Enum = []any{"metric", "imperial"} }))
}
