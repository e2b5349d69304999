package markets

import (
	"context"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/sova-ai/sova/internal/apiclient"
)

// MaxCurrencies is the most target currencies one Convert call takes.
const MaxCurrencies = 30

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

// Conversion is an amount converted at the latest reference rates.
type Conversion struct {
	Amount float64 // the amount converted, in From
	From   string  // ISO 4217 code, e.g. "USD"
	Date   string  // the rates' date, YYYY-MM-DD, as Frankfurter gave it
	Quotes []Quote // in the order asked for; alphabetical when none was named
}

// Quote is one target currency.
type Quote struct {
	Currency string  // ISO 4217 code
	Rate     float64 // units of Currency per one unit of From
	Amount   float64 // Conversion.Amount in Currency
}

// Convert converts amount of from into each of to at the latest reference
// rates: GET /latest?from=&to=&amount=. An empty to means every currency
// Frankfurter knows; amount <= 0 is refused.
func (c *Client) Convert(ctx context.Context, amount float64, from string, to []string) (*Conversion, error) {
	if math.IsNaN(amount) || math.IsInf(amount, 0) || amount <= 0 {
		return nil, apiclient.Invalid(frankfurterName, "the amount must be a positive number, not %v", amount)
	}
	base, err := normalizeCurrency(from)
	if err != nil {
		return nil, err
	}
	var targets []string
	for _, t := range to {
		cur, err := normalizeCurrency(t)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(targets, cur) {
			targets = append(targets, cur)
		}
	}
	if len(targets) > MaxCurrencies {
		return nil, apiclient.Invalid(frankfurterName, "%d target currencies given; at most %d at a time", len(targets), MaxCurrencies)
	}

	// Frankfurter refuses a currency quoted against itself; that rate is 1.
	others := slices.DeleteFunc(slices.Clone(targets), func(s string) bool { return s == base })
	conv := &Conversion{Amount: amount, From: base}
	rates := map[string]float64{}
	if len(others) > 0 || len(targets) == 0 {
		q := url.Values{"from": {base}, "amount": {strconv.FormatFloat(amount, 'f', -1, 64)}}
		if len(others) > 0 {
			q.Set("to", strings.Join(others, ","))
		}
		var resp latestResponse
		if err := c.frankfurter.GetJSON(ctx, c.frankfurterURL+"/latest?"+q.Encode(), nil, &resp); err != nil {
			return nil, err
		}
		if len(resp.Rates) == 0 {
			return nil, apiclient.NotFound(frankfurterName, "no rates for %s in the answer", base)
		}
		conv.Date = resp.Date
		if resp.Amount > 0 {
			conv.Amount = resp.Amount
		}
		rates = resp.Rates
	}

	if len(targets) == 0 {
		for cur := range rates {
			targets = append(targets, cur)
		}
		sort.Strings(targets)
	}
	var missing []string
	for _, cur := range targets {
		if cur == base {
			conv.Quotes = append(conv.Quotes, Quote{Currency: cur, Rate: 1, Amount: conv.Amount})
			continue
		}
		v, ok := rates[cur]
		if !ok {
			missing = append(missing, cur)
			continue
		}
		conv.Quotes = append(conv.Quotes, Quote{Currency: cur, Rate: round(v / conv.Amount), Amount: v})
	}
	if len(missing) > 0 {
		return nil, apiclient.NotFound(frankfurterName, "no rate for %s in the answer (Frankfurter quotes the currencies of central-bank reference rates only)", strings.Join(missing, ", "))
	}
	return conv, nil
}

func normalizeCurrency(s string) (string, error) {
	cur := strings.ToUpper(strings.TrimSpace(s))
	if !currencyRE.MatchString(cur) {
		return "", apiclient.Invalid(frankfurterName, "%q is not a currency code (use ISO 4217 codes such as USD, EUR, RUB)", s)
	}
	return cur, nil
}

// latestResponse is Frankfurter's /latest answer:
// {"amount":10.0,"base":"USD","date":"2024-06-12","rates":{"EUR":9.2764}}.
// The rates are already multiplied by amount.
type latestResponse struct {
	Amount float64            `json:"amount"`
	Base   string             `json:"base"`
	Date   string             `json:"date"`
	Rates  map[string]float64 `json:"rates"`
}
