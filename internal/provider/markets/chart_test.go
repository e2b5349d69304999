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

// newTestClient points both providers at srv, with a short pause before
// retries.
func newTestClient(srv *apitest.Server, timeout time.Duration) *Client {
	c, err := New(Config{YahooFinanceURL: srv.URL + "/", FrankfurterURL: srv.URL, Timeout: timeout, RetryBackoff: time.Millisecond})
	if err != nil {
		panic(err)
	}
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-4 }

func TestChart(t *testing.T) {
	aapl := apitest.Fixture(t, "chart_aapl_5d.json")
	tests := []struct {
		name     string
		reply    apitest.Reply
		timeout  time.Duration
		wantHits int
		check    func(t *testing.T, ch *Chart, err error)
	}{
		{
			name: "answer parsed", reply: apitest.Reply{Body: aapl}, wantHits: 1,
			check: func(t *testing.T, ch *Chart, err error) {
				if err != nil {
					t.Fatalf("Chart: %v", err)
				}
				if ch.Symbol != "AAPL" || ch.Name != "Apple Inc." || ch.Currency != "USD" || ch.Exchange != "NasdaqGS" ||
					ch.InstrumentType != "EQUITY" || ch.Timezone != "America/New_York" || ch.Range != "5d" || ch.Interval != "1d" {
					t.Errorf("meta = %+v", ch)
				}
				if ch.Price != 213.07 || ch.DayHigh != 220.2 || ch.DayLow != 206.9 || ch.YearHigh != 220.2 || ch.YearLow != 164.08 {
					t.Errorf("prices = %+v", ch)
				}
				if want := time.Date(2024, 6, 12, 20, 0, 1, 0, time.UTC); !ch.MarketTime.Equal(want) {
					t.Errorf("MarketTime = %v, want %v", ch.MarketTime, want)
				}
				// Five timestamps, one null close left out.
				if len(ch.Points) != 4 {
					t.Fatalf("Points = %+v, want 4", ch.Points)
				}
				if p := ch.Points[0]; p.Close != 194.48 || !p.Time.Equal(time.Date(2024, 6, 6, 13, 30, 0, 0, time.UTC)) {
					t.Errorf("first point = %+v", p)
				}
				if p := ch.Points[2]; p.Close != 207.15 || !p.Time.Equal(time.Date(2024, 6, 11, 13, 30, 0, 0, time.UTC)) {
					t.Errorf("third point = %+v (the null close of 10 June must be skipped)", p)
				}
				// From chartPreviousClose 195.87 to the price 213.07.
				c := ch.Change
				if c.Start != 195.87 || c.End != 213.07 || !near(c.Absolute, 17.2) || !near(c.Percent, 8.78134) {
					t.Errorf("Change = %+v, want 195.87 → 213.07, +17.2, +8.78134%%", c)
				}
			},
		},
		{
			name: "5xx retried once then reported", wantHits: 2,
			reply: apitest.Reply{Status: 502, Body: "<html><body><h1>502 Bad Gateway</h1></body></html>", Header: map[string]string{"Content-Type": "text/html"}},
			check: func(t *testing.T, ch *Chart, err error) {
				apitest.WantError(t, err, 502, "Yahoo Finance", "HTTP 502 Bad Gateway", "502 Bad Gateway")
			},
		},
		{
			name: "429 is ErrRateLimited", wantHits: 1,
			reply: apitest.Reply{Status: 429, Body: "Too Many Requests\r\n", Header: map[string]string{"Retry-After": "30", "Content-Type": "text/plain"}},
			check: func(t *testing.T, ch *Chart, err error) {
				apitest.WantError(t, err, 429, "HTTP 429 Too Many Requests", "retry after 30s")
				if !errors.Is(err, ErrRateLimited) {
					t.Errorf("errors.Is(err, ErrRateLimited) = false for %v", err)
				}
				var e *Error
				if errors.As(err, &e) && e.RetryAfter != 30*time.Second {
					t.Errorf("RetryAfter = %v", e.RetryAfter)
				}
			},
		},
		{
			name: "unknown symbol is ErrNotFound", wantHits: 1,
			reply: apitest.Reply{Status: 404, Body: apitest.Fixture(t, "chart_not_found.json")},
			check: func(t *testing.T, ch *Chart, err error) {
				apitest.WantError(t, err, 404, "AAPL", "No data found, symbol may be delisted")
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("errors.Is(err, ErrNotFound) = false for %v", err)
				}
			},
		},
		{
			name: "bad request explained", wantHits: 1,
			reply: apitest.Reply{Status: 400, Body: apitest.Fixture(t, "chart_bad_interval.json")},
			check: func(t *testing.T, ch *Chart, err error) {
				apitest.WantError(t, err, 400, "interval=1m is not supported for range 10y")
			},
		},
		{
			name: "chart.error in a 200 answer", wantHits: 1,
			reply: apitest.Reply{Body: apitest.Fixture(t, "chart_not_found.json")},
			check: func(t *testing.T, ch *Chart, err error) {
				apitest.WantError(t, err, 0, "AAPL: No data found")
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("errors.Is(err, ErrNotFound) = false for %v", err)
				}
			},
		},
		{
			name: "timeout", wantHits: 1, timeout: 100 * time.Millisecond,
			reply: apitest.Reply{Body: aapl, Delay: 3 * time.Second},
			check: func(t *testing.T, ch *Chart, err error) {
				apitest.WantError(t, err, 0, "Yahoo Finance", "within 100ms")
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("errors.Is(err, context.DeadlineExceeded) = false for %v", err)
				}
			},
		},
		{
			name: "malformed JSON", wantHits: 1,
			reply: apitest.Reply{Body: `{"chart":{"result":[{"meta":{"currency":"USD",`},
			check: func(t *testing.T, ch *Chart, err error) {
				apitest.WantError(t, err, 0, "Yahoo Finance", "not valid JSON", `{\"chart\"`)
			},
		},
		{
			name: "empty result", wantHits: 1,
			reply: apitest.Reply{Body: apitest.Fixture(t, "chart_empty.json")},
			check: func(t *testing.T, ch *Chart, err error) {
				apitest.WantError(t, err, 0, "AAPL: no chart data")
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("errors.Is(err, ErrNotFound) = false for %v", err)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tt.reply))
			c := newTestClient(srv, tt.timeout)
			ch, err := c.Chart(t.Context(), " aapl ", "5D", "")
			tt.check(t, ch, err)
			if err != nil && ch != nil {
				t.Errorf("a chart came with the error: %+v", ch)
			}
			reqs := srv.Requests()
			if len(reqs) != tt.wantHits {
				t.Fatalf("requests = %d, want %d", len(reqs), tt.wantHits)
			}
			r := reqs[0]
			if r.Method != http.MethodGet || r.Path != "/v8/finance/chart/AAPL" {
				t.Errorf("request = %s %s", r.Method, r.Path)
			}
			if got := r.Query.Encode(); got != "includePrePost=false&interval=30m&range=5d" {
				t.Errorf("query = %s", got)
			}
			if ua := r.Header.Get("User-Agent"); !strings.Contains(ua, "Mozilla/5.0") || !strings.Contains(ua, "Sova") {
				t.Errorf("User-Agent = %q", ua)
			}
		})
	}
}

