package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/markets"
)

// CurrencyConverterName is the stocks group's exchange-rate tool (seed
// 000 §1.2).
const CurrencyConverterName = markets.CurrencyToolName

// CurrencyArgs are currency_converter's arguments.
type CurrencyArgs struct {
	From   string           `json:"from" jsonschema:"the ISO 4217 code of the currency to convert from (USD, EUR, JPY, …)"`
	To     agent.StringList `json:"to" jsonschema:"the code, or codes, of the currencies to convert into"`
	Amount float64          `json:"amount,omitempty" jsonschema:"the amount to convert (default 1)"`
}

// CurrencyResult is currency_converter's output.
type CurrencyResult struct {
	Amount float64         `json:"amount"`
	From   string          `json:"from"`
	Date   string          `json:"date"`
	Quotes []CurrencyQuote `json:"quotes"`
	Source string          `json:"source"`
}

// CurrencyQuote is one target currency.
type CurrencyQuote struct {
	Currency string  `json:"currency"`
	Rate     float64 `json:"rate"`
	Amount   float64 `json:"amount"`
}

// CurrencyConverter is the currency_converter tool: an amount at the
// latest reference rates (Frankfurter, the European Central Bank's
// rates).
func CurrencyConverter(run *Run) agent.Tool {
	call := func(ctx context.Context, a CurrencyArgs) (agent.Output, error) {
		if run.p.Markets == nil {
			return agent.Output{}, errors.New("currency conversion is not available")
		}
		if strings.TrimSpace(a.From) == "" || len(a.To) == 0 {
			return agent.Output{}, errors.New("give the currency to convert from and the currencies to convert into")
		}
		if a.Amount == 0 {
			a.Amount = 1
		}
		var to []string
		for _, t := range a.To {
			for _, c := range strings.Split(t, ",") {
				if c = strings.ToUpper(strings.TrimSpace(c)); c != "" {
					to = append(to, c)
				}
			}
		}
		c, err := run.p.Markets.Convert(ctx, a.Amount, strings.ToUpper(strings.TrimSpace(a.From)), to)
		if err != nil {
			return agent.Output{}, err
		}
		out := CurrencyResult{Amount: c.Amount, From: c.From, Date: c.Date, Quotes: []CurrencyQuote{},
			Source: "Frankfurter (European Central Bank reference rates)"}
		var parts []string
		for _, q := range c.Quotes {
			out.Quotes = append(out.Quotes, CurrencyQuote{q.Currency, q.Rate, q.Amount})
			parts = append(parts, fmt.Sprintf("%.2f %s", q.Amount, q.Currency))
		}
		return jsonOutput(out, fmt.Sprintf("%g %s = %s (%s)", c.Amount, c.From, strings.Join(parts, ", "), c.Date))
	}
	return agent.NewTool(CurrencyConverterName,
		"Convert an amount between currencies at the latest reference exchange rates (published on working days).", call,
		agent.WithTitle(func(a CurrencyArgs) string {
			return "Converting " + strings.ToUpper(a.From) + " to " + strings.ToUpper(strings.Join(a.To, ", "))
		}))
}
