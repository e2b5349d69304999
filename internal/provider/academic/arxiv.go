package academic

import (
	"context"
	"encoding/xml"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/time/rate"

	"github.com/sova-ai/sova/internal/apiclient"
)

// arxivMaxResults caps max_results of one request (arXiv allows 2000, but
// the tool never needs more than a page).
const arxivMaxResults = 100

// arxivMaxTerms caps the words of a free-text query that are ANDed.
const arxivMaxTerms = 8

// Arxiv searches the arXiv API (GET /api/query, an Atom feed).
type Arxiv struct {
	base    string
	api     *apiclient.Client
	limiter *rate.Limiter // nil: no pacing
}

// NewArxiv returns an arXiv searcher for cfg. Its requests are spaced by
// cfg.ArxivInterval (3s unless set), as arXiv asks of API clients.
func NewArxiv(cfg Config) *Arxiv {
	a := &Arxiv{
		base: baseURL(cfg.ArxivURL, DefaultArxivURL),
		api:  cfg.client("arxiv", nil, nil),
	}
	switch iv := cfg.ArxivInterval; {
	case iv == 0:
		a.limiter = rate.NewLimiter(rate.Every(DefaultArxivInterval), 1)
	case iv > 0:
		a.limiter = rate.NewLimiter(rate.Every(iv), 1)
	}
	return a
}

// Name returns "arxiv".
func (a *Arxiv) Name() string { return "arxiv" }

// Search runs query (see ArxivQuery) ranked by relevance.
func (a *Arxiv) Search(ctx context.Context, query string, limit int) ([]Paper, error) {
	sq := ArxivQuery(query)
	if sq == "" {
		return nil, a.api.Errorf(nil, nil, "the query is empty")
	}
	limit = min(max(limit, 1), arxivMaxResults)
	q := url.Values{}
	q.Set("search_query", sq)
	q.Set("start", "0")
	q.Set("max_results", strconv.Itoa(limit))
	q.Set("sortBy", "relevance")
	q.Set("sortOrder", "descending")
	if a.limiter != nil {
		if err := a.limiter.Wait(ctx); err != nil {
			return nil, a.api.Errorf(nil, ctx.Err(), "waiting for the next arXiv request slot stopped")
		}
	}
	body, err := a.api.Get(ctx, a.base+"/api/query?"+q.Encode(), http.Header{"Accept": {"application/atom+xml"}})
	if err != nil {
		return nil, err
	}
	var feed arxivFeed
	if err := xml.Unmarshal(body, &feed); err != nil {
		return nil, a.api.Errorf(ErrBadResponse, err, "the answer is not an Atom feed; it starts with %q", apiclient.Snippet(body))
	}
	out := make([]Paper, 0, min(limit, len(feed.Entries)))
	for _, e := range feed.Entries {
		// arXiv reports a bad query as a feed with one entry titled "Error".
		if strings.Contains(e.ID, "/api/errors") {
			return nil, a.api.Errorf(nil, nil, "arXiv rejected the query %q: %s", sq, cleanText(e.Summary))
		}
		if len(out) == limit {
			break
		}
		if p, ok := e.paper(); ok {
			out = append(out, p)
		}
	}
	return out, nil
}

type arxivFeed struct {
	XMLName      xml.Name     `xml:"http://www.w3.org/2005/Atom feed"`
	TotalResults int          `xml:"http://a9.com/-/spec/opensearch/1.1/ totalResults"`
	Entries      []arxivEntry `xml:"http://www.w3.org/2005/Atom entry"`
}

