// Package flights looks up a flight's status for track_flight (seed 000
// §1.2) in AviationStack's real-time flights API: GET /v1/flights with
// access_key and flight_iata (or flight_icao). It needs a key
// (AVIATIONSTACK_API_KEY); without one there is no client and the tool is
// withdrawn.
package flights

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Defaults used when a Config leaves a value unset.
const (
	DefaultURL     = "https://api.aviationstack.com"
	DefaultTimeout = 15 * time.Second
	serviceName    = "AviationStack"
)

// Config addresses AviationStack. Its env tags are the settings
// docs/configuration.md describes.
type Config struct {
	// APIKey is the access key; empty: no client.
	APIKey string `env:"AVIATIONSTACK_API_KEY"`
	// URL is the base of GET /v1/flights. The free plan serves plain
	// http only: http://api.aviationstack.com.
	URL string `env:"SOVA_AVIATIONSTACK_URL" envDefault:"https://api.aviationstack.com"`
	// Timeout bounds one call, its retry included.
	Timeout time.Duration `env:"SOVA_AVIATIONSTACK_TIMEOUT" envDefault:"15s"`
	// RetryBackoff is the pause before retrying a 5xx answer; 0: 500ms,
	// negative: no retry.
	RetryBackoff time.Duration
}

// Errors to test with errors.Is.
var (
	ErrNotFound     = apiclient.ErrNotFound
	ErrInvalidInput = apiclient.ErrInvalidInput
	ErrRateLimited  = apiclient.ErrRateLimited
)

// Client looks up flights. It is safe for concurrent use.
type Client struct {
	base string
	key  string
	api  *apiclient.Client
}

// New returns a client, or nil without an API key. It fails when the URL
// is not an absolute http(s) address.
func New(cfg Config) (*Client, error) {
	base, err := apiclient.BaseURL("SOVA_AVIATIONSTACK_URL", cfg.URL, DefaultURL)
	if err != nil {
		return nil, err
	}
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" {
		return nil, nil
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	return &Client{base: base, key: key, api: apiclient.New(apiclient.Options{Bases: []string{base},
		Provider: serviceName, Timeout: timeout, RetryBackoff: cfg.RetryBackoff, Secrets: []string{key},
		Describe: describe,
		Hint: func(status int) string {
			if status == 401 || status == 403 {
				return "check AVIATIONSTACK_API_KEY (the free plan needs SOVA_AVIATIONSTACK_URL=http://api.aviationstack.com)"
			}
			return ""
		},
	})}, nil
}

// Flight is one flight of a day, as AviationStack reports it.
type Flight struct {
	Date      string    `json:"date"`
	Status    string    `json:"status"` // scheduled, active, landed, cancelled, incident, diverted
	Airline   Airline   `json:"airline"`
	Number    string    `json:"number"` // the flight's number without the airline
	IATA      string    `json:"iata"`
	ICAO      string    `json:"icao"`
	Departure Endpoint  `json:"departure"`
	Arrival   Endpoint  `json:"arrival"`
	Aircraft  *Aircraft `json:"aircraft,omitempty"`
	Live      *Live     `json:"live,omitempty"`
	// Codeshared names the operating flight when this is a codeshare.
	Codeshared string `json:"codeshared,omitempty"`
}

// Airline names the carrier.
type Airline struct {
	Name string `json:"name"`
	IATA string `json:"iata"`
	ICAO string `json:"icao"`
}

// Endpoint is a departure or an arrival. Times are RFC 3339 as
// AviationStack gives them (the airport's local time, with an offset).
type Endpoint struct {
	Airport   string `json:"airport"`
	IATA      string `json:"iata"`
	ICAO      string `json:"icao"`
	Timezone  string `json:"timezone"`
	Terminal  string `json:"terminal,omitempty"`
	Gate      string `json:"gate,omitempty"`
	Baggage   string `json:"baggage,omitempty"`
	Delay     int    `json:"delay,omitempty"` // minutes
	Scheduled string `json:"scheduled,omitempty"`
	Estimated string `json:"estimated,omitempty"`
	Actual    string `json:"actual,omitempty"`
}

// Aircraft is the plane flying.
type Aircraft struct {
	Registration string `json:"registration,omitempty"`
	IATA         string `json:"iata,omitempty"`
	ICAO         string `json:"icao,omitempty"`
}

