package places

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

const googleKey = "AIzaSyDUMMY-secret-key-0123456789abcd"

func newTestClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	if cfg.NominatimInterval == 0 {
		cfg.NominatimInterval = time.Nanosecond
	}
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
var wantErr = apitest.ErrorCheck(googleKey)

// osmServer answers Nominatim with nom and Overpass with op.
func osmServer(t *testing.T, nom, op apitest.Reply) *apitest.Server {
	return apitest.New(t, apitest.ByPath(map[string]apitest.Reply{"/search": nom}, op))
}

func TestOverpassNearby(t *testing.T) {
	srv := osmServer(t,
		apitest.Reply{Body: apitest.Fixture(t, "nominatim_red_square.json")},
		apitest.Reply{Body: apitest.Fixture(t, "overpass_cafes.json")})
	c := newTestClient(t, Config{NominatimURL: srv.URL, OverpassURL: srv.URL, UserAgent: "Sova-test/1.0 (ops@example.org)"})
	if c.Provider() != OpenStreetMap {
		t.Errorf("Provider = %s", c.Provider())
	}

	res, err := c.Nearby(t.Context(), Request{Location: "Red Square, Moscow", Type: "Cafes", Radius: 800, Limit: 3, Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	nom := reqs[0]
	if nom.Method != http.MethodGet || nom.Path != "/search" || nom.Query.Encode() != "accept-language=en&format=jsonv2&limit=1&q=Red+Square%2C+Moscow" {
		t.Errorf("Nominatim request = %s %s?%s", nom.Method, nom.Path, nom.Query.Encode())
	}
	for _, r := range reqs {
		if ua := r.Header.Get("User-Agent"); ua != "Sova-test/1.0 (ops@example.org)" {
			t.Errorf("%s User-Agent = %q", r.Path, ua)
		}
	}
	op := reqs[1]
	if op.Method != http.MethodPost || op.Path != "/api/interpreter" || op.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("Overpass request = %s %s (%s)", op.Method, op.Path, op.Header.Get("Content-Type"))
	}
	form, err := url.ParseQuery(string(op.Body))
	if err != nil {
		t.Fatal(err)
	}
	wantQL := "[out:json][timeout:25];\nnwr[\"amenity\"=\"cafe\"](around:800,55.753628,37.621380);\nout center tags 300;\n"
	if got := form.Get("data"); got != wantQL {
		t.Errorf("Overpass QL =\n%s\nwant\n%s", got, wantQL)
	}

	wantCenter := Location{
		Name:     "Красная площадь, Китай-город, Тверской район, Москва, Центральный федеральный округ, 109012, Россия",
		Latitude: 55.7536283, Longitude: 37.6213796, Kind: "place/square", MapURL: "https://www.openstreetmap.org/way/4317693",
	}
	if res.Provider != OpenStreetMap || res.Center != wantCenter || res.Type != "cafe" || res.Radius != 800 {
		t.Errorf("result = %+v", res)
	}
	want := []Place{
		{ID: "node/2281093355", Name: "Bosco Cafe", Category: "cafe", Address: "Красная площадь 3", Latitude: 55.7543108, Longitude: 37.6199381,
			Distance: 118, OpeningHours: "10:00-23:00", Website: "https://www.bosco.ru/", MapURL: "https://www.openstreetmap.org/node/2281093355"},
		{ID: "way/176543210", Name: "Кофемания", Category: "cafe", Address: "Москва, улица Варварка, 6", Latitude: 55.7528411, Longitude: 37.6243967,
			Distance: 208, OpeningHours: "24/7", MapURL: "https://www.openstreetmap.org/way/176543210"},
		{ID: "node/1573841956", Name: "Shokoladnitsa", Category: "cafe", Address: "Никольская улица 10, 109012 Москва", Latitude: 55.7559718, Longitude: 37.6218452,
			Distance: 262, OpeningHours: "Mo-Su 08:00-23:00", Website: "https://shoko.ru/", Phone: "+7 495 123-45-67", MapURL: "https://www.openstreetmap.org/node/1573841956"},
	}
	if len(res.Places) != len(want) {
		t.Fatalf("places = %+v", res.Places)
	}
	for i := range want {
		if res.Places[i] != want[i] {
			t.Errorf("place %d = %+v\n want %+v", i, res.Places[i], want[i])
		}
	}

	// With coordinates there is no Nominatim call; unnamed places stay,
	// elements without a position do not.
	res, err = c.Nearby(t.Context(), Request{Latitude: ptr(55.7536283), Longitude: ptr(37.6213796), Type: "shop=coffee"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("requests = %d, want 3", n)
	}
	form, _ = url.ParseQuery(string(srv.Requests()[2].Body))
	if !strings.Contains(form.Get("data"), `nwr["shop"="coffee"](around:1000,55.753628,37.621380)`) {
		t.Errorf("QL = %s", form.Get("data"))
	}
	if len(res.Places) != 4 || res.Places[1].Name != "Кофемания" || res.Places[2].Name != "Шоколадница" || res.Places[3].Name != "" || res.Places[3].Distance != 555 {
		t.Errorf("places = %+v", res.Places)
	}
	if res.Type != "shop=coffee" || !strings.HasPrefix(res.Center.MapURL, "https://www.openstreetmap.org/?mlat=55.753628&mlon=37.621380") {
		t.Errorf("result = %+v", res)
	}
}

func TestOverpassFailures(t *testing.T) {
	nom := apitest.Reply{Body: apitest.Fixture(t, "nominatim_red_square.json")}
	cafes := apitest.Fixture(t, "overpass_cafes.json")
	html := map[string]string{"Content-Type": "text/html; charset=utf-8"}
	tests := []struct {
		name     string
		nom, op  apitest.Reply
		timeout  time.Duration
		wantHits int
		status   int
		want     []string
		is       error
		empty    bool
	}{
		{name: "Overpass 504 retried once", nom: nom, op: apitest.Reply{Status: 504, Body: "<html><body><h1>504 Gateway Time-out</h1>\nThe server didn't respond in time.\n</body></html>", Header: html},
			wantHits: 3, status: 504, want: []string{"Overpass: ", "HTTP 504 Gateway Timeout: 504 Gateway Time-out The server didn't respond in time."}},
		{name: "Overpass 429", nom: nom, op: apitest.Reply{Status: 429, Body: apitest.Fixture(t, "overpass_429.html"), Header: html},
			wantHits: 2, status: 429, want: []string{"HTTP 429 Too Many Requests: runtime error: open64: 0 Success /osm3s_osm_base Dispatcher_Client::request_read_and_idx::rate_limited. Please check /api/status"}, is: ErrRateLimited},
		{name: "Overpass 400 explained", nom: nom, op: apitest.Reply{Status: 400, Body: apitest.Fixture(t, "overpass_400.html"), Header: html},
			wantHits: 2, status: 400, want: []string{`HTTP 400 Bad Request: line 2: parse error: Unknown type "nwrx"`}},
		{name: "Overpass runtime error remark", nom: nom, op: apitest.Reply{Body: apitest.Fixture(t, "overpass_runtime_error.json")},
			wantHits: 2, want: []string{"the query failed: runtime error: Query timed out"}},
		{name: "Overpass timeout", nom: nom, op: apitest.Reply{Body: cafes, Delay: 3 * time.Second}, timeout: 100 * time.Millisecond,
			wantHits: 2, want: []string{"Overpass", "no answer", "within 100ms"}, is: context.DeadlineExceeded},
		{name: "Overpass malformed", nom: nom, op: apitest.Reply{Body: cafes[:400]}, wantHits: 2, want: []string{"Overpass", "not valid JSON"}},
		{name: "Overpass empty", nom: nom, op: apitest.Reply{Body: apitest.Fixture(t, "overpass_empty.json")}, wantHits: 2, empty: true},
		{name: "Nominatim 5xx", nom: apitest.Reply{Status: 503, Body: "Service Unavailable"}, wantHits: 2, status: 503, want: []string{"Nominatim: ", "HTTP 503"}},
		{name: "Nominatim 403 (policy)", nom: apitest.Reply{Status: 403, Body: "<html><body><h1>Access blocked</h1><p>You have been blocked because you have violated the usage policy of OSM's Nominatim geocoding service.</p></body></html>", Header: html},
			wantHits: 1, status: 403, want: []string{"Nominatim", "HTTP 403 Forbidden: Access blocked You have been blocked"}},
		{name: "Nominatim nothing found", nom: apitest.Reply{Body: `[]`}, wantHits: 1, want: []string{`no place found for "Red Square"`}, is: ErrNotFound},
		{name: "Nominatim malformed", nom: apitest.Reply{Body: `[{"lat":55.75,"lon":37.62}]`}, wantHits: 1, want: []string{"Nominatim", "not valid JSON"}},
		{name: "Nominatim bad coordinates", nom: apitest.Reply{Body: `[{"lat":"","lon":"37.62","display_name":"x"}]`}, wantHits: 1, want: []string{"no usable coordinates"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := osmServer(t, tt.nom, tt.op)
			c := newTestClient(t, Config{NominatimURL: srv.URL, OverpassURL: srv.URL, Timeout: tt.timeout})
			res, err := c.Nearby(t.Context(), Request{Location: "Red Square", Type: "cafe"})
			if n := len(srv.Requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
			if tt.empty {
				if err != nil || res == nil || len(res.Places) != 0 || res.Places == nil {
					t.Errorf("empty answer: %+v, %v; want an empty, non-nil list", res, err)
				}
				return
			}
			if res != nil {
				t.Errorf("a result came with the error: %+v", res)
			}
			wantErr(t, err, tt.status, tt.want...)
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(err, %v) = false: %v", tt.is, err)
			}
		})
	}
}

func TestNominatimRateLimit(t *testing.T) {
	srv := osmServer(t, apitest.Reply{Body: apitest.Fixture(t, "nominatim_red_square.json")}, apitest.Reply{})
	c := newTestClient(t, Config{NominatimURL: srv.URL, OverpassURL: srv.URL, NominatimInterval: 300 * time.Millisecond})
	start := time.Now()
	for range 3 {
		if _, err := c.Locate(t.Context(), "Red Square", ""); err != nil {
			t.Fatal(err)
		}
	}
	// The first call goes at once, each further one waits its interval.
	if d := time.Since(start); d < 550*time.Millisecond {
		t.Errorf("three calls took %v; the interval of 300ms was not kept", d)
	}
	reqs := srv.Requests()
	if q := reqs[0].Query; q.Has("accept-language") {
		t.Errorf("accept-language sent without a language: %s", q.Encode())
	}
	if ua := reqs[0].Header.Get("User-Agent"); ua != DefaultUserAgent || !strings.Contains(ua, "github.com/sova-ai/sova") {
		t.Errorf("default User-Agent = %q", ua)
	}

	// A cancelled context stops the wait.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, _ = c.Locate(ctx, "Red Square", "")
	_, err := c.Locate(ctx, "Red Square", "")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("waiting past the deadline: %v", err)
	}
}

func TestPublicNominatimIntervalFloor(t *testing.T) {
	c, err := New(Config{NominatimInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.nominatim.Options().Limiter.Limit(); got != 1 {
		t.Errorf("public Nominatim limit = %v per second, want 1", got)
	}
	c, err = New(Config{NominatimURL: "http://nominatim.internal:8080", NominatimInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.nominatim.Options().Limiter.Limit(); math.Abs(float64(got)-10) > 1e-9 {
		t.Errorf("own Nominatim limit = %v per second, want 10", got)
	}
}

func googleServer(t *testing.T, nom, g apitest.Reply) *apitest.Server {
	return osmServer(t, nom, g)
}

func TestGoogleNearby(t *testing.T) {
	srv := googleServer(t, apitest.Reply{Status: 500}, apitest.Reply{Body: apitest.Fixture(t, "google_nearby_cafes.json")})
	c := newTestClient(t, Config{NominatimURL: srv.URL, OverpassURL: srv.URL, GoogleMapsAPIKey: googleKey, GooglePlacesURL: srv.URL})
	if c.Provider() != GooglePlaces {
		t.Errorf("Provider = %s", c.Provider())
	}
	res, err := c.Nearby(t.Context(), Request{Latitude: ptr(37.8453), Longitude: ptr(-122.2518), Type: "coffee", Radius: 500, Limit: 50, Language: "en"})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost || r.Path != "/v1/places:searchNearby" || r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request = %s %s", r.Method, r.Path)
	}
	if r.Header.Get("X-Goog-Api-Key") != googleKey || r.Query.Has("key") {
		t.Errorf("key header = %q, query = %s", r.Header.Get("X-Goog-Api-Key"), r.Query.Encode())
	}
	if fm := r.Header.Get("X-Goog-FieldMask"); !strings.Contains(fm, "places.displayName") || !strings.Contains(fm, "places.location") || !strings.Contains(fm, "places.googleMapsUri") {
		t.Errorf("field mask = %q", fm)
	}
	var body map[string]any
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatal(err)
	}
	wantBody := `{"includedTypes":["cafe"],"languageCode":"en","locationRestriction":{"circle":{"center":{"latitude":37.8453,"longitude":-122.2518},"radius":500}},"maxResultCount":20,"rankPreference":"DISTANCE"}`
	if got, _ := json.Marshal(body); string(got) != wantBody {
		t.Errorf("body = %s\nwant   %s", got, wantBody)
	}

	if res.Provider != GooglePlaces || res.Type != "cafe" || res.Radius != 500 || res.Center.Latitude != 37.8453 {
		t.Errorf("result = %+v", res)
	}
	if len(res.Places) != 2 {
		t.Fatalf("places = %+v (the permanently closed one must go)", res.Places)
	}
	p := res.Places[0]
	if p.ID != "ChIJ2eUgeAK6j4ARbn5u_wAGqWA" || p.Name != "Philz Coffee" || p.Category != "coffee_shop" || p.Address != "5795 College Ave, Oakland, CA 94618, USA" ||
		p.Latitude != 37.8461 || p.Longitude != -122.2516 || p.Distance != 91 || p.Rating != 4.6 || p.RatingCount != 1270 ||
		p.PriceLevel != "PRICE_LEVEL_MODERATE" || p.Phone != "(510) 653-3394" || p.Website != "https://www.philzcoffee.com/" ||
		p.MapURL != "https://maps.google.com/?cid=6964011394429873774" || p.OpenNow == nil || !*p.OpenNow ||
		!strings.HasPrefix(p.OpeningHours, "Monday: 6:00 AM – 7:00 PM; Tuesday:") {
		t.Errorf("place 0 = %+v", p)
	}
	if p := res.Places[1]; p.Name != "Oliveto Cafe" || p.Category != "cafe" || p.Distance != 112 || p.OpenNow == nil || *p.OpenNow || p.OpeningHours != "" || p.Rating != 0 {
		t.Errorf("place 1 = %+v", p)
	}
}

func TestGoogleFailures(t *testing.T) {
	tests := []struct {
		name     string
		reply    apitest.Reply
		timeout  time.Duration
		wantHits int
		status   int
		want     []string
		is       error
		empty    bool
	}{
		{name: "bad key", reply: apitest.Reply{Status: 400, Body: `{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT","details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"API_KEY_INVALID","domain":"googleapis.com"}]}}`},
			wantHits: 1, status: 400, want: []string{"Google Places: ", "HTTP 400 Bad Request: API key not valid."}},
		{name: "API not enabled", reply: apitest.Reply{Status: 403, Body: `{"error":{"code":403,"message":"Places API (New) has not been used in project 123456789012 before or it is disabled.","status":"PERMISSION_DENIED"}}`},
			wantHits: 1, status: 403, want: []string{"HTTP 403 Forbidden: Places API (New) has not been used", "check GOOGLE_MAPS_API_KEY and that the Places API (New) is enabled"}},
		{name: "quota", reply: apitest.Reply{Status: 429, Body: `{"error":{"code":429,"message":"Quota exceeded for quota metric 'SearchNearby requests' and limit 'SearchNearby requests per minute'.","status":"RESOURCE_EXHAUSTED"}}`},
			wantHits: 1, status: 429, want: []string{"Quota exceeded"}, is: ErrRateLimited},
		{name: "5xx retried once", reply: apitest.Reply{Status: 500, Body: `{"error":{"code":500,"message":"Internal error encountered.","status":"INTERNAL"}}`},
			wantHits: 2, status: 500, want: []string{"Internal error encountered."}},
		{name: "timeout", reply: apitest.Reply{Body: `{}`, Delay: 3 * time.Second}, timeout: 100 * time.Millisecond, wantHits: 1, want: []string{"no answer"}, is: context.DeadlineExceeded},
		{name: "malformed", reply: apitest.Reply{Body: `{"places":[{"id":"x","location":{"latitude":"north"}}]}`}, wantHits: 1, want: []string{"not valid JSON"}},
		{name: "empty object", reply: apitest.Reply{Body: `{}`}, wantHits: 1, empty: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tt.reply))
			c := newTestClient(t, Config{GoogleMapsAPIKey: googleKey, GooglePlacesURL: srv.URL, NominatimURL: srv.URL, OverpassURL: srv.URL, Timeout: tt.timeout})
			res, err := c.Nearby(t.Context(), Request{Latitude: ptr(37.8453), Longitude: ptr(-122.2518), Type: "pharmacy"})
			if n := len(srv.Requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
			if tt.empty {
				if err != nil || res == nil || len(res.Places) != 0 {
					t.Errorf("empty answer: %+v, %v", res, err)
				}
				return
			}
			wantErr(t, err, tt.status, tt.want...)
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(err, %v) = false: %v", tt.is, err)
			}
		})
	}
}

