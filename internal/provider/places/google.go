package places

import (
	"context"
	"math"
	"net/http"
	"strings"
)

// googleFieldMask lists the fields Nearby Search returns (required by the
// API; fewer fields cost less).
const googleFieldMask = "places.id,places.displayName,places.formattedAddress,places.location,places.primaryType," +
	"places.types,places.rating,places.userRatingCount,places.googleMapsUri,places.websiteUri," +
	"places.nationalPhoneNumber,places.regularOpeningHours.weekdayDescriptions,places.currentOpeningHours.openNow," +
	"places.priceLevel,places.businessStatus"

// googleNearby asks POST /v1/places:searchNearby for places of the
// category's type within the circle, ranked by distance.
func (c *Client) googleNearby(ctx context.Context, center Location, cat category, r Request) ([]Place, error) {
	type latLng struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	}
	body := map[string]any{
		"includedTypes":  []string{cat.google},
		"maxResultCount": r.Limit,
		"rankPreference": "DISTANCE",
		"locationRestriction": map[string]any{
			"circle": map[string]any{
				"center": latLng{center.Latitude, center.Longitude},
				"radius": float64(r.Radius),
			},
		},
	}
	if r.Language != "" {
		body["languageCode"] = r.Language
	}
	var resp struct {
		Places []struct {
			ID          string `json:"id"`
			DisplayName struct {
				Text string `json:"text"`
			} `json:"displayName"`
			FormattedAddress    string   `json:"formattedAddress"`
			Location            latLng   `json:"location"`
			PrimaryType         string   `json:"primaryType"`
			Types               []string `json:"types"`
			Rating              float64  `json:"rating"`
			UserRatingCount     int      `json:"userRatingCount"`
			GoogleMapsURI       string   `json:"googleMapsUri"`
			WebsiteURI          string   `json:"websiteUri"`
			NationalPhoneNumber string   `json:"nationalPhoneNumber"`
			RegularOpeningHours *struct {
				WeekdayDescriptions []string `json:"weekdayDescriptions"`
			} `json:"regularOpeningHours"`
			CurrentOpeningHours *struct {
				OpenNow *bool `json:"openNow"`
			} `json:"currentOpeningHours"`
			PriceLevel     string `json:"priceLevel"`
			BusinessStatus string `json:"businessStatus"`
		} `json:"places"`
	}
	header := http.Header{"X-Goog-Api-Key": {c.googleKey}, "X-Goog-Fieldmask": {googleFieldMask}}
	err := c.google.PostJSON(ctx, c.googleURL+"/v1/places:searchNearby", header, body, &resp)
	if err != nil {
		return nil, err
	}

	places := make([]Place, 0, len(resp.Places))
	for _, g := range resp.Places {
		if g.BusinessStatus == "CLOSED_PERMANENTLY" {
			continue
		}
		p := Place{
			ID:          g.ID,
			Name:        g.DisplayName.Text,
			Category:    g.PrimaryType,
			Address:     g.FormattedAddress,
			Latitude:    g.Location.Latitude,
			Longitude:   g.Location.Longitude,
			Distance:    math.Round(distance(center.Latitude, center.Longitude, g.Location.Latitude, g.Location.Longitude)),
			Website:     g.WebsiteURI,
			Phone:       g.NationalPhoneNumber,
			Rating:      g.Rating,
			RatingCount: g.UserRatingCount,
			PriceLevel:  g.PriceLevel,
			MapURL:      g.GoogleMapsURI,
		}
		if p.Category == "" && len(g.Types) > 0 {
			p.Category = g.Types[0]
		}
		if g.RegularOpeningHours != nil {
			p.OpeningHours = strings.Join(g.RegularOpeningHours.WeekdayDescriptions, "; ")
		}
		if g.CurrentOpeningHours != nil {
			p.OpenNow = g.CurrentOpeningHours.OpenNow
		}
		places = append(places, p)
	}
	return places, nil
}
