package coins

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/sova-ai/sova/internal/apiclient"
)

// DefaultDays is the OHLC period when a call names none.
const DefaultDays = "7"

// days CoinGecko's OHLC endpoint accepts. Candles are 30 minutes wide for
// 1–2 days, 4 hours for 3–30 days and 4 days beyond.
var ohlcDays = []string{"1", "7", "14", "30", "90", "180", "365", "max"}

// OHLC is a coin's candles over a period.
type OHLC struct {
	ID       string
	Currency string
	Days     string
	Candles  []Candle // oldest first

	// A summary of the candles.
	Open          float64 // the first candle's open
	Close         float64 // the last candle's close
	High          float64
	Low           float64
	Change        float64 // Close - Open
	ChangePercent float64 // Change as a percentage of Open
}

// Candle is one candle; Time is when its period ends.
type Candle struct {
	Time                   time.Time
	Open, High, Low, Close float64
}

// OHLC fetches the candles of coin id over days ("1", "7", "14", "30",
// "90", "180", "365" or "max"; "" means DefaultDays), priced in vsCurrency
// ("" means usd): GET /api/v3/coins/{id}/ohlc?vs_currency=&days=.
func (c *Client) OHLC(ctx context.Context, id, vsCurrency, days string) (*OHLC, error) {
	id, err := normalizeID(id)
	if err != nil {
		return nil, err
	}
	vs, err := normalizeCurrency(vsCurrency)
	if err != nil {
		return nil, err
	}
	days = strings.ToLower(strings.TrimSpace(days))
	if days == "" {
		days = DefaultDays
	}
	if !slices.Contains(ohlcDays, days) {
		return nil, apiclient.Invalid(providerName, "days %q is not offered for candles (use one of %s)", days, strings.Join(ohlcDays, ", "))
	}

	var rows [][]float64
	err = c.getJSON(ctx, "/api/v3/coins/"+url.PathEscape(id)+"/ohlc", url.Values{"vs_currency": {vs}, "days": {days}}, &rows)
	if err != nil {
		return nil, withNotFoundHint(err, "candles of "+id+": ", "CoinGecko ids look like bitcoin or ethereum; a ticker such as BTC is not an id")
	}
	if len(rows) == 0 {
		return nil, apiclient.NotFound(providerName, "no candles for %s in %s over %s days", id, vs, days)
	}

	o := &OHLC{ID: id, Currency: vs, Days: days, Candles: make([]Candle, 0, len(rows))}
	for i, r := range rows {
		if len(r) != 5 {
			return nil, &Error{Provider: providerName, Message: fmt.Sprintf("candle %d of %s has %d values, not [time, open, high, low, close]", i, id, len(r))}
		}
		o.Candles = append(o.Candles, Candle{
			Time: time.UnixMilli(int64(r[0])).UTC(),
			Open: r[1], High: r[2], Low: r[3], Close: r[4],
		})
	}
	slices.SortStableFunc(o.Candles, func(a, b Candle) int { return a.Time.Compare(b.Time) })

	first, last := o.Candles[0], o.Candles[len(o.Candles)-1]
	o.Open, o.Close, o.High, o.Low = first.Open, last.Close, first.High, first.Low
	for _, k := range o.Candles {
		o.High = max(o.High, k.High)
		o.Low = min(o.Low, k.Low)
	}
	o.Change = round(o.Close - o.Open)
	if o.Open != 0 {
		o.ChangePercent = round(o.Change / o.Open * 100)
	}
	return o, nil
}

// round keeps 8 decimals, hiding float noise (coins trade at fractions of
// a cent).
func round(x float64) float64 { return math.Round(x*1e8) / 1e8 }
