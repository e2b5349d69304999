// Package places fetches the data of the nearby_places_search tool (seed
// 000 §1.2): places of a kind (cafés, pharmacies, ATMs, ...) within a
// radius of a point or of a place named in words.
//
// A named place is located with Nominatim (GET /search?format=jsonv2),
// whose usage policy asks for an identifying User-Agent and at most one
// request a second; the Client keeps both. Without a key the places come
// from OpenStreetMap through Overpass (POST /api/interpreter). With
// GOOGLE_MAPS_API_KEY they come from the Google Places API (New), Nearby
// Search (POST /v1/places:searchNearby): the tool asks for places of a
// type within a circle, which is exactly what Nearby Search takes (type
// list, circle restriction, ranking by distance), whereas Text Search
// matches free text and only biases toward an area.
package places

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Public addresses and defaults.
const (
	DefaultNominatimURL    = "https://nominatim.openstreetmap.org"
	DefaultOverpassURL     = "https://overpass-api.de"
	DefaultGooglePlacesURL = "https://places.googleapis.com"
	DefaultUserAgent       = apiclient.DefaultUserAgent
	// DefaultNominatimInterval is the public Nominatim's limit: one
	// request a second.
	DefaultNominatimInterval = time.Second
	// DefaultTimeout bounds one call, its retry included; Overpass
	// queries may take long.
	DefaultTimeout = 30 * time.Second

	DefaultRadius = 1000  // metres
	MaxRadius     = 20000 // metres
	DefaultLimit  = 10
	MaxLimit      = 50
	// maxGoogleResults is Nearby Search's maxResultCount ceiling.
	maxGoogleResults = 20
	// overpassFetch is how many elements Overpass returns at most; they
	// come in id order, so more than asked are sorted by distance.
	overpassFetch = 300
	// overpassQueryTimeout is the [timeout:] of the Overpass query, in
	// seconds.
	overpassQueryTimeout = 25
)

// Provider names, as Result.Provider and errors give them.
const (
	OpenStreetMap = "OpenStreetMap"
	GooglePlaces  = "Google Places"
	nominatimName = "Nominatim"
	overpassName  = "Overpass"
)

// publicNominatimHost is the service whose policy the interval enforces.
const publicNominatimHost = "nominatim.openstreetmap.org"

// Config addresses the providers. Its env tags are the settings that
// docs/configuration.md describes; a zero Config means the public
// OpenStreetMap services.
type Config struct {
	// NominatimURL is the base of GET /search.
	// SOVA_NOMINATIM_URL, default https://nominatim.openstreetmap.org.
	NominatimURL string `env:"SOVA_NOMINATIM_URL" envDefault:"https://nominatim.openstreetmap.org"`
	// OverpassURL is the base of POST /api/interpreter.
	// SOVA_OVERPASS_URL, default https://overpass-api.de.
	OverpassURL string `env:"SOVA_OVERPASS_URL" envDefault:"https://overpass-api.de"`
	// UserAgent identifies this installation to Nominatim and Overpass;
	// their policies refuse library defaults. Adding a contact address is
	// welcome. SOVA_NOMINATIM_USER_AGENT, default
	// "sova/1 (self-hosted AI search; +https://github.com/sova-ai/sova)",
	// which is DefaultUserAgent.
	UserAgent string `env:"SOVA_NOMINATIM_USER_AGENT" envDefault:"sova/1 (self-hosted AI search; +https://github.com/sova-ai/sova)"`
	// NominatimInterval is the least time between two Nominatim requests
	// from this Client; the public service never gets less than 1s.
	// SOVA_NOMINATIM_INTERVAL, default 1s.
	NominatimInterval time.Duration `env:"SOVA_NOMINATIM_INTERVAL" envDefault:"1s"`
	// GoogleMapsAPIKey switches the places (not the locating) to Google
	// Places. GOOGLE_MAPS_API_KEY.
	GoogleMapsAPIKey string `env:"GOOGLE_MAPS_API_KEY"`
	// GooglePlacesURL is the base of POST /v1/places:searchNearby.
	// SOVA_GOOGLE_PLACES_URL, default https://places.googleapis.com.
	GooglePlacesURL string `env:"SOVA_GOOGLE_PLACES_URL" envDefault:"https://places.googleapis.com"`
	// Timeout bounds one call, its retry and its wait for a Nominatim turn
	// included. SOVA_PLACES_TIMEOUT, default 30s.
	Timeout time.Duration `env:"SOVA_PLACES_TIMEOUT" envDefault:"30s"`

	// RetryBackoff is the pause before retrying a 5xx answer or a network
	// failure; 0 means 500ms (1s for Overpass), negative turns the retry
	// off.
	RetryBackoff time.Duration
}

