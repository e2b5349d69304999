package coins

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

const testKey = "CG-SECRETdemoKey0123456789"

func newTestClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	if cfg.RetryBackoff == 0 {
		cfg.RetryBackoff = time.Millisecond
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// wantErr checks that err is an *Error with status whose text holds every
// part and never the key.
var wantErr = apitest.ErrorCheck(testKey)

// commonCases are the failures every endpoint must report the same way.
func commonCases(t *testing.T, valid string) []struct {
	name     string
	reply    apitest.Reply
	timeout  time.Duration
	wantHits int
	check    func(t *testing.T, err error)
} {
	return []struct {
		name     string
		reply    apitest.Reply
		timeout  time.Duration
		wantHits int
		check    func(t *testing.T, err error)
	}{
		{
			name: "5xx retried once then reported", wantHits: 2,
			reply: apitest.Reply{Status: 503, Body: "<html><head><title>503 Service Temporarily Unavailable</title></head><body><center><h1>503 Service Temporarily Unavailable</h1></center></body></html>"},
			check: func(t *testing.T, err error) {
				wantErr(t, err, 503, "CoinGecko", "HTTP 503 Service Unavailable", "503 Service Temporarily Unavailable")
			},
		},
		{
			name: "429 is ErrRateLimited", wantHits: 1,
			reply: apitest.Reply{Status: 429, Body: apitest.Fixture(t, "rate_limited.json"), Header: map[string]string{"Retry-After": "60"}},
			check: func(t *testing.T, err error) {
				wantErr(t, err, 429, "HTTP 429", "You've exceeded the Rate Limit", "retry after 1m0s")
				if !errors.Is(err, ErrRateLimited) {
					t.Errorf("not ErrRateLimited: %v", err)
				}
			},
		},
		{
			name: "wrong plan for the key", wantHits: 1,
			reply: apitest.Reply{Status: 400, Body: apitest.Fixture(t, "pro_key_on_public_host.json")},
			check: func(t *testing.T, err error) {
				wantErr(t, err, 400, "change your root URL", "SOVA_COINGECKO_PLAN=demo")
			},
		},
		{
			name: "timeout", wantHits: 1, timeout: 100 * time.Millisecond,
			reply: apitest.Reply{Body: valid, Delay: 3 * time.Second},
			check: func(t *testing.T, err error) {
				wantErr(t, err, 0, "CoinGecko", "no answer", "within 100ms")
				if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("not DeadlineExceeded: %v", err)
				}
			},
		},
		{
			name: "malformed JSON", wantHits: 1,
			reply: apitest.Reply{Body: valid[:len(valid)/2]},
			check: func(t *testing.T, err error) {
				wantErr(t, err, 0, "CoinGecko", "not valid JSON")
			},
		},
	}
}

func TestCoin(t *testing.T) {
	body := apitest.Fixture(t, "coin_bitcoin.json")
	cases := commonCases(t, body)
	cases = append(cases, []struct {
		name     string
		reply    apitest.Reply
		timeout  time.Duration
		wantHits int
		check    func(t *testing.T, err error)
	}{
		{
			name: "unknown id is ErrNotFound", wantHits: 1,
			reply: apitest.Reply{Status: 404, Body: apitest.Fixture(t, "coin_not_found.json")},
			check: func(t *testing.T, err error) {
				wantErr(t, err, 404, "coin bitcoin: ", "HTTP 404 Not Found: coin not found", "a ticker such as BTC is not an id")
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("not ErrNotFound: %v", err)
				}
			},
		},
		{
			name: "empty object", wantHits: 1,
			reply: apitest.Reply{Body: `{}`},
			check: func(t *testing.T, err error) {
				wantErr(t, err, 0, "names no coin")
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("not ErrNotFound: %v", err)
				}
			},
		},
	}...)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tt.reply))
			c := newTestClient(t, Config{URL: srv.URL, APIKey: testKey, Timeout: tt.timeout})
			coin, err := c.Coin(t.Context(), " Bitcoin ", "")
			if coin != nil {
				t.Errorf("a coin came with the error: %+v", coin)
			}
			tt.check(t, err)
			if n := len(srv.Requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
		})
	}
}

