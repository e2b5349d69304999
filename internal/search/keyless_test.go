package search

import (
	"errors"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
)

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func htmlReply(status int, body string) reply {
	return reply{status: status, body: body, header: map[string]string{"Content-Type": "text/html; charset=UTF-8"}}
}

func TestDuckDuckGoContract(t *testing.T) {
	srv := newScriptServer(t, htmlReply(200, readFixture(t, "duckduckgo_results.html")))
	got, err := NewDuckDuckGo(srv.URL, srv.Client()).Search(t.Context(), Query{
		Text: "tidal power", Language: "en-GB", TimeRange: "month", ExcludeDomains: []string{"britannica.com"},
	})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	r := srv.requests()[0]
	if r.method != http.MethodPost || r.path != "/html/" {
		t.Errorf("request = %s %s, want POST /html/", r.method, r.path)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type = %q", ct)
	}
	form := string(r.body)
	for _, want := range []string{"q=tidal+power+-site%3Abritannica.com", "kl=us-en", "df=m"} {
		if !strings.Contains(form, want) {
			t.Errorf("form %q lacks %q", form, want)
		}
	}
	want := []Result{
		{
			URL:      "https://en.wikipedia.org/wiki/Tidal_power",
			Title:    "Tidal power - Wikipedia",
			Snippet:  "Tidal power or tidal energy is harnessed by converting energy from tides into useful forms of power, mainly electricity using various methods.",
			Favicon:  "https://external-content.duckduckgo.com/ip3/en.wikipedia.org.ico",
			Provider: "duckduckgo",
		},
		{
			URL:       "https://www.energy.gov/eere/water/marine-energy?section=tidal&a=b",
			Title:     "Marine Energy & Tidal Basics | Department of Energy",
			Snippet:   "Marine energy, including tidal energy, can be captured & converted.",
			Favicon:   "https://external-content.duckduckgo.com/ip3/www.energy.gov.ico",
			Published: "2024-03-05T00:00:00.0000000",
			Provider:  "duckduckgo",
		},
		// britannica.com is excluded; the advert is skipped.
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results\n got %+v\nwant %+v", got, want)
	}
}

func TestDuckDuckGoAnswers(t *testing.T) {
	tests := []struct {
		name      string
		reply     reply
		wantN     int
		wantErr   error
		wantHits  int
		maxResult int
	}{
		{name: "no results is an empty answer", reply: htmlReply(200, readFixture(t, "duckduckgo_noresults.html"))},
		{name: "results capped", reply: htmlReply(200, readFixture(t, "duckduckgo_results.html")), wantN: 1, maxResult: 1},
		{name: "challenge page", reply: htmlReply(200, readFixture(t, "duckduckgo_challenge.html")), wantErr: ErrChallenged},
		{name: "202 challenge", reply: htmlReply(202, "<html><body><p>Please wait</p></body></html>"), wantErr: ErrChallenged},
		{name: "403 blocked", reply: htmlReply(403, "Forbidden"), wantErr: ErrChallenged},
		{name: "500 retried", reply: htmlReply(500, "oops"), wantHits: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptServer(t, tt.reply)
			got, err := NewDuckDuckGo(srv.URL, srv.Client(), fast()).Search(t.Context(), Query{Text: "q", MaxResults: tt.maxResult})
			switch {
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
			case tt.wantHits > 0:
				if err == nil || len(srv.requests()) != tt.wantHits {
					t.Fatalf("err = %v after %d requests", err, len(srv.requests()))
				}
			default:
				if err != nil || len(got) != tt.wantN {
					t.Fatalf("Search = %d results, %v; want %d", len(got), err, tt.wantN)
				}
			}
		})
	}
}

func TestUnwrapRedirect(t *testing.T) {
	tests := map[string]string{
		"//duckduckgo.com/l/?uddg=https%3A%2F%2Fa.example%2Fx%3Fy%3D1&rut=abc": "https://a.example/x?y=1",
		"https://b.example/page":   "https://b.example/page",
		"//c.example/protocol-rel": "https://c.example/protocol-rel",
		"//duckduckgo.com/l/?rut=": "https://duckduckgo.com/l/?rut=",
	}
	for in, want := range tests {
		if got := unwrapRedirect(in); got != want {
			t.Errorf("unwrapRedirect(%q) = %q, want %q", in, got, want)
		}
	}
}

