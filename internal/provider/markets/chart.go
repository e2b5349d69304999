package markets

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/sova-ai/sova/internal/apiclient"
)

// Chart limits.
const (
	// MaxSymbols is the most tickers one Charts call takes.
	MaxSymbols = 10
	// chartConcurrency is how many charts are fetched at once.
	chartConcurrency = 4
)

// Ranges Yahoo Finance accepts, and the interval used for each when the
// caller gives none.
var defaultIntervals = map[string]string{
	"1d": "5m", "5d": "30m", "1mo": "1d", "3mo": "1d", "6mo": "1d",
	"ytd": "1d", "1y": "1d", "2y": "1wk", "5y": "1wk", "10y": "1mo", "max": "3mo",
}

// intervals Yahoo Finance accepts.
var intervals = []string{"1m", "2m", "5m", "15m", "30m", "60m", "90m", "1h", "1d", "5d", "1wk", "1mo", "3mo"}

// DefaultRange is used when a call names no range.
const DefaultRange = "1mo"

// Ranges lists the accepted ranges, shortest first.
func Ranges() []string {
	return []string{"1d", "5d", "1mo", "3mo", "6mo", "ytd", "1y", "2y", "5y", "10y", "max"}
}

// symbolRE is Yahoo's ticker syntax: letters and digits with the
// punctuation of indices (^GSPC), share classes (BRK-B), exchanges
// (SBER.ME, 7203.T), currencies (EURUSD=X) and futures (GC=F).
var symbolRE = regexp.MustCompile(`^[A-Z0-9^][A-Z0-9.\-=^]{0,19}$`)

// Chart is one symbol's price history over a range.
type Chart struct {
	Symbol         string
	Name           string // long name, else short name; may be empty
	Currency       string // e.g. "USD"
	Exchange       string // full exchange name, e.g. "NasdaqGS"
	InstrumentType string // e.g. "EQUITY", "ETF", "INDEX", "CURRENCY"
	Timezone       string // the exchange's IANA zone, e.g. "America/New_York"
	Range          string
	Interval       string

	Price         float64   // regularMarketPrice: the latest price
	PreviousClose float64   // the previous session's close; 0 when not given
	MarketTime    time.Time // when Price was set
	DayHigh       float64
	DayLow        float64
	YearHigh      float64 // 52-week high
	YearLow       float64 // 52-week low

	Points []Point // closes in time order; periods without a close are left out
	Change Change
}

// Point is one close.
type Point struct {
	Time  time.Time
	Close float64
}

// Change is the price change over the chart's range: from the close
// before the range began (Yahoo's chartPreviousClose; the first close in
// the range when Yahoo gives none) to the latest price.
type Change struct {
	Start    float64
	End      float64
	Absolute float64 // End - Start
	Percent  float64 // Absolute as a percentage of Start; 0 when Start is 0
}

// ChartResult is one symbol's outcome in Charts.
type ChartResult struct {
	Symbol string
	Chart  *Chart // nil when Err is set
	Err    error
}

// Chart fetches one symbol's chart: GET /v8/finance/chart/{symbol}
// ?range=&interval=. rng "" means DefaultRange; interval "" picks one that
// suits the range.
func (c *Client) Chart(ctx context.Context, symbol, rng, interval string) (*Chart, error) {
	sym, err := normalizeSymbol(symbol)
	if err != nil {
		return nil, err
	}
	rng, interval, err = rangeInterval(rng, interval)
	if err != nil {
		return nil, err
	}
	return c.chart(ctx, sym, rng, interval)
}