func TestChartsParallel(t *testing.T) {
	aapl, toyota, missing := apitest.Fixture(t, "chart_aapl_5d.json"), apitest.Fixture(t, "chart_toyota_5d.json"), apitest.Fixture(t, "chart_not_found.json")
	srv := apitest.New(t, func(r *http.Request) apitest.Reply {
		switch r.URL.Path {
		case "/v8/finance/chart/AAPL":
			return apitest.Reply{Body: aapl, Delay: 200 * time.Millisecond}
		case "/v8/finance/chart/7203.T":
			return apitest.Reply{Body: toyota, Delay: 200 * time.Millisecond}
		}
		return apitest.Reply{Status: 404, Body: missing, Delay: 200 * time.Millisecond}
	})
	c := newTestClient(srv, 0)

	start := time.Now()
	res, err := c.Charts(t.Context(), []string{"AAPL", "7203.t", "NOSUCH", "aapl"}, "5d", "1d")
	if err != nil {
		t.Fatalf("Charts: %v", err)
	}
	if d := time.Since(start); d > 550*time.Millisecond {
		t.Errorf("three 200 ms answers took %v; they should be fetched in parallel", d)
	}
	if len(res) != 3 {
		t.Fatalf("results = %d, want 3 (the repeated AAPL dropped)", len(res))
	}
	if r := res[0]; r.Symbol != "AAPL" || r.Err != nil || r.Chart.Price != 213.07 {
		t.Errorf("AAPL = %+v", r)
	}
	if r := res[1]; r.Symbol != "7203.T" || r.Err != nil || r.Chart.Currency != "JPY" || r.Chart.Name != "Toyota Motor Corporation" ||
		r.Chart.Change.Start != 3300 || r.Chart.Change.Absolute != -23 || !near(r.Chart.Change.Percent, -0.69697) {
		t.Errorf("7203.T = %+v", r.Chart)
	}
	if r := res[2]; r.Symbol != "NOSUCH" || r.Chart != nil || !errors.Is(r.Err, ErrNotFound) {
		t.Errorf("NOSUCH = %+v", r)
	}
	for _, r := range srv.Requests() {
		if r.Query.Get("interval") != "1d" || r.Query.Get("range") != "5d" {
			t.Errorf("%s query = %s", r.Path, r.Query.Encode())
		}
	}

	// Every symbol failing is an error joining theirs.
	res, err = c.Charts(t.Context(), []string{"NOSUCH", "NOPE"}, "", "")
	if err == nil || !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "NOPE") || len(res) != 2 {
		t.Errorf("all failed: res=%+v err=%v", res, err)
	}
}

