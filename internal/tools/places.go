package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/places"
)

// NearbyPlacesSearchName is the web group's places tool (seed 000 §1.2).
const NearbyPlacesSearchName = places.ToolName

// PlacesArgs are nearby_places_search's arguments.
type PlacesArgs struct {
	Location  string   `json:"location,omitempty" jsonschema:"where to search around, as a person names it (Alexanderplatz, Berlin)"`
	Latitude  *float64 `json:"latitude,omitempty" jsonschema:"latitude of the point, with longitude, instead of location"`
	Longitude *float64 `json:"longitude,omitempty" jsonschema:"longitude of the point, with latitude, instead of location"`
	Type      string   `json:"type" jsonschema:"the kind of place: cafe, restaurant, pharmacy, atm, hospital, hotel, supermarket, … or an OpenStreetMap tag such as shop=books"`
	Radius    int      `json:"radius,omitempty" jsonschema:"search radius in metres, up to 20000 (default 1000)"`
	Limit     int      `json:"limit,omitempty" jsonschema:"how many places, nearest first, up to 50 (default 10)"`
}

// PlacesResult is nearby_places_search's output.
type PlacesResult struct {
	Provider string        `json:"provider"`
	Center   PlacesCenter  `json:"center"`
	Type     string        `json:"type"`
	Radius   int           `json:"radius"`
	Places   []PlaceResult `json:"places"`
}

// PlacesCenter is the point searched around.
type PlacesCenter struct {
	Name      string  `json:"name"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	MapURL    string  `json:"mapUrl,omitempty"`
}

// PlaceResult is one place found.
type PlaceResult struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Category     string  `json:"category"`
	Address      string  `json:"address,omitempty"`
	Latitude     float64 `json:"latitude"`
	Longitude    float64 `json:"longitude"`
	Distance     float64 `json:"distance"`
	OpeningHours string  `json:"openingHours,omitempty"`
	OpenNow      *bool   `json:"openNow,omitempty"`
	Website      string  `json:"website,omitempty"`
	Phone        string  `json:"phone,omitempty"`
	Rating       float64 `json:"rating,omitempty"`
	RatingCount  int     `json:"ratingCount,omitempty"`
	PriceLevel   string  `json:"priceLevel,omitempty"`
	MapURL       string  `json:"mapUrl,omitempty"`
}

// PlacesOptions tune a nearby_places_search tool.
type PlacesOptions struct {
	// Language of names and addresses ("en", "ru", …); "" local names.
	Language string
}

// NearbyPlacesSearch is the nearby_places_search tool: places of a kind
// near a point, from OpenStreetMap, or Google Places with its key.
func NearbyPlacesSearch(run *Run, o PlacesOptions) agent.Tool {
	call := func(ctx context.Context, a PlacesArgs) (agent.Output, error) {
		if run.p.Places == nil {
			return agent.Output{}, errors.New("places search is not available")
		}
		if strings.TrimSpace(a.Type) == "" {
			return agent.Output{}, errors.New("give the type of place to look for")
		}
		if strings.TrimSpace(a.Location) == "" && (a.Latitude == nil || a.Longitude == nil) {
			return agent.Output{}, errors.New("give the location, or its latitude and longitude")
		}
		r, err := run.p.Places.Nearby(ctx, places.Request{Location: a.Location, Latitude: a.Latitude, Longitude: a.Longitude,
			Type: a.Type, Radius: a.Radius, Limit: a.Limit, Language: o.Language})
		if err != nil {
			return agent.Output{}, err
		}
		out := PlacesResult{Provider: r.Provider, Type: r.Type, Radius: r.Radius, Places: []PlaceResult{},
			Center: PlacesCenter{r.Center.Name, r.Center.Latitude, r.Center.Longitude, r.Center.MapURL}}
		for _, p := range r.Places {
			out.Places = append(out.Places, PlaceResult{ID: p.ID, Name: p.Name, Category: p.Category, Address: p.Address,
				Latitude: p.Latitude, Longitude: p.Longitude, Distance: p.Distance, OpeningHours: p.OpeningHours, OpenNow: p.OpenNow,
				Website: p.Website, Phone: p.Phone, Rating: p.Rating, RatingCount: p.RatingCount, PriceLevel: p.PriceLevel, MapURL: p.MapURL})
		}
		return jsonOutput(out, fmt.Sprintf("%s within %d m", plural(len(out.Places), "place", "places"), r.Radius))
	}
	return agent.NewTool(NearbyPlacesSearchName,
		"Find places of a kind (cafés, pharmacies, ATMs, hotels, …) near a place or a point, nearest first, with addresses, opening hours and distances.", call,
		agent.WithTitle(func(a PlacesArgs) string {
			if a.Location != "" {
				return "Looking for " + clip(a.Type, 40) + " near " + clip(a.Location, 60)
			}
			return "Looking for " + clip(a.Type, 40) + " nearby"
		}))
}
