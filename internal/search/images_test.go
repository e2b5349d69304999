package search

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"testing"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSearXNGImages(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: fixture(t, "searxng_images.json")})
	p := NewSearXNG(srv.URL, srv.Client())
	got, err := p.SearchImages(t.Context(), Query{Text: "eiffel tower", Language: "fr", MaxResults: 8})
	if err != nil {
		t.Fatal(err)
	}
	want := []Image{
		{URL: "https://upload.wikimedia.org/wikipedia/commons/a/a8/Tour_Eiffel_Wikimedia_Commons.jpg",
			Thumbnail:   "https://upload.wikimedia.org/wikipedia/commons/thumb/a/a8/Tour_Eiffel_Wikimedia_Commons.jpg/320px-Tour_Eiffel_Wikimedia_Commons.jpg",
			Description: "Tour Eiffel Wikimedia Commons", Source: "https://commons.wikimedia.org/wiki/File:Tour_Eiffel_Wikimedia_Commons.jpg"},
		{URL: "https://images.example.com/eiffel-night.jpg", Description: "Night view of the tower", Source: "https://www.example.com/paris/eiffel"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("images\n got %+v\nwant %+v", got, want)
	}
	q := srv.requests()[0].query
	if q.Get("categories") != "images" || q.Get("format") != "json" || q.Get("q") != "eiffel tower" || q.Get("language") != "fr" {
		t.Errorf("query %v", q)
	}
}

func TestTavilyImages(t *testing.T) {
	srv := newScriptServer(t, reply{status: 200, body: fixture(t, "tavily_images.json")})
	p := NewTavily(tavilyKey, srv.URL, srv.Client())
	got, err := p.SearchImages(t.Context(), Query{Text: "eiffel tower", MaxResults: 8})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Description == "" || got[1].URL != "https://images.example.com/eiffel-sunset.jpg" {
		t.Errorf("images %+v", got)
	}
	var body map[string]any
	_ = json.Unmarshal(srv.requests()[0].body, &body)
	if body["include_images"] != true || body["include_image_descriptions"] != true || body["query"] != "eiffel tower" {
		t.Errorf("request %v", body)
	}
	// Image URLs given as plain strings (no descriptions) are read too.
	srv = newScriptServer(t, reply{status: 200, body: `{"query":"q","images":["https://a.example/1.png"],"results":[]}`})
	got, err = NewTavily(tavilyKey, srv.URL, srv.Client()).SearchImages(t.Context(), Query{Text: "q"})
	if err != nil || len(got) != 1 || got[0].URL != "https://a.example/1.png" {
		t.Errorf("string images: %+v %v", got, err)
	}
}

func TestChainImages(t *testing.T) {
	bad := newScriptServer(t, reply{status: 500, body: "down"}, reply{status: 500, body: "down"})
	good := newScriptServer(t, reply{status: 200, body: fixture(t, "searxng_images.json")})
	c := NewChain(&fakeProvider{name: "plain"}, Throttle(NewSearXNG(bad.URL, bad.Client(), fast()), Limits{Concurrent: 1}), NewSearXNG(good.URL, good.Client()))
	got, err := c.SearchImages(t.Context(), Query{Text: "eiffel"})
	if err != nil || len(got) != 2 {
		t.Fatalf("chain images: %v, %v", got, err)
	}
	if _, err := NewChain(&fakeProvider{name: "plain"}).SearchImages(t.Context(), Query{Text: "x"}); !errors.Is(err, ErrNoImageSearch) {
		t.Errorf("no image search: %v", err)
	}
}