// Errors to test with errors.Is. Every error is an *Error.
var (
	ErrRateLimited  = apiclient.ErrRateLimited  // HTTP 429
	ErrNotFound     = apiclient.ErrNotFound     // the location was not found
	ErrInvalidInput = apiclient.ErrInvalidInput // rejected before any request
)

// Error is a failed call; it names the provider and the HTTP status, never
// the key.
type Error = apiclient.Error

// Request asks for places near a point.
type Request struct {
	// Location is where to search around ("Red Square, Moscow"); it is
	// located with Nominatim unless Latitude and Longitude are both set.
	Location  string
	Latitude  *float64
	Longitude *float64
	// Type is the kind of place: one of Types() ("cafe", "pharmacy",
	// "atm", ...), another OpenStreetMap amenity value, or an explicit tag
	// such as "shop=books" (OpenStreetMap only).
	Type string
	// Radius in metres, up to MaxRadius; 0 means DefaultRadius.
	Radius int
	// Limit is how many places to return, nearest first, up to MaxLimit
	// (20 on Google); 0 means DefaultLimit.
	Limit int
	// Language of names and addresses: "en", "ru", ...; "" leaves the
	// provider's default (local names).
	Language string
}

// Result is the places found.
type Result struct {
	Provider string   // OpenStreetMap or GooglePlaces
	Center   Location // the point searched around
	Type     string   // the kind searched for, as understood
	Radius   int      // metres
	Places   []Place  // nearest first; empty when none is within the radius
}

// Location is a located point.
type Location struct {
	Name      string // Nominatim's display name; the request's Location for given coordinates
	Latitude  float64
	Longitude float64
	Kind      string // Nominatim's category/type, e.g. "place/square"
	MapURL    string
}

// Place is one place found.
type Place struct {
	ID           string // "node/123" on OpenStreetMap; the place id on Google
	Name         string // may be empty for unnamed amenities (ATMs, toilets)
	Category     string // the OpenStreetMap tag value or Google's primary type
	Address      string
	Latitude     float64
	Longitude    float64
	Distance     float64 // metres from Result.Center, great-circle
	OpeningHours string  // OSM opening_hours syntax, or Google's weekday lines joined by "; "
	OpenNow      *bool   // Google only
	Website      string
	Phone        string
	Rating       float64 // Google only; 0 when none
	RatingCount  int     // Google only
	PriceLevel   string  // Google only, e.g. "PRICE_LEVEL_MODERATE"
	MapURL       string  // openstreetmap.org or Google Maps
}

// Client finds places. It is safe for concurrent use; share one Client so
// that Nominatim's one-request-a-second limit holds for the process.
type Client struct {
	nominatim    *apiclient.Client
	overpass     *apiclient.Client
	google       *apiclient.Client // nil without a key
	nominatimURL string
	overpassURL  string
	googleURL    string
	googleKey    string
}