func TestCoinParsed(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: apitest.Fixture(t, "coin_bitcoin.json")}))
	c := newTestClient(t, Config{URL: srv.URL, APIKey: testKey})

	coin, err := c.Coin(t.Context(), "bitcoin", "EUR")
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Method != http.MethodGet || r.Path != "/api/v3/coins/bitcoin" {
		t.Errorf("request = %s %s", r.Method, r.Path)
	}
	if got := r.Query.Encode(); got != "community_data=false&developer_data=false&localization=false&market_data=true&sparkline=false&tickers=false" {
		t.Errorf("query = %s", got)
	}
	if got := r.Header.Get("x-cg-demo-api-key"); got != testKey {
		t.Errorf("x-cg-demo-api-key = %q", got)
	}
	if got := r.Header.Get("x-cg-pro-api-key"); got != "" {
		t.Errorf("x-cg-pro-api-key = %q on the Demo plan", got)
	}

	if coin.ID != "bitcoin" || coin.Symbol != "btc" || coin.Name != "Bitcoin" || coin.Currency != "eur" ||
		coin.URL != "https://www.coingecko.com/en/coins/bitcoin" || coin.MarketCapRank != 1 || coin.GenesisDate != "2009-01-03" ||
		coin.Homepage != "http://www.bitcoin.org" || coin.Whitepaper != "https://bitcoin.org/bitcoin.pdf" || coin.AssetPlatformID != "" {
		t.Errorf("profile = %+v", coin)
	}
	if coin.Platforms != nil {
		t.Errorf("Platforms = %v, want nil for a native coin", coin.Platforms)
	}
	if len(coin.Categories) != 4 || coin.Categories[1] != "Layer 1 (L1)" {
		t.Errorf("Categories = %q", coin.Categories)
	}
	if coin.Price != 62380 || coin.MarketCap != 1229506712435 || coin.TotalVolume != 24400632018 || coin.High24h != 63150 || coin.Low24h != 61920 ||
		coin.PriceChange24h != -95.8 || coin.PriceChangePercent24h != -0.15334 || coin.PriceChangePercent7d != -3.2245 ||
		coin.PriceChangePercent30d != 8.2101 || coin.PriceChangePercent1y != 155.31 || coin.ATH != 67405 || coin.ATHChangePercent != -7.45589 ||
		coin.FullyDilutedValuation != 1310146573069 {
		t.Errorf("market data in eur = %+v", coin)
	}
	if want := time.Date(2024, 3, 14, 7, 10, 36, 635e6, time.UTC); !coin.ATHDate.Equal(want) {
		t.Errorf("ATHDate = %v", coin.ATHDate)
	}
	if coin.CirculatingSupply != 19707846 || coin.TotalSupply == nil || *coin.TotalSupply != 21e6 || coin.MaxSupply == nil || *coin.MaxSupply != 21e6 {
		t.Errorf("supply = %v %v %v", coin.CirculatingSupply, coin.TotalSupply, coin.MaxSupply)
	}
	if want := time.Date(2024, 6, 12, 14, 23, 8, 712e6, time.UTC); !coin.LastUpdated.Equal(want) {
		t.Errorf("LastUpdated = %v", coin.LastUpdated)
	}

	d := coin.Description
	if !strings.HasPrefix(d, "Bitcoin is the first successful internet money based on peer-to-peer technology;") {
		t.Errorf("Description starts %q", d[:60])
	}
	if utf8.RuneCountInString(d) > MaxDescriptionRunes || !strings.HasSuffix(d, ".") || strings.ContainsAny(d, "<>\r\n") || strings.Contains(d, "  ") {
		t.Errorf("Description is not trimmed plain text ending a sentence: %q", d)
	}
}

func TestCoinOtherCurrencyMissing(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: apitest.Fixture(t, "coin_bitcoin.json")}))
	c := newTestClient(t, Config{URL: srv.URL})
	_, err := c.Coin(t.Context(), "bitcoin", "jpy")
	wantErr(t, err, 0, `bitcoin has no prices in "jpy"`, "btc, eur, rub, usd")
	if !errors.Is(err, ErrInvalidInput) {
		t.Errorf("not ErrInvalidInput: %v", err)
	}
}

