package academic

import (
	"context"
	"encoding/json"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/sova-ai/sova/internal/apiclient"
)

// openAlexMaxPerPage is the largest per-page OpenAlex accepts.
const openAlexMaxPerPage = 200

// openAlexSelect names the fields asked for, which keeps answers small.
const openAlexSelect = "id,doi,display_name,publication_year,publication_date,primary_location," +
	"best_oa_location,authorships,cited_by_count,abstract_inverted_index"

// OpenAlex searches OpenAlex works (GET /works?search=).
type OpenAlex struct {
	base   string
	key    string
	mailto string
	api    *apiclient.Client
}

// NewOpenAlex returns an OpenAlex searcher for cfg.
func NewOpenAlex(cfg Config) *OpenAlex {
	key := strings.TrimSpace(cfg.OpenAlexAPIKey)
	return &OpenAlex{
		base:   baseURL(cfg.OpenAlexURL, DefaultOpenAlexURL),
		key:    key,
		mailto: strings.TrimSpace(cfg.OpenAlexMailto),
		api:    cfg.client("openalex", []string{key}, describeOpenAlex),
	}
}

// Name returns "openalex".
func (o *OpenAlex) Name() string { return "openalex" }

// Search runs a full-text search of works, ranked by relevance.
func (o *OpenAlex) Search(ctx context.Context, query string, limit int) ([]Paper, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, o.api.Errorf(nil, nil, "the query is empty")
	}
	limit = min(max(limit, 1), openAlexMaxPerPage)
	q := url.Values{}
	q.Set("search", query)
	q.Set("per-page", strconv.Itoa(limit))
	q.Set("select", openAlexSelect)
	if o.mailto != "" {
		q.Set("mailto", o.mailto)
	}
	if o.key != "" {
		q.Set("api_key", o.key)
	}
	var resp openAlexResponse
	if err := o.api.GetJSON(ctx, o.base+"/works?"+q.Encode(), nil, &resp); err != nil {
		return nil, err
	}
	if resp.Results == nil {
		return nil, o.api.Errorf(ErrBadResponse, nil, "the answer has no results list")
	}
	out := make([]Paper, 0, min(limit, len(resp.Results)))
	for _, w := range resp.Results {
		if len(out) == limit {
			break
		}
		if p, ok := w.paper(); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

// describeOpenAlex reads OpenAlex's error body {"error": "...", "message": "..."}.
func describeOpenAlex(status int, body []byte) (string, bool) {
	var e struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return "", false
	}
	parts := make([]string, 0, 2)
	for _, s := range []string{e.Error, e.Message} {
		if s = strings.TrimSpace(s); s != "" {
			parts = append(parts, s)
		}
	}
	detail := strings.Join(parts, ": ")
	if status == 401 || status == 403 {
		detail += " (check OPENALEX_API_KEY)"
	}
	return strings.TrimSpace(detail), false
}

type openAlexResponse struct {
	Meta struct {
		Count int `json:"count"`
	} `json:"meta"`
	Results []openAlexWork `json:"results"`
}

type openAlexWork struct {
	ID              string               `json:"id"`
	DOI             string               `json:"doi"`
	DisplayName     string               `json:"display_name"`
	Title           string               `json:"title"`
	PublicationYear int                  `json:"publication_year"`
	PublicationDate string               `json:"publication_date"`
	PrimaryLocation *openAlexLocation    `json:"primary_location"`
	BestOALocation  *openAlexLocation    `json:"best_oa_location"`
	Authorships     []openAlexAuthorship `json:"authorships"`
	CitedByCount    int                  `json:"cited_by_count"`
	Abstract        map[string][]int     `json:"abstract_inverted_index"`
}

type openAlexLocation struct {
	LandingPageURL string `json:"landing_page_url"`
	PDFURL         string `json:"pdf_url"`
	Source         *struct {
		DisplayName string `json:"display_name"`
	} `json:"source"`
}

type openAlexAuthorship struct {
	Author struct {
		DisplayName string `json:"display_name"`
	} `json:"author"`
	RawAuthorName string `json:"raw_author_name"`
}

func (w openAlexWork) paper() (Paper, bool) {
	title := w.DisplayName
	if title == "" {
		title = w.Title
	}
	p := Paper{
		Title:         title,
		Summary:       ReconstructAbstract(w.Abstract),
		PublishedDate: dateOnly(w.PublicationDate),
		Year:          w.PublicationYear,
		DOI:           bareDOI(w.DOI),
		Citations:     w.CitedByCount,
		Source:        "openalex",
	}
	for _, a := range w.Authorships {
		name := strings.TrimSpace(a.Author.DisplayName)
		if name == "" {
			name = strings.TrimSpace(a.RawAuthorName)
		}
		if name != "" {
			p.Authors = append(p.Authors, name)
		}
	}
	switch {
	case strings.TrimSpace(w.DOI) != "":
		p.URL = "https://doi.org/" + p.DOI
	case w.PrimaryLocation != nil && w.PrimaryLocation.LandingPageURL != "":
		p.URL = w.PrimaryLocation.LandingPageURL
	default:
		p.URL = w.ID
	}
	if w.PrimaryLocation != nil && w.PrimaryLocation.Source != nil {
		p.Venue = strings.TrimSpace(w.PrimaryLocation.Source.DisplayName)
	}
	for _, loc := range []*openAlexLocation{w.BestOALocation, w.PrimaryLocation} {
		if loc != nil && loc.PDFURL != "" {
			p.PDFURL = loc.PDFURL
			break
		}
	}
	if p.Year == 0 {
		p.Year = yearOf(p.PublishedDate)
	}
	p = clean(p)
	return p, p.URL != "" && p.Title != ""
}

// ReconstructAbstract rebuilds an abstract from OpenAlex's
// abstract_inverted_index (each word mapped to its positions).
func ReconstructAbstract(inv map[string][]int) string {
	if len(inv) == 0 {
		return ""
	}
	type wordAt struct {
		pos  int
		word string
	}
	var words []wordAt
	for w, ps := range inv {
		for _, p := range ps {
			if p >= 0 {
				words = append(words, wordAt{p, w})
			}
		}
	}
	sort.Slice(words, func(i, j int) bool {
		if words[i].pos != words[j].pos {
			return words[i].pos < words[j].pos
		}
		return words[i].word < words[j].word
	})
	parts := make([]string, 0, len(words))
	for _, w := range words {
		parts = append(parts, w.word)
	}
	return strings.Join(parts, " ")
}