// wikipediaBody follows the MediaWiki REST API's search/page answer.
const wikipediaBody = `{"pages":[
  {"id":38384,"key":"Tidal_power","title":"Tidal power","excerpt":"<span class=\"searchmatch\">Tidal</span> <span class=\"searchmatch\">power</span> or tidal energy is harnessed &amp; used","matched_title":null,"anchor":null,"description":"Technology to convert the energy from tides into useful forms of power",
   "thumbnail":{"mimetype":"image/jpeg","width":60,"height":40,"duration":null,"url":"//upload.wikimedia.org/wikipedia/commons/thumb/a/a2/Tidal.jpg/60px-Tidal.jpg"}},
  {"id":1,"key":"AC/DC:_Live","title":"AC/DC: Live","excerpt":"live album","matched_title":null,"description":null,"thumbnail":null}
]}`

func TestWikipediaContract(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: wikipediaBody})
	got, err := NewWikipedia(srv.URL, srv.Client()).Search(t.Context(), Query{Text: " tidal power ", MaxResults: 7, Language: "ru-RU"})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	r := srv.requests()[0]
	if r.method != http.MethodGet || r.path != "/w/rest.php/v1/search/page" || r.query.Get("q") != "tidal power" || r.query.Get("limit") != "7" {
		t.Errorf("request = %s %s %v", r.method, r.path, r.query)
	}
	if ua := r.header.Get("User-Agent"); !strings.Contains(ua, "sova") || !strings.Contains(ua, "https://") {
		t.Errorf("User-Agent %q does not say who is asking", ua)
	}
	want := []Result{
		{
			URL:      srv.URL + "/wiki/Tidal_power",
			Title:    "Tidal power",
			Snippet:  "Technology to convert the energy from tides into useful forms of power. Tidal power or tidal energy is harnessed & used",
			Favicon:  srv.URL + "/static/favicon/wikipedia.ico",
			Provider: "wikipedia",
			Images:   []string{"https://upload.wikimedia.org/wikipedia/commons/thumb/a/a2/Tidal.jpg/60px-Tidal.jpg"},
		},
		{
			URL:      srv.URL + "/wiki/AC/DC:_Live",
			Title:    "AC/DC: Live",
			Snippet:  "live album",
			Favicon:  srv.URL + "/static/favicon/wikipedia.ico",
			Provider: "wikipedia",
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("results\n got %+v\nwant %+v", got, want)
	}
}

func TestWikipediaLanguageEdition(t *testing.T) {
	p := NewWikipedia("", nil)
	if p.base != DefaultWikipediaURL {
		t.Fatalf("base = %q", p.base)
	}
	// With the default base the language picks the host; results link there.
	res := p.results(wikipediaResponse{Pages: []wikipediaPage{{Key: "Приливная_электростанция", Title: "Приливная электростанция"}}},
		"https://ru.wikipedia.org", "ru", Query{Text: "q"})
	if len(res) != 1 || res[0].URL != "https://ru.wikipedia.org/wiki/%D0%9F%D1%80%D0%B8%D0%BB%D0%B8%D0%B2%D0%BD%D0%B0%D1%8F_%D1%8D%D0%BB%D0%B5%D0%BA%D1%82%D1%80%D0%BE%D1%81%D1%82%D0%B0%D0%BD%D1%86%D0%B8%D1%8F" {
		t.Errorf("results = %+v", res)
	}
}

func TestWikipediaSkipsWhatItCannotAnswer(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: wikipediaBody})
	p := NewWikipedia(srv.URL, srv.Client())
	for _, q := range []Query{
		{Text: "news", TimeRange: "day"},
		{Text: "q", IncludeDomains: []string{"example.com"}},
		{Text: "q", ExcludeDomains: []string{"wikipedia.org"}},
	} {
		got, err := p.Search(t.Context(), q)
		if err != nil || len(got) != 0 {
			t.Errorf("%+v: got %v, %v; want no results", q, got, err)
		}
	}
	if n := len(srv.requests()); n != 0 {
		t.Errorf("%d requests sent for queries Wikipedia cannot answer", n)
	}
}