func TestInputValidation(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: `[]`}))
	osm := newTestClient(t, Config{NominatimURL: srv.URL, OverpassURL: srv.URL})
	google := newTestClient(t, Config{NominatimURL: srv.URL, OverpassURL: srv.URL, GoogleMapsAPIKey: googleKey, GooglePlacesURL: srv.URL})
	tests := []struct {
		name string
		c    *Client
		r    Request
		want string
	}{
		{"no location", osm, Request{Type: "cafe"}, "no location given"},
		{"longitude alone", osm, Request{Longitude: ptr(1), Type: "cafe"}, "both latitude and longitude"},
		{"latitude out of range", osm, Request{Latitude: ptr(-91), Longitude: ptr(0), Type: "cafe"}, "latitude -91 is out of range"},
		{"longitude out of range", osm, Request{Latitude: ptr(0), Longitude: ptr(181), Type: "cafe"}, "longitude 181 is out of range"},
		{"no type", osm, Request{Location: "Moscow"}, "no type of place given"},
		{"QL injection", osm, Request{Location: "Moscow", Type: `cafe"](around:99999,0,0);out;//`}, "is not a type of place"},
		{"unknown tag key", osm, Request{Location: "Moscow", Type: "name=Starbucks"}, "not a tag this search takes"},
		{"tag value with a quote", osm, Request{Location: "Moscow", Type: `shop=bo"oks`}, "not a tag this search takes"},
		{"tag on Google", google, Request{Location: "Moscow", Type: "shop=books"}, "is an OpenStreetMap tag"},
		{"radius too big", osm, Request{Location: "Moscow", Type: "cafe", Radius: 20001}, "radius must be between 1 and 20000"},
		{"negative radius", osm, Request{Location: "Moscow", Type: "cafe", Radius: -5}, "radius must be between"},
		{"negative limit", osm, Request{Location: "Moscow", Type: "cafe", Limit: -1}, "limit must be positive"},
		{"language", osm, Request{Location: "Moscow", Type: "cafe", Language: "russian"}, `language "russian"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.c.Nearby(t.Context(), tt.r)
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalidInput containing %q", err, tt.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests for invalid input", n)
	}
}

func TestParseType(t *testing.T) {
	tests := []struct {
		in                     string
		name, key, val, google string
	}{
		{"cafe", "cafe", "amenity", "cafe", "cafe"},
		{"Coffee Shop", "cafe", "amenity", "cafe", "cafe"},
		{"restaurants", "restaurant", "amenity", "restaurant", "restaurant"},
		{"gas station", "fuel", "amenity", "fuel", "gas_station"},
		{"ATMs", "atm", "amenity", "atm", "atm"},
		{"toilets", "toilets", "amenity", "toilets", "public_bathroom"},
		{"hotel", "hotel", "tourism", "hotel", "hotel"},
		{"train-station", "train_station", "railway", "station", "train_station"},
		{"ice_cream", "ice_cream", "amenity", "ice_cream", "ice_cream"},
		{"shop=books", "shop=books", "shop", "books", "books"},
	}
	for _, tt := range tests {
		c, err := parseType(tt.in, false)
		if err != nil || c.name != tt.name || c.key != tt.key || c.value != tt.val || c.google != tt.google {
			t.Errorf("parseType(%q) = %+v, %v", tt.in, c, err)
		}
	}
}

func TestDistance(t *testing.T) {
	// Paris to London, about 343.5 km along the great circle.
	if d := distance(48.8566, 2.3522, 51.5074, -0.1278); d < 343000 || d > 344500 {
		t.Errorf("Paris–London = %.0f m", d)
	}
	if d := distance(10, 20, 10, 20); d != 0 {
		t.Errorf("same point = %v", d)
	}
	// Antipodes: half the circumference.
	if d := distance(0, 0, 0, 180); math.Abs(d-math.Pi*earthRadius) > 1 {
		t.Errorf("antipodes = %v", d)
	}
}