// New returns a Client for cfg. It fails when a URL is not an absolute
// http(s) address.
func New(cfg Config) (*Client, error) {
	nomURL, err := apiclient.BaseURL("SOVA_NOMINATIM_URL", cfg.NominatimURL, DefaultNominatimURL)
	if err != nil {
		return nil, err
	}
	opURL, err := apiclient.BaseURL("SOVA_OVERPASS_URL", cfg.OverpassURL, DefaultOverpassURL)
	if err != nil {
		return nil, err
	}
	ua := strings.TrimSpace(cfg.UserAgent)
	if ua == "" {
		ua = DefaultUserAgent
	}
	interval := cfg.NominatimInterval
	if interval < 0 {
		interval = 0
	}
	if u, _ := url.Parse(nomURL); u != nil && u.Hostname() == publicNominatimHost && interval < DefaultNominatimInterval {
		interval = DefaultNominatimInterval
	}
	limit := rate.Inf
	if interval > 0 {
		limit = rate.Every(interval)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	opBackoff := cfg.RetryBackoff
	if opBackoff == 0 {
		opBackoff = 2 * apiclient.DefaultRetryBackoff
	}
	c := &Client{
		nominatim: apiclient.New(apiclient.Options{
			Provider: nominatimName, Bases: []string{nomURL}, Timeout: timeout, UserAgent: ua, RetryBackoff: cfg.RetryBackoff,
			Limiter: rate.NewLimiter(limit, 1),
		}),
		overpass: apiclient.New(apiclient.Options{
			Provider: overpassName, Bases: []string{opURL}, Timeout: timeout, UserAgent: ua, RetryBackoff: opBackoff,
			Describe: describeOverpass,
		}),
		nominatimURL: nomURL,
		overpassURL:  opURL,
	}
	if key := strings.TrimSpace(cfg.GoogleMapsAPIKey); key != "" {
		gURL, err := apiclient.BaseURL("SOVA_GOOGLE_PLACES_URL", cfg.GooglePlacesURL, DefaultGooglePlacesURL)
		if err != nil {
			return nil, err
		}
		c.google = apiclient.New(apiclient.Options{
			Provider: GooglePlaces, Bases: []string{gURL}, Timeout: timeout, RetryBackoff: cfg.RetryBackoff, Secrets: []string{key},
			Hint: func(status int) string {
				if status == http.StatusUnauthorized || status == http.StatusForbidden {
					return "check GOOGLE_MAPS_API_KEY and that the Places API (New) is enabled for it"
				}
				return ""
			},
		})
		c.googleURL, c.googleKey = gURL, key
	}
	return c, nil
}

// Provider names the service the places come from.
func (c *Client) Provider() string {
	if c.google != nil {
		return GooglePlaces
	}
	return OpenStreetMap
}

// Nearby finds places of r.Type within r.Radius of r's point, nearest
// first.
func (c *Client) Nearby(ctx context.Context, r Request) (*Result, error) {
	q, cat, err := c.normalize(r)
	if err != nil {
		return nil, err
	}
	var center *Location
	if q.Latitude != nil {
		center = &Location{Name: q.Location, Latitude: *q.Latitude, Longitude: *q.Longitude, MapURL: pointURL(*q.Latitude, *q.Longitude)}
	} else {
		center, err = c.Locate(ctx, q.Location, q.Language)
		if err != nil {
			return nil, err
		}
	}
	res := &Result{Provider: c.Provider(), Center: *center, Type: cat.name, Radius: q.Radius}
	if c.google != nil {
		res.Places, err = c.googleNearby(ctx, *center, cat, q)
	} else {
		res.Places, err = c.overpassNearby(ctx, *center, cat, q)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

var languageRE = regexp.MustCompile(`^[a-z]{2,3}([-_][A-Za-z]{2,4})?$`)

func (c *Client) normalize(r Request) (Request, category, error) {
	q := r
	q.Location = strings.TrimSpace(r.Location)
	if (r.Latitude == nil) != (r.Longitude == nil) {
		return q, category{}, c.invalid("give both latitude and longitude, or neither")
	}
	if r.Latitude != nil {
		if err := checkCoordinates(*r.Latitude, *r.Longitude); err != nil {
			return q, category{}, err
		}
	} else if err := checkQuery(q.Location); err != nil {
		return q, category{}, err
	}
	cat, err := parseType(r.Type, c.google != nil)
	if err != nil {
		return q, category{}, err
	}
	switch {
	case r.Radius == 0:
		q.Radius = DefaultRadius
	case r.Radius < 1 || r.Radius > MaxRadius:
		return q, category{}, c.invalid("radius must be between 1 and %d metres, not %d", MaxRadius, r.Radius)
	}
	maxLimit := MaxLimit
	if c.google != nil {
		maxLimit = maxGoogleResults
	}
	switch {
	case r.Limit == 0:
		q.Limit = min(DefaultLimit, maxLimit)
	case r.Limit < 1:
		return q, category{}, c.invalid("limit must be positive, not %d", r.Limit)
	default:
		q.Limit = min(r.Limit, maxLimit)
	}
	q.Language = strings.TrimSpace(r.Language)
	if q.Language != "" && !languageRE.MatchString(q.Language) {
		return q, category{}, c.invalid("language %q is not a language code such as en or ru", r.Language)
	}
	return q, cat, nil
}

func (c *Client) invalid(format string, args ...any) error {
	return apiclient.Invalid(c.Provider(), format, args...)
}

func checkCoordinates(lat, lon float64) error {
	if math.IsNaN(lat) || lat < -90 || lat > 90 {
		return apiclient.Invalid(nominatimName, "latitude %v is out of range (-90 to 90)", lat)
	}
	if math.IsNaN(lon) || lon < -180 || lon > 180 {
		return apiclient.Invalid(nominatimName, "longitude %v is out of range (-180 to 180)", lon)
	}
	return nil
}

func checkQuery(q string) error {
	if q == "" {
		return apiclient.Invalid(nominatimName, "no location given: name a place or give latitude and longitude")
	}
	if len([]rune(q)) > 300 {
		return apiclient.Invalid(nominatimName, "the location is longer than 300 characters")
	}
	return nil
}

// earthRadius is the mean Earth radius in metres (IUGG).
const earthRadius = 6371008.8

// distance is the great-circle distance in metres between two points, by
// the haversine formula.
func distance(lat1, lon1, lat2, lon2 float64) float64 {
	rad := math.Pi / 180
	dLat := (lat2 - lat1) * rad
	dLon := (lon2 - lon1) * rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthRadius * math.Asin(math.Min(1, math.Sqrt(a)))
}

func pointURL(lat, lon float64) string {
	return "https://www.openstreetmap.org/?mlat=" + coord(lat) + "&mlon=" + coord(lon) + "#map=17/" + coord(lat) + "/" + coord(lon)
}

func coord(x float64) string { return strconv.FormatFloat(x, 'f', 6, 64) }
