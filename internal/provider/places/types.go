package places

import (
	"regexp"
	"slices"
	"strings"

	"github.com/sova-ai/sova/internal/apiclient"
)

// category is a kind of place in both providers' terms.
type category struct {
	name   string // as Result.Type reports it
	key    string // OpenStreetMap tag key
	value  string // OpenStreetMap tag value
	google string // Google Places (New) type; "" when Google has none
}

// known maps the kinds the tool names to OpenStreetMap tags and Google
// Places (New) Table A types.
var known = []category{
	{"restaurant", "amenity", "restaurant", "restaurant"},
	{"cafe", "amenity", "cafe", "cafe"},
	{"bar", "amenity", "bar", "bar"},
	{"pub", "amenity", "pub", "pub"},
	{"fast_food", "amenity", "fast_food", "fast_food_restaurant"},
	{"bakery", "shop", "bakery", "bakery"},
	{"supermarket", "shop", "supermarket", "supermarket"},
	{"convenience", "shop", "convenience", "convenience_store"},
	{"pharmacy", "amenity", "pharmacy", "pharmacy"},
	{"hospital", "amenity", "hospital", "hospital"},
	{"clinic", "amenity", "clinic", "medical_clinic"},
	{"doctors", "amenity", "doctors", "doctor"},
	{"dentist", "amenity", "dentist", "dentist"},
	{"atm", "amenity", "atm", "atm"},
	{"bank", "amenity", "bank", "bank"},
	{"fuel", "amenity", "fuel", "gas_station"},
	{"charging_station", "amenity", "charging_station", "electric_vehicle_charging_station"},
	{"parking", "amenity", "parking", "parking"},
	{"police", "amenity", "police", "police"},
	{"post_office", "amenity", "post_office", "post_office"},
	{"school", "amenity", "school", "school"},
	{"university", "amenity", "university", "university"},
	{"library", "amenity", "library", "library"},
	{"cinema", "amenity", "cinema", "movie_theater"},
	{"theatre", "amenity", "theatre", "performing_arts_theater"},
	{"toilets", "amenity", "toilets", "public_bathroom"},
	{"place_of_worship", "amenity", "place_of_worship", "place_of_worship"},
	{"hotel", "tourism", "hotel", "hotel"},
	{"hostel", "tourism", "hostel", "hostel"},
	{"museum", "tourism", "museum", "museum"},
	{"attraction", "tourism", "attraction", "tourist_attraction"},
	{"park", "leisure", "park", "park"},
	{"gym", "leisure", "fitness_centre", "gym"},
	{"playground", "leisure", "playground", "playground"},
	{"bus_station", "amenity", "bus_station", "bus_station"},
	{"train_station", "railway", "station", "train_station"},
}

// aliases are other words for known kinds.
var aliases = map[string]string{
	"coffee": "cafe", "coffee_shop": "cafe", "café": "cafe",
	"gas_station": "fuel", "petrol_station": "fuel", "gas": "fuel",
	"doctor": "doctors", "medical_clinic": "clinic", "drugstore": "pharmacy", "chemist": "pharmacy",
	"cash_machine": "atm", "grocery": "supermarket", "grocery_store": "supermarket", "convenience_store": "convenience",
	"movie_theater": "cinema", "theater": "theatre", "toilet": "toilets", "restroom": "toilets", "public_bathroom": "toilets",
	"fitness": "gym", "fitness_centre": "gym", "fitness_center": "gym",
	"tourist_attraction": "attraction", "sights": "attraction", "fast_food_restaurant": "fast_food",
	"ev_charging": "charging_station", "electric_vehicle_charging_station": "charging_station",
	"church": "place_of_worship", "railway_station": "train_station", "station": "train_station",
	"motel": "hotel", "lodging": "hotel",
}

// Types lists the kinds of place Request.Type names directly.
func Types() []string {
	out := make([]string, len(known))
	for i, k := range known {
		out[i] = k.name
	}
	return out
}

var (
	wordRE   = regexp.MustCompile(`^[a-z][a-z0-9_]{1,40}$`)
	tagKeys  = []string{"amenity", "shop", "tourism", "leisure", "healthcare", "craft", "office", "railway", "historic", "sport", "emergency"}
	tagValRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_;-]{0,40}$`)
)

// parseType reads Request.Type. The result is safe to put into an
// Overpass query: keys come from a list, values match [a-z0-9_;-].
func parseType(t string, google bool) (category, error) {
	s := strings.ToLower(strings.TrimSpace(t))
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "-", "_")), "_")
	if s == "" {
		return category{}, apiclient.Invalid(providerFor(google), "no type of place given (such as %s)", strings.Join(Types()[:8], ", "))
	}
	if key, value, ok := strings.Cut(s, "="); ok {
		if google {
			return category{}, apiclient.Invalid(GooglePlaces, "%q is an OpenStreetMap tag; Google Places takes a type such as %s", t, strings.Join(Types()[:8], ", "))
		}
		if !slices.Contains(tagKeys, key) || !tagValRE.MatchString(value) {
			return category{}, apiclient.Invalid(OpenStreetMap, "%q is not a tag this search takes (key one of %s, value of letters, digits and _)", t, strings.Join(tagKeys, ", "))
		}
		return category{name: key + "=" + value, key: key, value: value, google: value}, nil
	}
	if a, ok := aliases[s]; ok {
		s = a
	}
	for _, cand := range []string{s, strings.TrimSuffix(s, "s"), strings.TrimSuffix(s, "es")} {
		if a, ok := aliases[cand]; ok {
			cand = a
		}
		for _, k := range known {
			if k.name == cand {
				return k, nil
			}
		}
	}
	if !wordRE.MatchString(s) {
		return category{}, apiclient.Invalid(providerFor(google), "%q is not a type of place (such as %s)", t, strings.Join(Types()[:8], ", "))
	}
	// Another amenity value (OpenStreetMap) or Google type, passed on.
	return category{name: s, key: "amenity", value: s, google: s}, nil
}

func providerFor(google bool) string {
	if google {
		return GooglePlaces
	}
	return OpenStreetMap
}
