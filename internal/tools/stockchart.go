package tools

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/markets"
)

// StockChartName is the stocks group's chart tool (seed 000 §1.2).
const StockChartName = markets.ChartToolName

// StockChartArgs are stock_chart's arguments.
type StockChartArgs struct {
	Title    string   `json:"title" jsonschema:"a short title for the chart, shown to people"`
	Symbols  []string `json:"symbols" jsonschema:"1 to 10 Yahoo Finance tickers: AAPL, MSFT, 7203.T, ^GSPC, BTC-USD, EURUSD=X"`
	Range    string   `json:"range,omitempty" jsonschema:"the period: 1d, 5d, 1mo (default), 3mo, 6mo, 1y, 2y, 5y, 10y, ytd or max"`
	Interval string   `json:"interval,omitempty" jsonschema:"the spacing of the points (1d, 1wk, …); chosen to suit the range when left out"`
}

// StockChartResult is stock_chart's output.
type StockChartResult struct {
	Title  string       `json:"title"`
	Range  string       `json:"range"`
	Charts []StockChart `json:"charts"`
}

// StockChart is one symbol's chart, or its error.
type StockChart struct {
	Number         int          `json:"number,omitempty"`
	Symbol         string       `json:"symbol"`
	Name           string       `json:"name,omitempty"`
	Currency       string       `json:"currency,omitempty"`
	Exchange       string       `json:"exchange,omitempty"`
	InstrumentType string       `json:"instrumentType,omitempty"`
	URL            string       `json:"url"`
	Price          float64      `json:"price"`
	PreviousClose  float64      `json:"previousClose,omitempty"`
	MarketTime     string       `json:"marketTime,omitempty"`
	DayHigh        float64      `json:"dayHigh,omitempty"`
	DayLow         float64      `json:"dayLow,omitempty"`
	YearHigh       float64      `json:"yearHigh,omitempty"`
	YearLow        float64      `json:"yearLow,omitempty"`
	Interval       string       `json:"interval,omitempty"`
	Change         *StockChange `json:"change,omitempty"`
	Points         []StockPoint `json:"points"`
	Error          string       `json:"error,omitempty"`
}

// StockChange is the change over the range.
type StockChange struct {
	Start    float64 `json:"start"`
	End      float64 `json:"end"`
	Absolute float64 `json:"absolute"`
	Percent  float64 `json:"percent"`
}

// StockPoint is one close.
type StockPoint struct {
	Time  string  `json:"time"`
	Close float64 `json:"close"`
}

// StockChartOptions tune a stock_chart tool.
type StockChartOptions struct {
	// Cite numbers each symbol's Yahoo Finance page as a citable source;
	// nil: not numbered.
	Cite *Citations
}

// StockChartTool is the stock_chart tool: price history of up to ten tickers
// from Yahoo Finance, for the UI to draw and the model to describe.
func StockChartTool(run *Run, o StockChartOptions) agent.Tool {
	call := func(ctx context.Context, a StockChartArgs) (agent.Output, error) {
		if run.p.Markets == nil {
			return agent.Output{}, errors.New("stock charts are not available")
		}
		if len(a.Symbols) == 0 {
			return agent.Output{}, errors.New("give at least one ticker symbol")
		}
		results, err := run.p.Markets.Charts(ctx, a.Symbols, a.Range, a.Interval)
		if err != nil {
			return agent.Output{}, err
		}
		out := StockChartResult{Title: a.Title, Range: a.Range, Charts: []StockChart{}}
		ok := 0
		for _, r := range results {
			c := StockChart{Symbol: r.Symbol, URL: "https://finance.yahoo.com/quote/" + url.PathEscape(r.Symbol), Points: []StockPoint{}}
			if r.Err != nil {
				c.Error = r.Err.Error()
				out.Charts = append(out.Charts, c)
				continue
			}
			ok++
			ch := r.Chart
			out.Range = ch.Range
			c.Name, c.Currency, c.Exchange, c.InstrumentType, c.Interval = ch.Name, ch.Currency, ch.Exchange, ch.InstrumentType, ch.Interval
			c.Price, c.PreviousClose, c.DayHigh, c.DayLow, c.YearHigh, c.YearLow = ch.Price, ch.PreviousClose, ch.DayHigh, ch.DayLow, ch.YearHigh, ch.YearLow
			if !ch.MarketTime.IsZero() {
				c.MarketTime = ch.MarketTime.UTC().Format("2006-01-02T15:04:05Z")
			}
			c.Change = &StockChange{ch.Change.Start, ch.Change.End, ch.Change.Absolute, ch.Change.Percent}
			for _, p := range ch.Points {
				c.Points = append(c.Points, StockPoint{p.Time.UTC().Format("2006-01-02T15:04:05Z"), p.Close})
			}
			if o.Cite != nil {
				title := ch.Symbol
				if ch.Name != "" {
					title = ch.Name + " (" + ch.Symbol + ")"
				}
				c.Number = o.Cite.Number(sova.Source{URL: c.URL, Title: title + " – Yahoo Finance", Kind: sova.SourceWeb,
					Snippet: fmt.Sprintf("%s %.2f %s", ch.Symbol, ch.Price, ch.Currency)})
			}
			out.Charts = append(out.Charts, c)
		}
		return jsonOutput(out, fmt.Sprintf("%s of %s charted", plural(ok, "symbol", "symbols"), strings.Join(a.Symbols, ", ")))
	}
	return agent.NewTool(StockChartName,
		"Get the price history and latest price of stocks, ETFs, indices or currency pairs by Yahoo Finance ticker, drawn as a chart for the person. "+
			"Use the datetime tool for today's date when the question depends on it.", call,
		agent.WithTitle(func(a StockChartArgs) string {
			if t := strings.TrimSpace(a.Title); t != "" {
				return "Charting " + clip(t, 80)
			}
			return "Charting " + clip(strings.Join(a.Symbols, ", "), 80)
		}),
		agent.WithSchema(func(s *jsonschema.Schema) {
			s.Properties["range"].Enum = enumOf(markets.Ranges())
			s.Properties["interval"].Enum = enumOf(markets.Intervals())
		}),
		// "month", "1 year", "weekly": forms models write for Yahoo's codes.
		agent.WithArgFix(func(args map[string]any) {
			for key, norm := range map[string]func(string) (string, bool){"range": markets.NormalizeRange, "interval": markets.NormalizeInterval} {
				if v, ok := args[key].(string); ok {
					if c, ok := norm(v); ok {
						args[key] = c
					}
				}
			}
		}))
}

// enumOf is a list of strings as a schema's enum.
func enumOf(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}
