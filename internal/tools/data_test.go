package tools_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/apiclient/apitest"
	"github.com/sova-ai/sova/internal/provider/coins"
	"github.com/sova-ai/sova/internal/provider/markets"
	"github.com/sova-ai/sova/internal/provider/places"
	"github.com/sova-ai/sova/internal/provider/weather"
	"github.com/sova-ai/sova/internal/tools"
)

// fixtureOf reads a provider package's test fixture.
func fixtureOf(t *testing.T, pkg, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "provider", pkg, "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runTool calls a tool and decodes its structured output into out.
func runTool(t *testing.T, tool agent.Tool, args string, out any) agent.Output {
	t.Helper()
	o, err := tool.(agent.Runner).Run(t.Context(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s(%s): %v", tool.Name(), args, err)
	}
	if err := json.Unmarshal([]byte(o.Text), out); err != nil {
		t.Fatalf("%s output %q: %v", tool.Name(), o.Text, err)
	}
	return o
}

func TestGetWeatherData(t *testing.T) {
	srv := apitest.New(t, apitest.ByPath(map[string]apitest.Reply{
		"/v1/search":   {Body: fixtureOf(t, "weather", "om_geocoding_berlin.json")},
		"/v1/forecast": {Body: fixtureOf(t, "weather", "om_forecast_berlin.json")},
	}, apitest.Reply{Status: 404}))
	c, err := weather.New(weather.Config{OpenMeteoURL: srv.URL, OpenMeteoGeocodingURL: srv.URL, RetryBackoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	run := tools.NewRun(tools.Providers{Weather: c}, nil)
	var out tools.WeatherResult
	o := runTool(t, tools.GetWeatherData(run, tools.WeatherOptions{Language: "en"}), `{"location":"Berlin","days":3}`, &out)
	if out.Provider != weather.OpenMeteo || out.Location.Name != "Berlin" || out.Location.CountryCode != "DE" || out.Units.Temperature != "°C" ||
		len(out.Daily) == 0 || out.Daily[0].Date == "" || out.Current.Description == "" {
		t.Errorf("output %+v", out)
	}
	if !strings.HasPrefix(o.Summary, "Weather in Berlin: ") {
		t.Errorf("summary %q", o.Summary)
	}
	if _, err := tools.GetWeatherData(run, tools.WeatherOptions{}).(agent.Runner).Run(t.Context(), json.RawMessage(`{}`)); err == nil {
		t.Error("no location accepted")
	}
}

func TestNearbyPlacesSearch(t *testing.T) {
	srv := apitest.New(t, apitest.ByPath(map[string]apitest.Reply{
		"/search":          {Body: fixtureOf(t, "places", "nominatim_red_square.json")},
		"/api/interpreter": {Body: fixtureOf(t, "places", "overpass_cafes.json")},
	}, apitest.Reply{Status: 404}))
	c, err := places.New(places.Config{NominatimURL: srv.URL, OverpassURL: srv.URL, NominatimInterval: time.Nanosecond, RetryBackoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	run := tools.NewRun(tools.Providers{Places: c}, nil)
	var out tools.PlacesResult
	runTool(t, tools.NearbyPlacesSearch(run, tools.PlacesOptions{}), `{"location":"Red Square, Moscow","type":"cafe","radius":500}`, &out)
	if out.Provider != places.OpenStreetMap || out.Type == "" || out.Radius != 500 || len(out.Places) == 0 || out.Center.Latitude == 0 {
		t.Fatalf("output %+v", out)
	}
	for i, p := range out.Places {
		if p.ID == "" || p.MapURL == "" || i > 0 && p.Distance < out.Places[i-1].Distance {
			t.Errorf("place %d: %+v", i, p)
		}
	}
}

func TestStockChartAndCurrency(t *testing.T) {
	srv := apitest.New(t, apitest.ByPath(map[string]apitest.Reply{
		"/v8/finance/chart/AAPL": {Body: fixtureOf(t, "markets", "chart_aapl_5d.json")},
		"/v8/finance/chart/NOPE": {Status: 404, Body: fixtureOf(t, "markets", "chart_not_found.json")},
		"/latest":                {Body: fixtureOf(t, "markets", "frankfurter_latest.json")},
	}, apitest.Reply{Status: 404}))
	c, err := markets.New(markets.Config{YahooFinanceURL: srv.URL, FrankfurterURL: srv.URL, RetryBackoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	run := tools.NewRun(tools.Providers{Markets: c}, nil)
	cites := tools.NewCitations(nil)
	var out tools.StockChartResult
	runTool(t, tools.StockChartTool(run, tools.StockChartOptions{Cite: cites}), `{"title":"Apple","symbols":["AAPL","NOPE"],"range":"5d"}`, &out)
	if out.Title != "Apple" || out.Range != "5d" || len(out.Charts) != 2 {
		t.Fatalf("output %+v", out)
	}
	a := out.Charts[0]
	if a.Symbol != "AAPL" || a.Number != 1 || a.Price != 213.07 || a.Currency != "USD" || len(a.Points) != 4 || a.Change == nil ||
		a.URL != "https://finance.yahoo.com/quote/AAPL" || a.Points[0].Close != 194.48 {
		t.Errorf("AAPL %+v", a)
	}
	if n := out.Charts[1]; n.Symbol != "NOPE" || n.Error == "" || n.Number != 0 {
		t.Errorf("NOPE %+v", n)
	}

	var conv tools.CurrencyResult
	runTool(t, tools.CurrencyConverter(run), `{"from":"usd","to":"EUR, GBP","amount":100}`, &conv)
	if conv.From == "" || conv.Date == "" || len(conv.Quotes) == 0 || conv.Quotes[0].Rate <= 0 || conv.Quotes[0].Amount <= 0 {
		t.Errorf("conversion %+v", conv)
	}
	req := srv.Requests()[len(srv.Requests())-1]
	if req.Query.Get("from") != "USD" || !strings.Contains(req.Query.Get("to"), "EUR") || !strings.Contains(req.Query.Get("to"), "GBP") {
		t.Errorf("Frankfurter request %s?%s", req.Path, req.Query.Encode())
	}
}

func TestCoinTools(t *testing.T) {
	srv := apitest.New(t, apitest.ByPath(map[string]apitest.Reply{
		"/api/v3/coins/bitcoin":      {Body: fixtureOf(t, "coins", "coin_bitcoin.json")},
		"/api/v3/coins/bitcoin/ohlc": {Body: fixtureOf(t, "coins", "ohlc_bitcoin_7d.json")},
		"/api/v3/coins/ethereum/contract/0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48": {Body: fixtureOf(t, "coins", "coin_usdc_contract.json")},
	}, apitest.Reply{Status: 404, Body: fixtureOf(t, "coins", "coin_not_found.json")}))
	c, err := coins.New(coins.Config{URL: srv.URL, RetryBackoff: -1})
	if err != nil {
		t.Fatal(err)
	}
	run := tools.NewRun(tools.Providers{Coins: c}, nil)
	cites := tools.NewCitations(nil)
	o := tools.CoinOptions{Cite: cites}

	var coin tools.CoinResult
	runTool(t, tools.CoinData(run, o), `{"coinId":"bitcoin"}`, &coin)
	if coin.ID != "bitcoin" || coin.Symbol != "btc" || coin.Number != 1 || coin.Price <= 0 || coin.MarketCap <= 0 || coin.Currency != "usd" ||
		!strings.Contains(coin.URL, "coingecko.com") {
		t.Errorf("coin_data %+v", coin)
	}
	var ohlc tools.CoinOHLCResult
	runTool(t, tools.CoinOHLC(run, o), `{"coinId":"bitcoin","days":"7"}`, &ohlc)
	if ohlc.ID != "bitcoin" || ohlc.Days != "7" || len(ohlc.Candles) == 0 || ohlc.Candles[0].Time == "" || ohlc.High < ohlc.Low || ohlc.Number == 0 {
		t.Errorf("coin_ohlc %+v", ohlc)
	}
	var tok tools.CoinResult
	runTool(t, tools.CoinDataByContract(run, o), `{"contractAddress":"0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48","platform":"ethereum"}`, &tok)
	if tok.ID == "" || tok.ContractAddress == "" || tok.Number == 0 {
		t.Errorf("coin_data_by_contract %+v", tok)
	}
	if _, err := tools.CoinData(run, o).(agent.Runner).Run(t.Context(), json.RawMessage(`{"coinId":"nocoin"}`)); err == nil {
		t.Error("unknown coin: no error")
	}
}

func TestDataToolStatus(t *testing.T) {
	var none tools.Providers
	for _, name := range []string{"get_weather_data", "nearby_places_search", "stock_chart", "currency_converter", "coin_data", "coin_ohlc", "coin_data_by_contract"} {
		if s, ok := none.Status(name); !ok || s.Available || s.Reason != "not configured" {
			t.Errorf("%s without a provider: %+v", name, s)
		}
	}
	w, _ := weather.New(weather.Config{})
	m, _ := markets.New(markets.Config{})
	cg, _ := coins.New(coins.Config{APIKey: "k"})
	p := tools.Providers{Weather: w, Markets: m, Coins: cg}
	if s, _ := p.Status("get_weather_data"); !s.Available || s.Provider != weather.OpenMeteo || s.Note == "" {
		t.Errorf("weather %+v", s)
	}
	if s, _ := p.Status("currency_converter"); !s.Available || s.Provider != "frankfurter" {
		t.Errorf("currency %+v", s)
	}
	if s, _ := p.Status("coin_ohlc"); !s.Available || s.Provider != "coingecko (demo)" {
		t.Errorf("coins %+v", s)
	}
}
