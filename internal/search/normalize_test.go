package search

import (
	"reflect"
	"testing"
)

func TestNormalizeURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"https://example.com/a", "https://example.com/a"},
		{"HTTP://WWW.Example.COM/Path", "https://example.com/Path"},
		{"http://example.com/a/", "https://example.com/a"},
		{"https://example.com/", "https://example.com"},
		{"https://example.com", "https://example.com"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"http://example.com:80/a", "https://example.com/a"},
		{"https://example.com:8443/a", "https://example.com:8443/a"},
		{"https://example.com/a#section-2", "https://example.com/a"},
		{"https://example.com/a?utm_source=x&utm_medium=y&UTM_Campaign=z", "https://example.com/a"},
		{"https://example.com/a?b=2&a=1&gclid=abc&fbclid=def&yclid=1&ref=hn", "https://example.com/a?a=1&b=2"},
		{"https://example.com/a?z=1&msclkid=x&_ga=1&mc_cid=2", "https://example.com/a?z=1"},
		{"https://example.com/search?q=go+lang&page=2", "https://example.com/search?page=2&q=go+lang"},
		{"https://user:pw@example.com/a", "https://example.com/a"},
		{"https://example.com./a", "https://example.com/a"},
		{"https://www2.example.com/a", "https://www2.example.com/a"},
		{"https://example.com/caf%C3%A9", "https://example.com/caf%C3%A9"},
		{"https://example.com/café", "https://example.com/caf%C3%A9"},
		{"http://[::1]:8080/a/", "https://[::1]:8080/a"},
		{"https://[2001:db8::1]/", "https://[2001:db8::1]"},
		{"  https://example.com/a  ", "https://example.com/a"},
		{"not a url", "not a url"},
		{"/relative/path", "/relative/path"},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := NormalizeURL(tt.in); got != tt.want {
				t.Errorf("NormalizeURL(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNormalizeURLEquivalence(t *testing.T) {
	same := []string{
		"http://www.example.com/post/",
		"https://example.com/post",
		"https://EXAMPLE.com:443/post#comments",
		"https://example.com/post?utm_source=newsletter&fbclid=1",
	}
	want := NormalizeURL(same[0])
	for _, u := range same[1:] {
		if got := NormalizeURL(u); got != want {
			t.Errorf("NormalizeURL(%q) = %q, want %q like %q", u, got, want, same[0])
		}
	}
}

func TestDedupe(t *testing.T) {
	in := []Result{
		{URL: "https://example.com/a", Title: "A", Snippet: "short", Provider: "searxng", Images: []string{"i1"}},
		{URL: "https://example.com/b", Title: "B", Snippet: "b"},
		{URL: "http://www.example.com/a/?utm_source=x", Title: "A dup", Snippet: "a much longer snippet", Published: "2025-01-01", Images: []string{"i1", "i2"}},
		{URL: "https://example.com/b#top", Title: "", Snippet: "", Author: "Ann"},
		{URL: "https://example.com/c", Title: "C"},
	}
	want := []Result{
		{URL: "https://example.com/a", Title: "A", Snippet: "a much longer snippet", Published: "2025-01-01", Provider: "searxng", Images: []string{"i1", "i2"}},
		{URL: "https://example.com/b", Title: "B", Snippet: "b", Author: "Ann"},
		{URL: "https://example.com/c", Title: "C"},
	}
	got := Dedupe(in)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Dedupe\n got %+v\nwant %+v", got, want)
	}
	if len(in[0].Images) != 1 || in[0].Snippet != "short" {
		t.Errorf("Dedupe modified its input: %+v", in[0])
	}
	if got := Dedupe(nil); len(got) != 0 {
		t.Errorf("Dedupe(nil) = %v", got)
	}
}
