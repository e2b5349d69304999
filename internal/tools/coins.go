package tools

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/agent"
	"github.com/sova-ai/sova/internal/provider/coins"
)

// The crypto group's tools (seed 000 §4.4).
const (
	CoinDataName           = coins.DataToolName
	CoinOHLCName           = coins.OHLCToolName
	CoinDataByContractName = coins.DataByContractToolName
)

// CoinDataArgs are coin_data's arguments.
type CoinDataArgs struct {
	CoinID     string `json:"coinId" jsonschema:"the CoinGecko coin id, such as bitcoin, ethereum or solana (not the ticker BTC)"`
	VsCurrency string `json:"vsCurrency,omitempty" jsonschema:"the currency of the prices, such as usd (default), eur or btc"`
}

// CoinOHLCArgs are coin_ohlc's arguments.
type CoinOHLCArgs struct {
	CoinID     string `json:"coinId" jsonschema:"the CoinGecko coin id, such as bitcoin"`
	Days       string `json:"days,omitempty" jsonschema:"the period: 1, 7 (default), 14, 30, 90, 180, 365 or max"`
	VsCurrency string `json:"vsCurrency,omitempty" jsonschema:"the currency of the prices (default usd)"`
}

// CoinContractArgs are coin_data_by_contract's arguments.
type CoinContractArgs struct {
	ContractAddress string `json:"contractAddress" jsonschema:"the token's contract address (0x… on EVM chains)"`
	Platform        string `json:"platform" jsonschema:"the chain: ethereum, binance-smart-chain, polygon-pos, arbitrum-one, base, solana, …"`
	VsCurrency      string `json:"vsCurrency,omitempty" jsonschema:"the currency of the prices (default usd)"`
}

// CoinResult is coin_data's and coin_data_by_contract's output.
type CoinResult struct {
	Number                int               `json:"number,omitempty"`
	ID                    string            `json:"id"`
	Symbol                string            `json:"symbol"`
	Name                  string            `json:"name"`
	URL                   string            `json:"url"`
	Currency              string            `json:"currency"`
	MarketCapRank         int               `json:"marketCapRank,omitempty"`
	AssetPlatformID       string            `json:"assetPlatformId,omitempty"`
	ContractAddress       string            `json:"contractAddress,omitempty"`
	Platforms             map[string]string `json:"platforms,omitempty"`
	Categories            []string          `json:"categories,omitempty"`
	GenesisDate           string            `json:"genesisDate,omitempty"`
	Homepage              string            `json:"homepage,omitempty"`
	Whitepaper            string            `json:"whitepaper,omitempty"`
	Description           string            `json:"description,omitempty"`
	Price                 float64           `json:"price"`
	MarketCap             float64           `json:"marketCap"`
	FullyDilutedValuation float64           `json:"fullyDilutedValuation,omitempty"`
	TotalVolume           float64           `json:"totalVolume"`
	High24h               float64           `json:"high24h"`
	Low24h                float64           `json:"low24h"`
	PriceChange24h        float64           `json:"priceChange24h"`
	PriceChangePercent24h float64           `json:"priceChangePercent24h"`
	PriceChangePercent7d  float64           `json:"priceChangePercent7d"`
	PriceChangePercent30d float64           `json:"priceChangePercent30d"`
	PriceChangePercent1y  float64           `json:"priceChangePercent1y"`
	ATH                   float64           `json:"ath"`
	ATHDate               string            `json:"athDate,omitempty"`
	ATHChangePercent      float64           `json:"athChangePercent"`
	CirculatingSupply     float64           `json:"circulatingSupply"`
	TotalSupply           *float64          `json:"totalSupply"`
	MaxSupply             *float64          `json:"maxSupply"`
	LastUpdated           string            `json:"lastUpdated,omitempty"`
}

// CoinOHLCResult is coin_ohlc's output: candles for a candlestick chart.
type CoinOHLCResult struct {
	Number        int          `json:"number,omitempty"`
	ID            string       `json:"id"`
	URL           string       `json:"url"`
	Currency      string       `json:"currency"`
	Days          string       `json:"days"`
	Open          float64      `json:"open"`
	Close         float64      `json:"close"`
	High          float64      `json:"high"`
	Low           float64      `json:"low"`
	Change        float64      `json:"change"`
	ChangePercent float64      `json:"changePercent"`
	Candles       []CoinCandle `json:"candles"`
}

// CoinCandle is one candle; time is when its period ends.
type CoinCandle struct {
	Time  string  `json:"time"`
	Open  float64 `json:"open"`
	High  float64 `json:"high"`
	Low   float64 `json:"low"`
	Close float64 `json:"close"`
}

// CoinOptions tune the crypto tools.
type CoinOptions struct {
	// Cite numbers each coin's CoinGecko page as a citable source; nil:
	// not numbered.
	Cite *Citations
}

func isoTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// coinResult is a coin's output, numbered when o cites.
func coinResult(c *coins.Coin, o CoinOptions) CoinResult {
	r := CoinResult{ID: c.ID, Symbol: c.Symbol, Name: c.Name, URL: c.URL, Currency: c.Currency, MarketCapRank: c.MarketCapRank,
		AssetPlatformID: c.AssetPlatformID, ContractAddress: c.ContractAddress, Platforms: c.Platforms, Categories: c.Categories,
		GenesisDate: c.GenesisDate, Homepage: c.Homepage, Whitepaper: c.Whitepaper, Description: c.Description,
		Price: c.Price, MarketCap: c.MarketCap, FullyDilutedValuation: c.FullyDilutedValuation, TotalVolume: c.TotalVolume,
		High24h: c.High24h, Low24h: c.Low24h, PriceChange24h: c.PriceChange24h, PriceChangePercent24h: c.PriceChangePercent24h,
		PriceChangePercent7d: c.PriceChangePercent7d, PriceChangePercent30d: c.PriceChangePercent30d, PriceChangePercent1y: c.PriceChangePercent1y,
		ATH: c.ATH, ATHDate: isoTime(c.ATHDate), ATHChangePercent: c.ATHChangePercent, CirculatingSupply: c.CirculatingSupply,
		TotalSupply: c.TotalSupply, MaxSupply: c.MaxSupply, LastUpdated: isoTime(c.LastUpdated)}
	if o.Cite != nil && c.URL != "" {
		r.Number = o.Cite.Number(sova.Source{URL: c.URL, Title: c.Name + " (" + strings.ToUpper(c.Symbol) + ") – CoinGecko", Kind: sova.SourceWeb,
			Snippet: fmt.Sprintf("%s price %g %s", c.Name, c.Price, strings.ToUpper(c.Currency))})
	}
	return r
}

func coinSummary(c *coins.Coin) string {
	return fmt.Sprintf("%s: %g %s (%+.2f%% in 24 h)", c.Name, c.Price, strings.ToUpper(c.Currency), c.PriceChangePercent24h)
}

// CoinData is the coin_data tool: a coin's profile and market data.
func CoinData(run *Run, o CoinOptions) agent.Tool {
	call := func(ctx context.Context, a CoinDataArgs) (agent.Output, error) {
		if run.p.Coins == nil {
			return agent.Output{}, errors.New("crypto data is not available")
		}
		c, err := run.p.Coins.Coin(ctx, strings.TrimSpace(a.CoinID), a.VsCurrency)
		if err != nil {
			return agent.Output{}, err
		}
		return jsonOutput(coinResult(c, o), coinSummary(c))
	}
	return agent.NewTool(CoinDataName,
		"Get a cryptocurrency's price, market cap, volume, price changes, supply and profile from CoinGecko, by its CoinGecko id.", call,
		agent.WithTitle(func(a CoinDataArgs) string { return "Getting data of " + clip(a.CoinID, 60) }))
}

// CoinOHLC is the coin_ohlc tool: a coin's candles over a period.
func CoinOHLC(run *Run, o CoinOptions) agent.Tool {
	call := func(ctx context.Context, a CoinOHLCArgs) (agent.Output, error) {
		if run.p.Coins == nil {
			return agent.Output{}, errors.New("crypto data is not available")
		}
		h, err := run.p.Coins.OHLC(ctx, strings.TrimSpace(a.CoinID), a.VsCurrency, a.Days)
		if err != nil {
			return agent.Output{}, err
		}
		out := CoinOHLCResult{ID: h.ID, URL: "https://www.coingecko.com/en/coins/" + h.ID, Currency: h.Currency, Days: h.Days,
			Open: h.Open, Close: h.Close, High: h.High, Low: h.Low, Change: h.Change, ChangePercent: h.ChangePercent, Candles: []CoinCandle{}}
		for _, c := range h.Candles {
			out.Candles = append(out.Candles, CoinCandle{isoTime(c.Time), c.Open, c.High, c.Low, c.Close})
		}
		if o.Cite != nil {
			out.Number = o.Cite.Number(sova.Source{URL: out.URL, Title: h.ID + " – CoinGecko", Kind: sova.SourceWeb})
		}
		return jsonOutput(out, fmt.Sprintf("%s of %s over %s days (%+.2f%%)", plural(len(out.Candles), "candle", "candles"), h.ID, h.Days, h.ChangePercent))
	}
	return agent.NewTool(CoinOHLCName,
		"Get a cryptocurrency's open-high-low-close candles over a period from CoinGecko, drawn as a candlestick chart for the person.", call,
		agent.WithTitle(func(a CoinOHLCArgs) string { return "Getting the price history of " + clip(a.CoinID, 60) }),
		agent.WithSchema(func(s *jsonschema.Schema) {
			s.Properties["days"].Enum = []any{"1", "7", "14", "30", "90", "180", "365", "max"}
		}))
}

// CoinDataByContract is the coin_data_by_contract tool: the coin of a
// token contract; its id serves coin_data and coin_ohlc.
func CoinDataByContract(run *Run, o CoinOptions) agent.Tool {
	call := func(ctx context.Context, a CoinContractArgs) (agent.Output, error) {
		if run.p.Coins == nil {
			return agent.Output{}, errors.New("crypto data is not available")
		}
		c, err := run.p.Coins.CoinByContract(ctx, strings.TrimSpace(a.Platform), strings.TrimSpace(a.ContractAddress), a.VsCurrency)
		if err != nil {
			return agent.Output{}, err
		}
		return jsonOutput(coinResult(c, o), coinSummary(c))
	}
	return agent.NewTool(CoinDataByContractName,
		"Find the token of a contract address on a chain and get its CoinGecko id, price and market data.", call,
		agent.WithTitle(func(a CoinContractArgs) string { return "Looking up token " + clip(a.ContractAddress, 50) }))
}
