package places

import (
	"context"
	"fmt"
	"html"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// overpassQuery builds the Overpass QL for elements tagged key=value
// within radius metres of (lat, lon): nodes, ways and relations, ways and
// relations with their centre. key and value come from parseType and hold
// no quotes.
func overpassQuery(cat category, lat, lon float64, radius int) string {
	return fmt.Sprintf("[out:json][timeout:%d];\nnwr[%q=%q](around:%d,%s,%s);\nout center tags %d;\n",
		overpassQueryTimeout, cat.key, cat.value, radius, coord(lat), coord(lon), overpassFetch)
}

func (c *Client) overpassNearby(ctx context.Context, center Location, cat category, r Request) ([]Place, error) {
	query := overpassQuery(cat, center.Latitude, center.Longitude, r.Radius)
	var resp struct {
		Remark   string `json:"remark"`
		Elements []struct {
			Type   string                      `json:"type"`
			ID     int64                       `json:"id"`
			Lat    *float64                    `json:"lat"`
			Lon    *float64                    `json:"lon"`
			Center *struct{ Lat, Lon float64 } `json:"center"`
			Tags   map[string]string           `json:"tags"`
		} `json:"elements"`
	}
	header := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Accept": {"application/json"}}
	body, err := c.overpass.Do(ctx, http.MethodPost, c.overpassURL+"/api/interpreter", header, []byte(url.Values{"data": {query}}.Encode()))
	if err != nil {
		return nil, err
	}
	if err := c.overpass.DecodeJSON(body, &resp); err != nil {
		return nil, err
	}
	if len(resp.Elements) == 0 && strings.Contains(resp.Remark, "error") {
		return nil, &Error{Provider: overpassName, Message: "the query failed: " + strings.TrimSpace(resp.Remark)}
	}

	places := make([]Place, 0, len(resp.Elements))
	for _, e := range resp.Elements {
		var lat, lon float64
		switch {
		case e.Lat != nil && e.Lon != nil:
			lat, lon = *e.Lat, *e.Lon
		case e.Center != nil:
			lat, lon = e.Center.Lat, e.Center.Lon
		default:
			continue
		}
		t := e.Tags
		p := Place{
			ID:           e.Type + "/" + strconv.FormatInt(e.ID, 10),
			Name:         osmName(t, r.Language),
			Category:     t[cat.key],
			Address:      osmAddress(t),
			Latitude:     lat,
			Longitude:    lon,
			Distance:     math.Round(distance(center.Latitude, center.Longitude, lat, lon)),
			OpeningHours: t["opening_hours"],
			Website:      firstTag(t, "website", "contact:website", "url"),
			Phone:        firstTag(t, "phone", "contact:phone"),
			MapURL:       "https://www.openstreetmap.org/" + e.Type + "/" + strconv.FormatInt(e.ID, 10),
		}
		if p.Category == "" {
			p.Category = cat.value
		}
		places = append(places, p)
	}
	// Overpass lists elements by id; here the nearest come first, ties in
	// id order.
	slices.SortStableFunc(places, func(a, b Place) int {
		if a.Distance != b.Distance {
			if a.Distance < b.Distance {
				return -1
			}
			return 1
		}
		return strings.Compare(a.ID, b.ID)
	})
	if len(places) > r.Limit {
		places = places[:r.Limit]
	}
	return places, nil
}

// osmName prefers the name in the asked language, then the local name,
// then a brand or operator.
func osmName(t map[string]string, lang string) string {
	if lang != "" {
		primary, _, _ := strings.Cut(strings.ReplaceAll(lang, "_", "-"), "-")
		if n := t["name:"+strings.ToLower(primary)]; n != "" {
			return n
		}
	}
	return firstTag(t, "name", "brand", "operator")
}

// osmAddress renders the addr:* tags as "street housenumber, postcode
// city"; "" when there are none.
func osmAddress(t map[string]string) string {
	if full := t["addr:full"]; full != "" {
		return full
	}
	street := strings.TrimSpace(firstTag(t, "addr:street", "addr:place") + " " + t["addr:housenumber"])
	city := strings.TrimSpace(t["addr:postcode"] + " " + t["addr:city"])
	switch {
	case street != "" && city != "":
		return street + ", " + city
	case street != "":
		return street
	}
	return city
}

// overpassErrorRE finds the message of Overpass's HTML error page:
// <p><strong style="color:#FF0000">Error</strong>: line 2: parse error: ...</p>
var overpassErrorRE = regexp.MustCompile(`(?s)<strong[^>]*>\s*Error\s*</strong>\s*:\s*(.*?)</p>`)

// describeOverpass returns the error messages of an Overpass error page.
func describeOverpass(_ int, body []byte) (string, bool) {
	var msgs []string
	for _, m := range overpassErrorRE.FindAllSubmatch(body, 3) {
		if s := strings.Join(strings.Fields(html.UnescapeString(string(m[1]))), " "); s != "" {
			msgs = append(msgs, s)
		}
	}
	return strings.Join(msgs, "; "), false
}

func firstTag(t map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(t[k]); v != "" {
			return v
		}
	}
	return ""
}
