package markets

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

func TestConvert(t *testing.T) {
	latest := apitest.Fixture(t, "frankfurter_latest.json")
	tests := []struct {
		name     string
		reply    apitest.Reply
		timeout  time.Duration
		wantHits int
		check    func(t *testing.T, c *Conversion, err error)
	}{
		{
			name: "answer parsed", reply: apitest.Reply{Body: latest}, wantHits: 1,
			check: func(t *testing.T, c *Conversion, err error) {
				if err != nil {
					t.Fatalf("Convert: %v", err)
				}
				if c.Amount != 100 || c.From != "USD" || c.Date != "2024-06-12" {
					t.Errorf("conversion = %+v", c)
				}
				want := []Quote{
					{Currency: "EUR", Rate: 0.92764, Amount: 92.764},
					{Currency: "USD", Rate: 1, Amount: 100},
					{Currency: "GBP", Rate: 0.78361, Amount: 78.361},
				}
				if len(c.Quotes) != len(want) {
					t.Fatalf("Quotes = %+v", c.Quotes)
				}
				for i, q := range c.Quotes {
					if q != want[i] {
						t.Errorf("Quotes[%d] = %+v, want %+v", i, q, want[i])
					}
				}
			},
		},
		{
			name: "5xx retried once then reported", wantHits: 2,
			reply: apitest.Reply{Status: 503, Body: `{"message":"Service Unavailable"}`},
			check: func(t *testing.T, c *Conversion, err error) {
				apitest.WantError(t, err, 503, "Frankfurter", "HTTP 503 Service Unavailable: Service Unavailable")
			},
		},
		{
			name: "unknown currency", wantHits: 1,
			reply: apitest.Reply{Status: 404, Body: apitest.Fixture(t, "frankfurter_not_found.json")},
			check: func(t *testing.T, c *Conversion, err error) {
				apitest.WantError(t, err, 404, "Frankfurter", "HTTP 404 Not Found: not found")
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("not ErrNotFound: %v", err)
				}
			},
		},
		{
			name: "429", wantHits: 1,
			reply: apitest.Reply{Status: 429, Body: `{"message":"Too many requests"}`},
			check: func(t *testing.T, c *Conversion, err error) {
				if !errors.Is(err, ErrRateLimited) {
					t.Errorf("not ErrRateLimited: %v", err)
				}
			},
		},
		{
			name: "timeout", wantHits: 1, timeout: 100 * time.Millisecond,
			reply: apitest.Reply{Body: latest, Delay: 3 * time.Second},
			check: func(t *testing.T, c *Conversion, err error) {
				apitest.WantError(t, err, 0, "Frankfurter", "no answer")
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("not DeadlineExceeded: %v", err)
				}
			},
		},
		{
			name: "malformed JSON", wantHits: 1,
			reply: apitest.Reply{Body: `{"amount":100.0,"base":"USD","rates":{"EUR":`},
			check: func(t *testing.T, c *Conversion, err error) {
				apitest.WantError(t, err, 0, "Frankfurter", "not valid JSON")
			},
		},
		{
			name: "empty rates", wantHits: 1,
			reply: apitest.Reply{Body: `{"amount":100.0,"base":"USD","date":"2024-06-12","rates":{}}`},
			check: func(t *testing.T, c *Conversion, err error) {
				apitest.WantError(t, err, 0, "no rates for USD")
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("not ErrNotFound: %v", err)
				}
			},
		},
		{
			name: "a currency missing from the answer", wantHits: 1,
			reply: apitest.Reply{Body: `{"amount":100.0,"base":"USD","date":"2024-06-12","rates":{"EUR":92.764}}`},
			check: func(t *testing.T, c *Conversion, err error) {
				apitest.WantError(t, err, 0, "no rate for GBP")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tt.reply))
			c := newTestClient(srv, tt.timeout)
			conv, err := c.Convert(t.Context(), 100, "usd", []string{"EUR", "USD", " gbp", "EUR"})
			tt.check(t, conv, err)
			reqs := srv.Requests()
			if len(reqs) != tt.wantHits {
				t.Fatalf("requests = %d, want %d", len(reqs), tt.wantHits)
			}
			r := reqs[0]
			if r.Method != http.MethodGet || r.Path != "/latest" {
				t.Errorf("request = %s %s", r.Method, r.Path)
			}
			if got := r.Query.Encode(); got != "amount=100&from=USD&to=EUR%2CGBP" {
				t.Errorf("query = %s", got)
			}
		})
	}
}

func TestConvertAllCurrencies(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: apitest.Fixture(t, "frankfurter_all.json")}))
	c := newTestClient(srv, 0)
	conv, err := c.Convert(t.Context(), 1, "EUR", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Quotes) != 30 || conv.Quotes[0].Currency != "AUD" || conv.Quotes[29].Currency != "ZAR" {
		t.Errorf("quotes = %+v", conv.Quotes)
	}
	for _, q := range conv.Quotes {
		if q.Currency == "USD" && (q.Rate != 1.0759 || q.Amount != 1.0759) {
			t.Errorf("USD = %+v", q)
		}
	}
	if q := srv.Requests()[0].Query; q.Has("to") || q.Get("from") != "EUR" {
		t.Errorf("query = %s", q.Encode())
	}
}

func TestConvertSameCurrencyNeedsNoRequest(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Status: 500}))
	c := newTestClient(srv, 0)
	conv, err := c.Convert(t.Context(), 2.5, "RUB", []string{"rub"})
	if err != nil {
		t.Fatal(err)
	}
	if len(conv.Quotes) != 1 || conv.Quotes[0] != (Quote{Currency: "RUB", Rate: 1, Amount: 2.5}) {
		t.Errorf("quotes = %+v", conv.Quotes)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests", n)
	}
}

func TestConvertInputValidation(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: "{}"}))
	c := newTestClient(srv, 0)
	tests := []struct {
		name   string
		amount float64
		from   string
		to     []string
		want   string
	}{
		{"zero amount", 0, "USD", []string{"EUR"}, "positive number"},
		{"negative amount", -5, "USD", []string{"EUR"}, "positive number"},
		{"NaN amount", math.NaN(), "USD", []string{"EUR"}, "positive number"},
		{"bad base", 1, "dollars", []string{"EUR"}, `"dollars" is not a currency code`},
		{"bad target", 1, "USD", []string{"EU"}, `"EU" is not a currency code`},
		{"injection", 1, "USD", []string{"EUR&amount=5"}, "not a currency code"},
		{"too many", 1, "USD", strings.Split(strings.Repeat("AAA,", 30)+"AAB,ABA,ABB,BAA,BAB,BBA,BBB,CCA,CCB,CCC,CAA,CAB,CBA,CBB,CBC,ACC,BCC,BBC,ABC,ACB,BAC,BCA,CAC,CCD,CDC,DCC,DDC,DCD,CDD,DDD,EEE", ","), "at most 30"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Convert(t.Context(), tt.amount, tt.from, tt.to)
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalidInput containing %q", err, tt.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
}