func TestChartInputValidation(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: "{}"}))
	c := newTestClient(srv, 0)
	ctx := t.Context()
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"empty ticker", func() error { _, err := c.Chart(ctx, " ", "", ""); return err }, "empty"},
		{"ticker with a space", func() error { _, err := c.Chart(ctx, "AAPL MSFT", "", ""); return err }, `"AAPL MSFT" is not a ticker symbol`},
		{"ticker with a slash", func() error { _, err := c.Chart(ctx, "../v7", "", ""); return err }, "not a ticker symbol"},
		{"ticker too long", func() error { _, err := c.Chart(ctx, strings.Repeat("A", 21), "", ""); return err }, "not a ticker symbol"},
		{"unknown range", func() error { _, err := c.Chart(ctx, "AAPL", "7d", ""); return err }, `unknown range "7d"`},
		{"unknown interval", func() error { _, err := c.Chart(ctx, "AAPL", "1y", "2d"); return err }, `unknown interval "2d"`},
		{"no symbols", func() error { _, err := c.Charts(ctx, nil, "", ""); return err }, "no ticker symbol"},
		{"too many symbols", func() error {
			_, err := c.Charts(ctx, strings.Split("A,B,C,D,E,F,G,H,I,J,K", ","), "", "")
			return err
		}, "11 ticker symbols given; at most 10"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want ErrInvalidInput containing %q", err, tt.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests sent for invalid input", n)
	}
	for _, ok := range []string{"^GSPC", "BRK-B", "EURUSD=X", "BTC-USD", "7203.T", "GC=F"} {
		if _, err := normalizeSymbol(ok); err != nil {
			t.Errorf("normalizeSymbol(%q): %v", ok, err)
		}
	}
}