func TestWikipediaErrors(t *testing.T) {
	tests := []struct {
		name   string
		reply  reply
		status int
		wantIn string
	}{
		{"400 REST error", reply{status: 400, body: `{"errorKey":"parameter-validation-failed","messageTranslations":{"en":"Parameter \"limit\" must be between 1 and 100"},"httpCode":400,"httpReason":"Bad Request"}`}, 400, `Parameter "limit" must be between 1 and 100 (parameter-validation-failed)`},
		{"429 too many requests", reply{status: 429, body: `{"httpCode":429,"httpReason":"Too Many Requests"}`, header: map[string]string{"Retry-After": "0"}}, 429, "Too Many Requests"},
		{"invalid JSON", reply{status: 200, body: "<!DOCTYPE html>"}, 0, "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newScriptServer(t, tt.reply)
			_, err := NewWikipedia(srv.URL, srv.Client(), fast()).Search(t.Context(), Query{Text: "q"})
			var pe *Error
			if err == nil || !strings.Contains(err.Error(), tt.wantIn) || !errors.As(err, &pe) || pe.Status != tt.status {
				t.Fatalf("err = %v, want status %d and %q", err, tt.status, tt.wantIn)
			}
		})
	}
}

func TestKeyless(t *testing.T) {
	web := func(n int) []Result {
		out := make([]Result, n)
		for i := range out {
			out[i] = Result{URL: "https://web.example/" + string(rune('a'+i)), Provider: "duckduckgo"}
		}
		return out
	}
	wiki := []Result{
		{URL: "https://en.wikipedia.org/wiki/A", Provider: "wikipedia"},
		{URL: "https://en.wikipedia.org/wiki/B", Provider: "wikipedia"},
		{URL: "https://en.wikipedia.org/wiki/C", Provider: "wikipedia"},
	}
	boom := errors.New("boom")
	tests := []struct {
		name     string
		web, ref *fakeProvider
		max      int
		want     []string // providers in order
		wantErr  bool
	}{
		{"web fills all but two", &fakeProvider{name: "duckduckgo", res: web(10)}, &fakeProvider{name: "wikipedia", res: wiki}, 5,
			[]string{"duckduckgo", "duckduckgo", "duckduckgo", "wikipedia", "wikipedia"}, false},
		{"few web results leave room", &fakeProvider{name: "duckduckgo", res: web(1)}, &fakeProvider{name: "wikipedia", res: wiki}, 5,
			[]string{"duckduckgo", "wikipedia", "wikipedia", "wikipedia"}, false},
		{"web fails", &fakeProvider{name: "duckduckgo", err: boom}, &fakeProvider{name: "wikipedia", res: wiki}, 5,
			[]string{"wikipedia", "wikipedia", "wikipedia"}, false},
		{"wikipedia fails", &fakeProvider{name: "duckduckgo", res: web(2)}, &fakeProvider{name: "wikipedia", err: boom}, 5,
			[]string{"duckduckgo", "duckduckgo"}, false},
		{"both fail", &fakeProvider{name: "duckduckgo", err: boom}, &fakeProvider{name: "wikipedia", err: boom}, 5, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewKeyless(tt.web, tt.ref).Search(t.Context(), Query{Text: "q", MaxResults: tt.max})
			if tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), "duckduckgo: boom") || !strings.Contains(err.Error(), "wikipedia: boom") {
					t.Fatalf("err = %v, want both failures named", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var providers []string
			for _, r := range got {
				providers = append(providers, r.Provider)
			}
			if !reflect.DeepEqual(providers, tt.want) {
				t.Errorf("providers = %v, want %v", providers, tt.want)
			}
		})
	}
}

// TestKeylessOverHTTP runs the keyless provider against local servers
// speaking DuckDuckGo's HTML and Wikipedia's JSON.
func TestKeylessOverHTTP(t *testing.T) {
	ddg := newScriptServer(t, htmlReply(200, readFixture(t, "duckduckgo_results.html")))
	wp := newScriptServer(t, reply{status: 200, body: wikipediaBody})
	p := NewKeyless(NewDuckDuckGo(ddg.URL, ddg.Client()), NewWikipedia(wp.URL, wp.Client()))
	got, err := p.Search(t.Context(), Query{Text: "tidal power"})
	if err != nil {
		t.Fatal(err)
	}
	// 3 web results (the advert skipped), then both Wikipedia articles.
	if len(got) != 5 || got[0].Provider != "duckduckgo" || got[3].Provider != "wikipedia" {
		t.Errorf("results = %+v", got)
	}
}