// Charts fetches the charts of several symbols in parallel; the results
// follow the order of symbols (repeats removed). One symbol's failure is
// reported in its result; the error is non-nil only when the input is
// invalid or every symbol failed (then it joins their errors).
func (c *Client) Charts(ctx context.Context, symbols []string, rng, interval string) ([]ChartResult, error) {
	var syms []string
	for _, s := range symbols {
		sym, err := normalizeSymbol(s)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(syms, sym) {
			syms = append(syms, sym)
		}
	}
	if len(syms) == 0 {
		return nil, apiclient.Invalid(yahooName, "no ticker symbol given")
	}
	if len(syms) > MaxSymbols {
		return nil, apiclient.Invalid(yahooName, "%d ticker symbols given; at most %d at a time", len(syms), MaxSymbols)
	}
	rng, interval, err := rangeInterval(rng, interval)
	if err != nil {
		return nil, err
	}

	out := make([]ChartResult, len(syms))
	var g errgroup.Group
	g.SetLimit(chartConcurrency)
	for i, sym := range syms {
		g.Go(func() error {
			ch, err := c.chart(ctx, sym, rng, interval)
			out[i] = ChartResult{Symbol: sym, Chart: ch, Err: err}
			return nil
		})
	}
	_ = g.Wait()

	var errs []error
	for _, r := range out {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	if len(errs) == len(out) {
		return out, errors.Join(errs...)
	}
	return out, nil
}

func (c *Client) chart(ctx context.Context, sym, rng, interval string) (*Chart, error) {
	var resp chartResponse
	q := url.Values{"range": {rng}, "interval": {interval}, "includePrePost": {"false"}}
	err := c.yahoo.GetJSON(ctx, c.yahooURL+"/v8/finance/chart/"+url.PathEscape(sym)+"?"+q.Encode(), nil, &resp)
	if err != nil {
		var e *apiclient.Error
		if errors.As(err, &e) && e.Status != 0 {
			e.Message = sym + ": " + e.Message
		}
		return nil, err
	}
	if resp.Chart.Error != nil {
		msg := strings.TrimSpace(resp.Chart.Error.Description)
		if msg == "" {
			msg = resp.Chart.Error.Code
		}
		if resp.Chart.Error.Code == "Not Found" {
			return nil, apiclient.NotFound(yahooName, "%s: %s", sym, msg)
		}
		return nil, &Error{Provider: yahooName, Message: sym + ": " + msg}
	}
	if len(resp.Chart.Result) == 0 {
		return nil, apiclient.NotFound(yahooName, "%s: no chart data (is the symbol right?)", sym)
	}
	return toChart(resp.Chart.Result[0], sym, rng, interval), nil
}

func toChart(r chartResult, sym, rng, interval string) *Chart {
	m := r.Meta
	ch := &Chart{
		Symbol:         orDefault(m.Symbol, sym),
		Name:           orDefault(m.LongName, m.ShortName),
		Currency:       m.Currency,
		Exchange:       orDefault(m.FullExchangeName, m.ExchangeName),
		InstrumentType: m.InstrumentType,
		Timezone:       m.ExchangeTimezoneName,
		Range:          orDefault(m.Range, rng),
		Interval:       orDefault(m.DataGranularity, interval),
		Price:          m.RegularMarketPrice,
		PreviousClose:  m.PreviousClose,
		DayHigh:        m.RegularMarketDayHigh,
		DayLow:         m.RegularMarketDayLow,
		YearHigh:       m.FiftyTwoWeekHigh,
		YearLow:        m.FiftyTwoWeekLow,
	}
	if m.RegularMarketTime > 0 {
		ch.MarketTime = time.Unix(m.RegularMarketTime, 0).UTC()
	}
	var closes []*float64
	if len(r.Indicators.Quote) > 0 {
		closes = r.Indicators.Quote[0].Close
	}
	for i, ts := range r.Timestamp {
		if i >= len(closes) || closes[i] == nil || math.IsNaN(*closes[i]) {
			continue
		}
		ch.Points = append(ch.Points, Point{Time: time.Unix(ts, 0).UTC(), Close: *closes[i]})
	}
	if ch.PreviousClose == 0 && rng == "1d" {
		ch.PreviousClose = m.ChartPreviousClose
	}

	start := m.ChartPreviousClose
	if start == 0 && len(ch.Points) > 0 {
		start = ch.Points[0].Close
	}
	end := ch.Price
	if end == 0 && len(ch.Points) > 0 {
		end = ch.Points[len(ch.Points)-1].Close
	}
	if ch.Price == 0 {
		ch.Price = end
	}
	ch.Change = Change{Start: start, End: end, Absolute: round(end - start)}
	if start != 0 {
		ch.Change.Percent = round((end - start) / start * 100)
	}
	return ch
}

// round keeps 6 decimals, hiding float noise such as 0.30000000000000004.
func round(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func normalizeSymbol(s string) (string, error) {
	sym := strings.ToUpper(strings.TrimSpace(s))
	if sym == "" {
		return "", apiclient.Invalid(yahooName, "the ticker symbol is empty")
	}
	if !symbolRE.MatchString(sym) {
		return "", apiclient.Invalid(yahooName, "%q is not a ticker symbol (Yahoo Finance symbols look like AAPL, BRK-B, ^GSPC, SBER.ME, EURUSD=X or BTC-USD)", s)
	}
	return sym, nil
}

func rangeInterval(rng, interval string) (string, string, error) {
	rng = strings.ToLower(strings.TrimSpace(rng))
	interval = strings.ToLower(strings.TrimSpace(interval))
	if rng == "" {
		rng = DefaultRange
	}
	def, ok := defaultIntervals[rng]
	if !ok {
		return "", "", apiclient.Invalid(yahooName, "unknown range %q (use one of %s)", rng, strings.Join(Ranges(), ", "))
	}
	if interval == "" {
		return rng, def, nil
	}
	if !slices.Contains(intervals, interval) {
		return "", "", apiclient.Invalid(yahooName, "unknown interval %q (use one of %s)", interval, strings.Join(intervals, ", "))
	}
	return rng, interval, nil
}

// chartResponse is the part of Yahoo's /v8/finance/chart answer that is
// used: {"chart":{"result":[{meta, timestamp, indicators}], "error":null}}.
type chartResponse struct {
	Chart struct {
		Result []chartResult `json:"result"`
		Error  *struct {
			Code        string `json:"code"`
			Description string `json:"description"`
		} `json:"error"`
	} `json:"chart"`
}

type chartResult struct {
	Meta struct {
		Currency             string  `json:"currency"`
		Symbol               string  `json:"symbol"`
		ExchangeName         string  `json:"exchangeName"`
		FullExchangeName     string  `json:"fullExchangeName"`
		InstrumentType       string  `json:"instrumentType"`
		ExchangeTimezoneName string  `json:"exchangeTimezoneName"`
		RegularMarketTime    int64   `json:"regularMarketTime"`
		RegularMarketPrice   float64 `json:"regularMarketPrice"`
		RegularMarketDayHigh float64 `json:"regularMarketDayHigh"`
		RegularMarketDayLow  float64 `json:"regularMarketDayLow"`
		FiftyTwoWeekHigh     float64 `json:"fiftyTwoWeekHigh"`
		FiftyTwoWeekLow      float64 `json:"fiftyTwoWeekLow"`
		LongName             string  `json:"longName"`
		ShortName            string  `json:"shortName"`
		ChartPreviousClose   float64 `json:"chartPreviousClose"`
		PreviousClose        float64 `json:"previousClose"`
		DataGranularity      string  `json:"dataGranularity"`
		Range                string  `json:"range"`
	} `json:"meta"`
	Timestamp  []int64 `json:"timestamp"`
	Indicators struct {
		Quote []struct {
			Close []*float64 `json:"close"`
		} `json:"quote"`
	} `json:"indicators"`
}

// describeYahoo reads Yahoo's error body {"chart":{"error":{"code",
// "description"}}} (also {"finance":{"error":...}}).
func describeYahoo(_ int, body []byte) (string, bool) {
	var v struct {
		Chart struct {
			Error *struct{ Code, Description string } `json:"error"`
		} `json:"chart"`
		Finance struct {
			Error *struct{ Code, Description string } `json:"error"`
		} `json:"finance"`
	}
	if json.Unmarshal(body, &v) != nil {
		return "", false
	}
	for _, e := range []*struct{ Code, Description string }{v.Chart.Error, v.Finance.Error} {
		if e != nil {
			if e.Description != "" {
				return e.Description, false
			}
			return e.Code, false
		}
	}
	return "", false
}

// Intervals lists the accepted intervals, shortest first.
func Intervals() []string { return slices.Clone(intervals) }

// Words for periods that models write instead of Yahoo's codes; a word
// names a range or an interval depending on where it is used.
var (
	rangeWords = map[string]string{
		"day": "1d", "today": "1d", "1day": "1d", "week": "5d", "1week": "5d", "1w": "5d", "1wk": "5d",
		"month": "1mo", "1month": "1mo", "1m": "1mo", "3months": "3mo", "3m": "3mo", "quarter": "3mo",
		"6months": "6mo", "6m": "6mo", "halfyear": "6mo", "year": "1y", "1year": "1y", "12mo": "1y", "12months": "1y",
		"2years": "2y", "5years": "5y", "10years": "10y", "yeartodate": "ytd", "all": "max", "alltime": "max",
	}
	intervalWords = map[string]string{
		"minute": "1m", "1min": "1m", "hour": "1h", "hourly": "1h", "60min": "60m", "day": "1d", "daily": "1d",
		"1day": "1d", "week": "1wk", "weekly": "1wk", "1w": "1wk", "1week": "1wk", "month": "1mo", "monthly": "1mo",
		"1month": "1mo", "quarter": "3mo", "quarterly": "3mo",
	}
)

// NormalizeRange reads a range written loosely ("month", "1 year",
// "aapl month") as Yahoo's code; ok is false when no one code is meant.
func NormalizeRange(s string) (string, bool) { return normalizePeriod(s, Ranges(), rangeWords) }

// NormalizeInterval reads an interval written loosely ("weekly",
// "1 day") as Yahoo's code; ok is false when no one code is meant.
func NormalizeInterval(s string) (string, bool) { return normalizePeriod(s, intervals, intervalWords) }

func normalizePeriod(s string, codes []string, words map[string]string) (string, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	if slices.Contains(codes, s) {
		return s, true
	}
	joined := strings.NewReplacer(" ", "", "-", "", "_", "").Replace(s)
	if slices.Contains(codes, joined) {
		return joined, true
	}
	if c, ok := words[strings.TrimSuffix(joined, "s")]; ok {
		return c, true
	}
	if c, ok := words[joined]; ok {
		return c, true
	}
	// One word among others ("aapl month"): taken when exactly one of the
	// words names a period.
	found := ""
	for _, w := range strings.Fields(s) {
		c, ok := words[strings.TrimSuffix(w, "s")]
		if !ok {
			c, ok = words[w]
		}
		if !ok && slices.Contains(codes, w) {
			c, ok = w, true
		}
		if ok {
			if found != "" && found != c {
				return "", false
			}
			found = c
		}
	}
	return found, found != ""
}