type arxivEntry struct {
	ID        string `xml:"http://www.w3.org/2005/Atom id"`
	Title     string `xml:"http://www.w3.org/2005/Atom title"`
	Summary   string `xml:"http://www.w3.org/2005/Atom summary"`
	Published string `xml:"http://www.w3.org/2005/Atom published"`
	Authors   []struct {
		Name string `xml:"http://www.w3.org/2005/Atom name"`
	} `xml:"http://www.w3.org/2005/Atom author"`
	Links []struct {
		Href  string `xml:"href,attr"`
		Rel   string `xml:"rel,attr"`
		Type  string `xml:"type,attr"`
		Title string `xml:"title,attr"`
	} `xml:"http://www.w3.org/2005/Atom link"`
	DOI             string `xml:"http://arxiv.org/schemas/atom doi"`
	JournalRef      string `xml:"http://arxiv.org/schemas/atom journal_ref"`
	PrimaryCategory struct {
		Term string `xml:"term,attr"`
	} `xml:"http://arxiv.org/schemas/atom primary_category"`
}

func (e arxivEntry) paper() (Paper, bool) {
	p := Paper{
		Title:         e.Title,
		Summary:       e.Summary,
		PublishedDate: dateOnly(e.Published),
		DOI:           bareDOI(e.DOI),
		Source:        "arxiv",
	}
	p.Year = yearOf(p.PublishedDate)
	for _, a := range e.Authors {
		if n := strings.TrimSpace(a.Name); n != "" {
			p.Authors = append(p.Authors, n)
		}
	}
	page := strings.TrimSpace(e.ID)
	for _, l := range e.Links {
		switch {
		case l.Title == "pdf" || l.Type == "application/pdf":
			p.PDFURL = httpsURL(l.Href)
		case l.Rel == "alternate" && page == "":
			page = l.Href
		}
	}
	if id := arxivID(page, ""); id != "" {
		p.URL = "https://arxiv.org/abs/" + id
	} else {
		p.URL = httpsURL(page)
	}
	p.Venue = "arXiv"
	if ref := cleanText(e.JournalRef); ref != "" {
		p.Venue = ref
	} else if cat := strings.TrimSpace(e.PrimaryCategory.Term); cat != "" {
		p.Venue = "arXiv (" + cat + ")"
	}
	p = clean(p)
	return p, p.URL != "" && p.Title != ""
}

// httpsURL upgrades an arxiv.org http:// link to https://.
func httpsURL(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "http://arxiv.org/"); ok {
		return "https://arxiv.org/" + rest
	}
	return s
}

var arxivFieldRE = regexp.MustCompile(`(?:^|[\s(])(?:ti|au|abs|co|jr|cat|rn|id|all):`)

// arxivStopwords are words left out of a free-text arXiv query: arXiv ANDs
// the terms, so filler words only lose results.
var arxivStopwords = map[string]bool{
	"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "be": true, "by": true,
	"for": true, "from": true, "how": true, "in": true, "is": true, "it": true, "of": true, "on": true,
	"or": true, "paper": true, "papers": true, "recent": true, "research": true, "study": true,
	"studies": true, "that": true, "the": true, "to": true, "using": true, "what": true, "which": true,
	"with": true, "about": true, "latest": true, "new": true, "via": true, "vs": true, "does": true, "do": true,
}

// ArxivQuery turns a query into arXiv's search_query syntax. A query that
// already uses field prefixes (ti:, au:, abs:, cat:, all:, ...) is passed as
// it is; free text becomes its significant words (up to eight, filler words
// dropped) joined as all:word AND all:word.
func ArxivQuery(query string) string {
	query = strings.TrimSpace(query)
	if query == "" {
		return ""
	}
	if arxivFieldRE.MatchString(query) {
		return query
	}
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '.'
	})
	var terms, all []string
	seen := map[string]bool{}
	for _, w := range words {
		w = strings.Trim(w, "-.")
		if w == "" || seen[w] {
			continue
		}
		seen[w] = true
		all = append(all, w)
		if !arxivStopwords[w] && len([]rune(w)) > 1 {
			terms = append(terms, w)
		}
	}
	if len(terms) == 0 {
		terms = all
	}
	if len(terms) > arxivMaxTerms {
		terms = terms[:arxivMaxTerms]
	}
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		if strings.ContainsAny(t, "-.") {
			t = `"` + t + `"`
		}
		parts = append(parts, "all:"+t)
	}
	return strings.Join(parts, " AND ")
}