// Live is the plane's position while it flies.
type Live struct {
	Updated   string  `json:"updated"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Altitude  float64 `json:"altitude"`  // metres
	Direction float64 `json:"direction"` // degrees
	Speed     float64 `json:"speed"`     // km/h over the ground
	IsGround  bool    `json:"isGround"`
}

var (
	iataRE = regexp.MustCompile(`^[A-Z0-9]{2}[0-9]{1,4}[A-Z]?$`)
	icaoRE = regexp.MustCompile(`^[A-Z]{3}[0-9]{1,4}[A-Z]?$`)
)

// Normalize turns "ba 283", "BA0283" or "BAW283" into the code to ask for
// and whether it is an ICAO code.
func Normalize(number string) (code string, icao bool, err error) {
	s := strings.ToUpper(strings.Join(strings.Fields(number), ""))
	s = strings.ReplaceAll(s, "-", "")
	switch {
	case icaoRE.MatchString(s):
		return s, true, nil
	case iataRE.MatchString(s):
		return s, false, nil
	}
	return "", false, apiclient.Invalid(serviceName, "%q is not a flight number such as BA283 or BAW283", number)
}

// Track returns the flights with that number: today's and the days around
// it that AviationStack knows, most recent first.
func (c *Client) Track(ctx context.Context, number string) ([]Flight, error) {
	code, icao, err := Normalize(number)
	if err != nil {
		return nil, err
	}
	q := url.Values{"access_key": {c.key}, "limit": {"10"}}
	if icao {
		q.Set("flight_icao", code)
	} else {
		q.Set("flight_iata", code)
	}
	var resp flightsResponse
	if err := c.api.GetJSON(ctx, c.base+"/v1/flights?"+q.Encode(), nil, &resp); err != nil {
		return nil, err
	}
	// AviationStack may answer 200 with an error object.
	if resp.Error != nil {
		return nil, c.api.Errorf(errorKind(resp.Error.Code), nil, "%s", errorText(resp.Error))
	}
	if resp.Data == nil {
		return nil, c.api.Errorf(apiclient.ErrBadResponse, nil, "the answer has no data")
	}
	out := make([]Flight, 0, len(resp.Data))
	for _, f := range resp.Data {
		out = append(out, f.flight())
	}
	if len(out) == 0 {
		return nil, apiclient.NotFound(serviceName, "no flight %s found", code)
	}
	return out, nil
}

type flightsResponse struct {
	Data  []apiFlight `json:"data"`
	Error *apiError   `json:"error"`
}

type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type apiFlight struct {
	FlightDate   string `json:"flight_date"`
	FlightStatus string `json:"flight_status"`
	Departure    apiEnd `json:"departure"`
	Arrival      apiEnd `json:"arrival"`
	Airline      struct {
		Name string `json:"name"`
		IATA string `json:"iata"`
		ICAO string `json:"icao"`
	} `json:"airline"`
	Flight struct {
		Number     string `json:"number"`
		IATA       string `json:"iata"`
		ICAO       string `json:"icao"`
		Codeshared *struct {
			AirlineName  string `json:"airline_name"`
			FlightNumber string `json:"flight_number"`
			FlightIATA   string `json:"flight_iata"`
		} `json:"codeshared"`
	} `json:"flight"`
	Aircraft *struct {
		Registration string `json:"registration"`
		IATA         string `json:"iata"`
		ICAO         string `json:"icao"`
	} `json:"aircraft"`
	Live *struct {
		Updated         string  `json:"updated"`
		Latitude        float64 `json:"latitude"`
		Longitude       float64 `json:"longitude"`
		Altitude        float64 `json:"altitude"`
		Direction       float64 `json:"direction"`
		SpeedHorizontal float64 `json:"speed_horizontal"`
		IsGround        bool    `json:"is_ground"`
	} `json:"live"`
}

type apiEnd struct {
	Airport   string          `json:"airport"`
	Timezone  string          `json:"timezone"`
	IATA      string          `json:"iata"`
	ICAO      string          `json:"icao"`
	Terminal  json.RawMessage `json:"terminal"`
	Gate      json.RawMessage `json:"gate"`
	Baggage   json.RawMessage `json:"baggage"`
	Delay     *float64        `json:"delay"`
	Scheduled string          `json:"scheduled"`
	Estimated string          `json:"estimated"`
	Actual    string          `json:"actual"`
}

func (e apiEnd) endpoint() Endpoint {
	out := Endpoint{Airport: e.Airport, IATA: e.IATA, ICAO: e.ICAO, Timezone: e.Timezone,
		Terminal: loose(e.Terminal), Gate: loose(e.Gate), Baggage: loose(e.Baggage),
		Scheduled: e.Scheduled, Estimated: e.Estimated, Actual: e.Actual}
	if e.Delay != nil {
		out.Delay = int(*e.Delay)
	}
	return out
}

func (f apiFlight) flight() Flight {
	out := Flight{
		Date: f.FlightDate, Status: f.FlightStatus,
		Airline: Airline{Name: f.Airline.Name, IATA: f.Airline.IATA, ICAO: f.Airline.ICAO},
		Number:  f.Flight.Number, IATA: f.Flight.IATA, ICAO: f.Flight.ICAO,
		Departure: f.Departure.endpoint(), Arrival: f.Arrival.endpoint(),
	}
	if cs := f.Flight.Codeshared; cs != nil {
		out.Codeshared = strings.TrimSpace(strings.ToUpper(cs.FlightIATA) + " " + cs.AirlineName)
	}
	if a := f.Aircraft; a != nil && (a.Registration != "" || a.IATA != "" || a.ICAO != "") {
		out.Aircraft = &Aircraft{Registration: a.Registration, IATA: a.IATA, ICAO: a.ICAO}
	}
	if l := f.Live; l != nil && l.Updated != "" {
		out.Live = &Live{Updated: l.Updated, Latitude: l.Latitude, Longitude: l.Longitude, Altitude: l.Altitude,
			Direction: l.Direction, Speed: l.SpeedHorizontal, IsGround: l.IsGround}
	}
	return out
}

// loose reads a field AviationStack sends as a string, a number or null.
func loose(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	return ""
}

// describe reads AviationStack's {"error": {"code", "message"}}.
func describe(status int, body []byte) (string, bool) {
	var r flightsResponse
	if json.Unmarshal(body, &r) != nil || r.Error == nil {
		return "", false
	}
	return errorText(r.Error), errorKind(r.Error.Code) == apiclient.ErrRateLimited
}

func errorText(e *apiError) string {
	if e.Message == "" {
		return e.Code
	}
	return e.Message + " (" + e.Code + ")"
}

func errorKind(code string) error {
	switch code {
	case "usage_limit_reached", "rate_limit_reached":
		return apiclient.ErrRateLimited
	case "invalid_access_key", "missing_access_key", "inactive_user", "https_access_restricted", "function_access_restricted":
		return nil
	}
	return apiclient.ErrBadResponse
}
