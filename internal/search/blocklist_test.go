package search

import (
	"slices"
	"strings"
	"testing"
)

func TestBlockListAllowed(t *testing.T) {
	bl := BlockList{
		Domains:  []string{"example.com", "https://www.Tracker.net/path", "*.ads.org", "  ", "xn--80ak6aa92e.com"},
		Keywords: []string{"Casino", "порно", ""},
	}
	tests := []struct {
		name string
		r    Result
		want bool
	}{
		{"blocked domain", Result{URL: "https://example.com/page"}, false},
		{"blocked subdomain", Result{URL: "https://a.b.example.com/page"}, false},
		{"www of blocked domain", Result{URL: "http://www.example.com"}, false},
		{"similar suffix is not a subdomain", Result{URL: "https://badexample.com/"}, true},
		{"blocked domain as a path elsewhere", Result{URL: "https://other.org/example.com"}, true},
		{"domain given as URL", Result{URL: "https://tracker.net/x"}, false},
		{"wildcard entry blocks the domain", Result{URL: "https://ads.org/x"}, false},
		{"wildcard entry blocks subdomains", Result{URL: "https://cdn.ads.org/x"}, false},
		{"case and port on the host", Result{URL: "https://SUB.Example.COM:8443/x"}, false},
		{"punycode host", Result{URL: "https://xn--80ak6aa92e.com/"}, false},
		{"keyword in title, other case", Result{URL: "https://ok.org", Title: "Best CASINO bonuses"}, false},
		{"keyword in URL", Result{URL: "https://ok.org/online-casino"}, false},
		{"keyword in snippet, Cyrillic case-folded", Result{URL: "https://ok.org", Snippet: "ПОРНО сайт"}, false},
		{"keyword in content is not checked", Result{URL: "https://ok.org", Content: "casino"}, true},
		{"clean result", Result{URL: "https://ok.org/news", Title: "News", Snippet: "Nothing to see"}, true},
		{"unparseable URL, clean", Result{URL: "::not a url", Title: "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := bl.Allowed(tt.r); got != tt.want {
				t.Errorf("Allowed(%+v) = %v, want %v", tt.r, got, tt.want)
			}
		})
	}
}

func TestBlockListEmptyAllowsAll(t *testing.T) {
	if !(BlockList{}).Allowed(Result{URL: "https://anything.example"}) {
		t.Error("empty block list blocked a result")
	}
}

func TestFilter(t *testing.T) {
	in := []Result{
		{URL: "https://good.org/1"},
		{URL: "https://spam.example.com/2"},
		{URL: "https://good.org/3", Title: "Free crypto giveaway"},
		{URL: "https://good.org/4"},
	}
	got := Filter(in, BlockList{Domains: []string{"example.com"}, Keywords: []string{"crypto"}})
	var urls []string
	for _, r := range got {
		urls = append(urls, r.URL)
	}
	if want := []string{"https://good.org/1", "https://good.org/4"}; !slices.Equal(urls, want) {
		t.Errorf("Filter = %v, want %v", urls, want)
	}
	if len(in) != 4 || in[1].URL != "https://spam.example.com/2" {
		t.Errorf("Filter modified its input: %v", in)
	}
}

func TestHostNames(t *testing.T) {
	hosts, rejected := HostNames([]string{"https://www.BBC.co.uk/news", "state of the union", "reuters", "*.gov.uk", "", "münchen.de", "a..b", "x_y.com"})
	if strings.Join(hosts, ",") != "bbc.co.uk,gov.uk,münchen.de" {
		t.Errorf("hosts = %q", hosts)
	}
	if strings.Join(rejected, ",") != "state of the union,reuters,a..b,x_y.com" {
		t.Errorf("rejected = %q", rejected)
	}
}