func TestCoinByContract(t *testing.T) {
	body := apitest.Fixture(t, "coin_usdc_contract.json")
	const addr = "0xA0b86991c6218b36c1d19d4a2e9eB0cE3606eB48"
	cases := commonCases(t, body)
	cases = append(cases, []struct {
		name     string
		reply    apitest.Reply
		timeout  time.Duration
		wantHits int
		check    func(t *testing.T, err error)
	}{
		{
			name: "answer parsed", wantHits: 1, reply: apitest.Reply{Body: body},
			check: func(t *testing.T, err error) {
				if err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "unknown contract", wantHits: 1,
			reply: apitest.Reply{Status: 404, Body: `{"error":"Could not find coin with the given id"}`},
			check: func(t *testing.T, err error) {
				wantErr(t, err, 404, "contract 0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48 on ethereum", "Could not find coin with the given id")
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("not ErrNotFound: %v", err)
				}
			},
		},
	}...)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tt.reply))
			c := newTestClient(t, Config{URL: srv.URL, APIKey: testKey, Timeout: tt.timeout})
			coin, err := c.CoinByContract(t.Context(), "Ethereum", addr, "usd")
			tt.check(t, err)
			reqs := srv.Requests()
			if len(reqs) != tt.wantHits {
				t.Fatalf("requests = %d, want %d", len(reqs), tt.wantHits)
			}
			if p := reqs[0].Path; p != "/api/v3/coins/ethereum/contract/0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48" {
				t.Errorf("path = %s", p)
			}
			if err != nil {
				return
			}
			if coin.ID != "usd-coin" || coin.Symbol != "usdc" || coin.AssetPlatformID != "ethereum" ||
				coin.ContractAddress != "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48" || coin.URL != "https://www.coingecko.com/en/coins/usdc" {
				t.Errorf("coin = %+v", coin)
			}
			if len(coin.Platforms) != 5 || coin.Platforms["solana"] != "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" {
				t.Errorf("Platforms = %v", coin.Platforms)
			}
			if coin.Price != 0.999812 || coin.MarketCapRank != 6 || coin.MaxSupply != nil || coin.GenesisDate != "" || coin.Whitepaper != "" {
				t.Errorf("market data = %+v", coin)
			}
			if !strings.Contains(coin.Description, "businesses & financial institutions") {
				t.Errorf("entities not decoded: %q", coin.Description)
			}
		})
	}
}

func TestOHLC(t *testing.T) {
	body := apitest.Fixture(t, "ohlc_bitcoin_7d.json")
	cases := commonCases(t, body)
	cases = append(cases, []struct {
		name     string
		reply    apitest.Reply
		timeout  time.Duration
		wantHits int
		check    func(t *testing.T, err error)
	}{
		{
			name: "empty list is ErrNotFound", wantHits: 1, reply: apitest.Reply{Body: `[]`},
			check: func(t *testing.T, err error) {
				wantErr(t, err, 0, "no candles for bitcoin in usd over 7 days")
				if !errors.Is(err, ErrNotFound) {
					t.Errorf("not ErrNotFound: %v", err)
				}
			},
		},
		{
			name: "short candle", wantHits: 1, reply: apitest.Reply{Body: `[[1717574400000,70567.0,70791.0,70479.0]]`},
			check: func(t *testing.T, err error) {
				wantErr(t, err, 0, "candle 0 of bitcoin has 4 values")
			},
		},
	}...)
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			srv := apitest.New(t, apitest.Always(tt.reply))
			c := newTestClient(t, Config{URL: srv.URL, APIKey: testKey, Timeout: tt.timeout})
			o, err := c.OHLC(t.Context(), "bitcoin", "", "")
			if o != nil {
				t.Errorf("candles came with the error: %+v", o)
			}
			tt.check(t, err)
			if n := len(srv.Requests()); n != tt.wantHits {
				t.Errorf("requests = %d, want %d", n, tt.wantHits)
			}
		})
	}
}

func TestOHLCParsed(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: apitest.Fixture(t, "ohlc_bitcoin_7d.json")}))
	c := newTestClient(t, Config{URL: srv.URL})
	o, err := c.OHLC(t.Context(), "bitcoin", "usd", "7")
	if err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if r.Path != "/api/v3/coins/bitcoin/ohlc" || r.Query.Encode() != "days=7&vs_currency=usd" {
		t.Errorf("request = %s?%s", r.Path, r.Query.Encode())
	}
	for _, h := range []string{"x-cg-demo-api-key", "x-cg-pro-api-key"} {
		if _, ok := r.Header[http.CanonicalHeaderKey(h)]; ok {
			t.Errorf("%s sent without a key", h)
		}
	}
	if len(o.Candles) != 6 {
		t.Fatalf("candles = %d", len(o.Candles))
	}
	first := o.Candles[0]
	if !first.Time.Equal(time.Date(2024, 6, 5, 8, 0, 0, 0, time.UTC)) || first.Open != 70567 || first.High != 70791 || first.Low != 70479 || first.Close != 70791 {
		t.Errorf("first candle = %+v", first)
	}
	if !o.Candles[5].Time.Equal(time.Date(2024, 6, 11, 20, 0, 0, 0, time.UTC)) || o.Candles[5].Close != 67187 {
		t.Errorf("last candle = %+v", o.Candles[5])
	}
	if o.Open != 70567 || o.Close != 67187 || o.High != 71667 || o.Low != 66711 || o.Change != -3380 || !near(o.ChangePercent, -4.78977426) {
		t.Errorf("summary = %+v", o)
	}
}

