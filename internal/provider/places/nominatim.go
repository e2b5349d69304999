package places

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Locate finds the point a query names: GET /search?q=&format=jsonv2
// &limit=1&accept-language=. Calls wait their turn so that Nominatim gets
// no more than one request per NominatimInterval from this Client.
func (c *Client) Locate(ctx context.Context, query, language string) (*Location, error) {
	query = strings.TrimSpace(query)
	if err := checkQuery(query); err != nil {
		return nil, err
	}
	language = strings.TrimSpace(language)
	if language != "" && !languageRE.MatchString(language) {
		return nil, apiclient.Invalid(nominatimName, "language %q is not a language code such as en or ru", language)
	}
	q := url.Values{"q": {query}, "format": {"jsonv2"}, "limit": {"1"}}
	if language != "" {
		q.Set("accept-language", language)
	}
	var resp []struct {
		PlaceID     int64  `json:"place_id"`
		OSMType     string `json:"osm_type"`
		OSMID       int64  `json:"osm_id"`
		Lat         string `json:"lat"`
		Lon         string `json:"lon"`
		Category    string `json:"category"`
		Type        string `json:"type"`
		Name        string `json:"name"`
		DisplayName string `json:"display_name"`
	}
	if err := c.nominatim.GetJSON(ctx, c.nominatimURL+"/search?"+q.Encode(), nil, &resp); err != nil {
		return nil, err
	}
	if len(resp) == 0 {
		return nil, apiclient.NotFound(nominatimName, "no place found for %q", query)
	}
	r := resp[0]
	lat, err1 := strconv.ParseFloat(r.Lat, 64)
	lon, err2 := strconv.ParseFloat(r.Lon, 64)
	if err1 != nil || err2 != nil || checkCoordinates(lat, lon) != nil {
		return nil, &Error{Provider: nominatimName, Message: "the answer has no usable coordinates (lat " + strconv.Quote(r.Lat) + ", lon " + strconv.Quote(r.Lon) + ")"}
	}
	loc := &Location{Name: r.DisplayName, Latitude: lat, Longitude: lon, MapURL: pointURL(lat, lon)}
	if loc.Name == "" {
		loc.Name = r.Name
	}
	if r.Category != "" || r.Type != "" {
		loc.Kind = r.Category + "/" + r.Type
	}
	if osmType := osmTypes[r.OSMType]; osmType != "" && r.OSMID > 0 {
		loc.MapURL = "https://www.openstreetmap.org/" + osmType + "/" + strconv.FormatInt(r.OSMID, 10)
	}
	return loc, nil
}

// osmTypes maps Nominatim's osm_type (full names in jsonv2, letters in
// some versions) to openstreetmap.org paths.
var osmTypes = map[string]string{
	"node": "node", "way": "way", "relation": "relation",
	"N": "node", "W": "way", "R": "relation",
}
