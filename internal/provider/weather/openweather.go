package weather

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// owGeocode asks GET /geo/1.0/direct?q=&limit=1&appid=, which takes
// "City", "City,CountryCode" or "City,StateCode,CountryCode".
func (c *Client) owGeocode(ctx context.Context, name, lang string) (*Place, error) {
	var resp []struct {
		Name       string            `json:"name"`
		LocalNames map[string]string `json:"local_names"`
		Lat        float64           `json:"lat"`
		Lon        float64           `json:"lon"`
		Country    string            `json:"country"`
		State      string            `json:"state"`
	}
	q := url.Values{"q": {name}, "limit": {"1"}}
	if err := c.owJSON(ctx, "/geo/1.0/direct", q, &resp); err != nil {
		return nil, err
	}
	if len(resp) == 0 {
		return nil, apiclient.NotFound(OpenWeather, "no place named %q", name)
	}
	r := resp[0]
	p := &Place{Name: r.Name, Region: r.State, CountryCode: r.Country, Latitude: r.Lat, Longitude: r.Lon}
	if local := r.LocalNames[lang]; local != "" {
		p.Name = local
	}
	return p, nil
}

// openWeather asks GET /data/2.5/forecast?lat=&lon=&units=&lang=&appid=
// and folds its three-hour slots into local days.
func (c *Client) openWeather(ctx context.Context, place Place, r Request) (*Forecast, error) {
	q := url.Values{
		"lat":   {coord(place.Latitude)},
		"lon":   {coord(place.Longitude)},
		"units": {r.Units},
		"lang":  {r.Language},
	}
	var resp owForecast
	if err := c.owJSON(ctx, "/data/2.5/forecast", q, &resp); err != nil {
		return nil, err
	}
	if len(resp.List) == 0 {
		return nil, &Error{Provider: OpenWeather, Message: "the forecast has no time slots"}
	}

	loc := time.FixedZone(utcOffsetName(resp.City.Timezone), resp.City.Timezone)
	f := &Forecast{Provider: OpenWeather, Place: place, Timezone: loc.String(), Units: unitsOf(r.Units)}
	if f.Place.Name == "" {
		f.Place.Name = resp.City.Name
	}
	if f.Place.CountryCode == "" {
		f.Place.CountryCode = resp.City.Country
	}
	if f.Place.Population == 0 {
		f.Place.Population = resp.City.Population
	}

	// OpenWeather gives wind in m/s for metric; Sova's metric is km/h.
	wind := func(v float64) float64 {
		if r.Units == "metric" {
			return round1(v * 3.6)
		}
		return round1(v)
	}
	// Precipitation is in mm whatever the units.
	precip := func(mm float64) float64 {
		if r.Units == "imperial" {
			return round2(mm / 25.4)
		}
		return round1(mm)
	}

	first := resp.List[0]
	f.Current = Current{
		Time:          time.Unix(first.Dt, 0).In(loc),
		Temperature:   first.Main.Temp,
		FeelsLike:     first.Main.FeelsLike,
		Humidity:      first.Main.Humidity,
		WindSpeed:     wind(first.Wind.Speed),
		WindDirection: first.Wind.Deg,
		Precipitation: precip(first.Rain.ThreeH + first.Snow.ThreeH),
	}
	f.Current.Code, f.Current.Description = first.condition()

	var days []Day
	var middays []float64 // distance of the chosen slot from 13:00
	for _, s := range resp.List {
		t := time.Unix(s.Dt, 0).In(loc)
		date := t.Format("2006-01-02")
		if len(days) == 0 || days[len(days)-1].Date != date {
			if len(days) == r.Days {
				break
			}
			days = append(days, Day{Date: date, TempMax: math.Inf(-1), TempMin: math.Inf(1)})
			middays = append(middays, math.Inf(1))
		}
		d := &days[len(days)-1]
		d.TempMax = max(d.TempMax, s.Main.TempMax, s.Main.Temp)
		d.TempMin = min(d.TempMin, s.Main.TempMin, s.Main.Temp)
		d.Precipitation += s.Rain.ThreeH + s.Snow.ThreeH
		d.PrecipitationProbability = max(d.PrecipitationProbability, int(math.Round(s.Pop*100)))
		d.WindSpeedMax = max(d.WindSpeedMax, s.Wind.Speed)
		// The day is described by its slot nearest early afternoon.
		if dist := math.Abs(float64(t.Hour()) + float64(t.Minute())/60 - 13); dist < middays[len(middays)-1] {
			middays[len(middays)-1] = dist
			d.Code, d.Description = s.condition()
		}
	}
	for i := range days {
		days[i].TempMax = round2(days[i].TempMax)
		days[i].TempMin = round2(days[i].TempMin)
		days[i].Precipitation = precip(days[i].Precipitation)
		days[i].WindSpeedMax = wind(days[i].WindSpeedMax)
	}
	f.Daily = days
	return f, nil
}

// owJSON calls OpenWeather, whose key travels in the query as appid.
func (c *Client) owJSON(ctx context.Context, path string, q url.Values, out any) error {
	q.Set("appid", c.owKey)
	return c.ow.GetJSON(ctx, c.owURL+path+"?"+q.Encode(), nil, out)
}

// owForecast is the part of /data/2.5/forecast's answer that is used.
type owForecast struct {
	List []owSlot `json:"list"`
	City struct {
		Name       string `json:"name"`
		Country    string `json:"country"`
		Population int    `json:"population"`
		Timezone   int    `json:"timezone"` // seconds east of UTC
	} `json:"city"`
}

type owSlot struct {
	Dt   int64 `json:"dt"`
	Main struct {
		Temp      float64 `json:"temp"`
		FeelsLike float64 `json:"feels_like"`
		TempMin   float64 `json:"temp_min"`
		TempMax   float64 `json:"temp_max"`
		Humidity  int     `json:"humidity"`
	} `json:"main"`
	Weather []struct {
		ID          int    `json:"id"`
		Main        string `json:"main"`
		Description string `json:"description"`
	} `json:"weather"`
	Wind struct {
		Speed float64 `json:"speed"`
		Deg   int     `json:"deg"`
	} `json:"wind"`
	Pop  float64 `json:"pop"`
	Rain struct {
		ThreeH float64 `json:"3h"`
	} `json:"rain"`
	Snow struct {
		ThreeH float64 `json:"3h"`
	} `json:"snow"`
}

func (s owSlot) condition() (int, string) {
	if len(s.Weather) == 0 {
		return 0, ""
	}
	w := s.Weather[0]
	d := strings.TrimSpace(w.Description)
	if d == "" {
		d = strings.ToLower(w.Main)
	}
	return w.ID, d
}

// utcOffsetName renders an offset in seconds as "UTC+02:00".
func utcOffsetName(secs int) string {
	sign := '+'
	if secs < 0 {
		sign, secs = '-', -secs
	}
	return fmt.Sprintf("UTC%c%02d:%02d", sign, secs/3600, secs%3600/60)
}