func TestPlans(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		wantPlan   string
		wantHeader string
		wantBase   string
	}{
		{"keyless", Config{}, "", "", DefaultURL},
		{"key, no plan: demo", Config{APIKey: testKey}, PlanDemo, "X-Cg-Demo-Api-Key", DefaultURL},
		{"pro plan", Config{APIKey: testKey, Plan: "Pro"}, PlanPro, "X-Cg-Pro-Api-Key", DefaultProURL},
		{"pro host implies pro", Config{APIKey: testKey, URL: "https://pro-api.coingecko.com/"}, PlanPro, "X-Cg-Pro-Api-Key", DefaultProURL},
		{"pro plan without a key stays public", Config{Plan: "pro"}, "", "", DefaultURL},
		{"demo plan on a mirror", Config{APIKey: testKey, Plan: "demo", URL: "http://cg.internal:8080"}, PlanDemo, "X-Cg-Demo-Api-Key", "http://cg.internal:8080"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTestClient(t, tt.cfg)
			if c.Plan() != tt.wantPlan || c.base != tt.wantBase {
				t.Errorf("plan %q base %q, want %q %q", c.Plan(), c.base, tt.wantPlan, tt.wantBase)
			}
			if len(c.header) > 1 || (tt.wantHeader == "") != (len(c.header) == 0) || (tt.wantHeader != "" && c.header.Get(tt.wantHeader) != testKey) {
				t.Errorf("headers = %v, want only %s", c.header, tt.wantHeader)
			}
		})
	}
	if _, err := New(Config{Plan: "enterprise"}); !errors.Is(err, ErrInvalidInput) || !strings.Contains(err.Error(), "SOVA_COINGECKO_PLAN") {
		t.Errorf("unknown plan: %v", err)
	}
	if _, err := New(Config{URL: "api.coingecko.com"}); err == nil || !strings.Contains(err.Error(), "SOVA_COINGECKO_URL") {
		t.Errorf("URL without a scheme: %v", err)
	}
}

func TestProKeyHeaderSent(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Status: 401, Body: `{"status":{"error_code":10002,"error_message":"API Key Missing"}}`}))
	c := newTestClient(t, Config{URL: srv.URL, APIKey: testKey, Plan: PlanPro})
	_, err := c.Coin(t.Context(), "bitcoin", "usd")
	wantErr(t, err, 401, "API Key Missing", "SOVA_COINGECKO_PLAN=pro")
	r := srv.Requests()[0]
	if r.Header.Get("x-cg-pro-api-key") != testKey || r.Header.Get("x-cg-demo-api-key") != "" {
		t.Errorf("headers = %v", r.Header)
	}
}

func TestInputValidation(t *testing.T) {
	srv := apitest.New(t, apitest.Always(apitest.Reply{Body: "{}"}))
	c := newTestClient(t, Config{URL: srv.URL})
	ctx := t.Context()
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"empty id", func() error { _, err := c.Coin(ctx, "", ""); return err }, "coin id is empty"},
		{"id with a slash", func() error { _, err := c.Coin(ctx, "bitcoin/ohlc", ""); return err }, "not a CoinGecko coin id"},
		{"id with a space", func() error { _, err := c.Coin(ctx, "bitcoin cash", ""); return err }, "not a CoinGecko coin id"},
		{"bad currency", func() error { _, err := c.Coin(ctx, "bitcoin", "us dollar"); return err }, "not a quote currency"},
		{"bad days", func() error { _, err := c.OHLC(ctx, "bitcoin", "usd", "5"); return err }, `days "5" is not offered`},
		{"short hex address", func() error {
			_, err := c.CoinByContract(ctx, "ethereum", "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb4", "")
			return err
		}, "0x followed by 40 hex digits"},
		{"non-hex address", func() error {
			_, err := c.CoinByContract(ctx, "ethereum", "0xz0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "")
			return err
		}, "0x followed by 40 hex digits"},
		{"not an address", func() error { _, err := c.CoinByContract(ctx, "ethereum", "usdc", ""); return err }, "not a contract address"},
		{"bad platform", func() error {
			_, err := c.CoinByContract(ctx, "../coins", "0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48", "")
			return err
		}, "not an asset platform id"},
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
	if a, err := normalizeAddress("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"); err != nil || a != "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" {
		t.Errorf("Solana address: %q %v", a, err)
	}
}

func TestPlainDescription(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"Short <b>text</b>.\r\n\r\nMore &amp; more.", 100, "Short text. More & more."},
		{strings.Repeat("word ", 10), 12, "word word…"},
		{"First sentence here. Second sentence goes on and on", 30, "First sentence here."},
		{"Привет мир. Ещё одно предложение", 20, "Привет мир."},
	}
	for _, tt := range tests {
		if got := plainDescription(tt.in, tt.max); got != tt.want {
			t.Errorf("plainDescription(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
		}
	}
}
