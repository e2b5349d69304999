package coins

import (
	"context"
	"errors"
	"html"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova/internal/apiclient"
)

// MaxDescriptionRunes caps Coin.Description.
const MaxDescriptionRunes = 600

var (
	idRE       = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,99}$`)
	currencyRE = regexp.MustCompile(`^[a-z]{2,10}$`)
	platformRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	evmRE      = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)
	base58RE   = regexp.MustCompile(`^[1-9A-HJ-NP-Za-km-z]{32,44}$`)
)

// Coin is a coin's profile and market data in one quote currency.
type Coin struct {
	ID              string
	Symbol          string // e.g. "btc"
	Name            string
	URL             string            // the coin's page on coingecko.com
	Currency        string            // the quote currency of the market figures, e.g. "usd"
	MarketCapRank   int               // 0 when unranked
	AssetPlatformID string            // the chain a token lives on; "" for a native coin
	ContractAddress string            // set by CoinByContract
	Platforms       map[string]string // chain → contract address; nil for a native coin
	Categories      []string
	GenesisDate     string // YYYY-MM-DD; often empty
	Homepage        string
	Whitepaper      string
	Description     string // English, plain text, at most MaxDescriptionRunes runes

	Price                 float64
	MarketCap             float64
	FullyDilutedValuation float64
	TotalVolume           float64 // 24 h trading volume
	High24h               float64
	Low24h                float64
	PriceChange24h        float64 // in Currency
	PriceChangePercent24h float64
	PriceChangePercent7d  float64
	PriceChangePercent30d float64
	PriceChangePercent1y  float64
	ATH                   float64 // all-time high
	ATHDate               time.Time
	ATHChangePercent      float64
	CirculatingSupply     float64
	TotalSupply           *float64 // nil when CoinGecko gives none
	MaxSupply             *float64 // nil when there is no cap
	LastUpdated           time.Time
}

// Coin fetches a coin by its CoinGecko id (such as "bitcoin", not the
// ticker "BTC"), with market figures in vsCurrency ("" means usd):
// GET /api/v3/coins/{id}.
func (c *Client) Coin(ctx context.Context, id, vsCurrency string) (*Coin, error) {
	id, err := normalizeID(id)
	if err != nil {
		return nil, err
	}
	vs, err := normalizeCurrency(vsCurrency)
	if err != nil {
		return nil, err
	}
	var resp coinResponse
	err = c.getJSON(ctx, "/api/v3/coins/"+url.PathEscape(id), coinQuery(), &resp)
	if err != nil {
		return nil, withNotFoundHint(err, "coin "+id+": ", "CoinGecko ids look like bitcoin or ethereum; a ticker such as BTC is not an id")
	}
	if resp.ID == "" {
		return nil, apiclient.NotFound(providerName, "coin %s: the answer names no coin", id)
	}
	if err := resp.checkCurrency(vs); err != nil {
		return nil, err
	}
	return resp.toCoin(vs), nil
}

// CoinByContract fetches the coin of a token contract on a platform
// (an asset platform id such as "ethereum", "binance-smart-chain",
// "polygon-pos" or "solana"): GET /api/v3/coins/{platform}/contract/{address}.
// The address is 0x and 40 hex digits on EVM chains, base58 on Solana or
// Tron. The result's ID is the coin id for Coin and OHLC.
func (c *Client) CoinByContract(ctx context.Context, platform, address, vsCurrency string) (*Coin, error) {
	platform = strings.ToLower(strings.TrimSpace(platform))
	if !platformRE.MatchString(platform) {
		return nil, apiclient.Invalid(providerName, "%q is not an asset platform id (such as ethereum, binance-smart-chain, polygon-pos, solana)", platform)
	}
	addr, err := normalizeAddress(address)
	if err != nil {
		return nil, err
	}
	vs, err := normalizeCurrency(vsCurrency)
	if err != nil {
		return nil, err
	}
	var resp coinResponse
	err = c.getJSON(ctx, "/api/v3/coins/"+url.PathEscape(platform)+"/contract/"+url.PathEscape(addr), coinQuery(), &resp)
	if err != nil {
		return nil, withNotFoundHint(err, "contract "+addr+" on "+platform+": ", "check the address and that the platform id is CoinGecko's")
	}
	if resp.ID == "" {
		return nil, apiclient.NotFound(providerName, "contract %s on %s: the answer names no coin", addr, platform)
	}
	if err := resp.checkCurrency(vs); err != nil {
		return nil, err
	}
	coin := resp.toCoin(vs)
	coin.ContractAddress = resp.ContractAddress
	if coin.ContractAddress == "" {
		coin.ContractAddress = addr
	}
	return coin, nil
}

// coinQuery leaves out what the tools do not use (tickers alone can be
// hundreds of kilobytes).
func coinQuery() url.Values {
	return url.Values{
		"localization":   {"false"},
		"tickers":        {"false"},
		"market_data":    {"true"},
		"community_data": {"false"},
		"developer_data": {"false"},
		"sparkline":      {"false"},
	}
}

// withNotFoundHint prefixes what was asked to an error and, for a 404,
// appends advice.
func withNotFoundHint(err error, prefix, hint string) error {
	var e *Error
	if errors.As(err, &e) && e.Status != 0 {
		e.Message = prefix + e.Message
		if errors.Is(err, ErrNotFound) {
			e.Message += " (" + hint + ")"
		}
	}
	return err
}

func normalizeID(id string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(id))
	if s == "" {
		return "", apiclient.Invalid(providerName, "the coin id is empty")
	}
	if !idRE.MatchString(s) {
		return "", apiclient.Invalid(providerName, "%q is not a CoinGecko coin id (ids look like bitcoin, ethereum, usd-coin)", id)
	}
	return s, nil
}

func normalizeCurrency(vs string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(vs))
	if s == "" {
		return DefaultCurrency, nil
	}
	if !currencyRE.MatchString(s) {
		return "", apiclient.Invalid(providerName, "%q is not a quote currency (such as usd, eur, rub, btc)", vs)
	}
	return s, nil
}

func normalizeAddress(a string) (string, error) {
	s := strings.TrimSpace(a)
	switch {
	case evmRE.MatchString(s):
		return strings.ToLower(s), nil
	case strings.HasPrefix(strings.ToLower(s), "0x"):
		return "", apiclient.Invalid(providerName, "%q is not a contract address: on EVM chains it is 0x followed by 40 hex digits", a)
	case base58RE.MatchString(s):
		return s, nil
	}
	return "", apiclient.Invalid(providerName, "%q is not a contract address (0x and 40 hex digits on EVM chains, base58 on Solana or Tron)", a)
}

// coinResponse is the part of GET /coins/{id} (and of the contract
// endpoint, which answers the same shape plus contract_address) that is
// used.
type coinResponse struct {
	ID              string            `json:"id"`
	Symbol          string            `json:"symbol"`
	Name            string            `json:"name"`
	WebSlug         string            `json:"web_slug"`
	AssetPlatformID *string           `json:"asset_platform_id"`
	Platforms       map[string]string `json:"platforms"`
	ContractAddress string            `json:"contract_address"`
	Categories      []*string         `json:"categories"`
	Description     map[string]string `json:"description"`
	Links           struct {
		Homepage   []string `json:"homepage"`
		Whitepaper string   `json:"whitepaper"`
	} `json:"links"`
	GenesisDate   *string `json:"genesis_date"`
	MarketCapRank *int    `json:"market_cap_rank"`
	MarketData    *struct {
		CurrentPrice                       currencyMap       `json:"current_price"`
		ATH                                currencyMap       `json:"ath"`
		ATHChangePercentage                currencyMap       `json:"ath_change_percentage"`
		ATHDate                            map[string]string `json:"ath_date"`
		MarketCap                          currencyMap       `json:"market_cap"`
		MarketCapRank                      *int              `json:"market_cap_rank"`
		FullyDilutedValuation              currencyMap       `json:"fully_diluted_valuation"`
		TotalVolume                        currencyMap       `json:"total_volume"`
		High24h                            currencyMap       `json:"high_24h"`
		Low24h                             currencyMap       `json:"low_24h"`
		PriceChange24hInCurrency           currencyMap       `json:"price_change_24h_in_currency"`
		PriceChangePercentage24hInCurrency currencyMap       `json:"price_change_percentage_24h_in_currency"`
		PriceChangePercentage7dInCurrency  currencyMap       `json:"price_change_percentage_7d_in_currency"`
		PriceChangePercentage30dInCurrency currencyMap       `json:"price_change_percentage_30d_in_currency"`
		PriceChangePercentage1yInCurrency  currencyMap       `json:"price_change_percentage_1y_in_currency"`
		CirculatingSupply                  *float64          `json:"circulating_supply"`
		TotalSupply                        *float64          `json:"total_supply"`
		MaxSupply                          *float64          `json:"max_supply"`
		LastUpdated                        string            `json:"last_updated"`
	} `json:"market_data"`
	LastUpdated string `json:"last_updated"`
}

// currencyMap is a {"usd": 1.0, ...} object whose values may be null.
type currencyMap map[string]*float64

func (m currencyMap) get(vs string) float64 {
	if v := m[vs]; v != nil {
		return *v
	}
	return 0
}

func (r *coinResponse) toCoin(vs string) *Coin {
	c := &Coin{
		ID:        r.ID,
		Symbol:    r.Symbol,
		Name:      r.Name,
		Currency:  vs,
		Platforms: map[string]string{},
	}
	slug := r.WebSlug
	if slug == "" {
		slug = r.ID
	}
	c.URL = "https://www.coingecko.com/en/coins/" + url.PathEscape(slug)
	if r.AssetPlatformID != nil {
		c.AssetPlatformID = *r.AssetPlatformID
	}
	for chain, addr := range r.Platforms {
		// A native coin has {"": ""}.
		if chain != "" && addr != "" {
			c.Platforms[chain] = addr
		}
	}
	if len(c.Platforms) == 0 {
		c.Platforms = nil
	}
	for _, cat := range r.Categories {
		if cat != nil && *cat != "" {
			c.Categories = append(c.Categories, *cat)
		}
	}
	if r.GenesisDate != nil {
		c.GenesisDate = *r.GenesisDate
	}
	for _, h := range r.Links.Homepage {
		if h = strings.TrimSpace(h); h != "" {
			c.Homepage = h
			break
		}
	}
	c.Whitepaper = strings.TrimSpace(r.Links.Whitepaper)
	c.Description = plainDescription(r.Description["en"], MaxDescriptionRunes)
	if r.MarketCapRank != nil {
		c.MarketCapRank = *r.MarketCapRank
	}
	c.LastUpdated = parseTime(r.LastUpdated)

	if m := r.MarketData; m != nil {
		c.Price = m.CurrentPrice.get(vs)
		c.MarketCap = m.MarketCap.get(vs)
		c.FullyDilutedValuation = m.FullyDilutedValuation.get(vs)
		c.TotalVolume = m.TotalVolume.get(vs)
		c.High24h = m.High24h.get(vs)
		c.Low24h = m.Low24h.get(vs)
		c.PriceChange24h = m.PriceChange24hInCurrency.get(vs)
		c.PriceChangePercent24h = m.PriceChangePercentage24hInCurrency.get(vs)
		c.PriceChangePercent7d = m.PriceChangePercentage7dInCurrency.get(vs)
		c.PriceChangePercent30d = m.PriceChangePercentage30dInCurrency.get(vs)
		c.PriceChangePercent1y = m.PriceChangePercentage1yInCurrency.get(vs)
		c.ATH = m.ATH.get(vs)
		c.ATHChangePercent = m.ATHChangePercentage.get(vs)
		c.ATHDate = parseTime(m.ATHDate[vs])
		if m.CirculatingSupply != nil {
			c.CirculatingSupply = *m.CirculatingSupply
		}
		c.TotalSupply, c.MaxSupply = m.TotalSupply, m.MaxSupply
		if c.MarketCapRank == 0 && m.MarketCapRank != nil {
			c.MarketCapRank = *m.MarketCapRank
		}
		if t := parseTime(m.LastUpdated); !t.IsZero() {
			c.LastUpdated = t
		}
	}
	return c
}

// currencies returns the quote currencies the answer has prices in, sorted.
func (r *coinResponse) currencies() []string {
	if r.MarketData == nil {
		return nil
	}
	var out []string
	for k := range r.MarketData.CurrentPrice {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkCurrency fails when the answer has market data but no price in vs.
func (r *coinResponse) checkCurrency(vs string) error {
	have := r.currencies()
	if len(have) == 0 || slices.Contains(have, vs) {
		return nil
	}
	return apiclient.Invalid(providerName, "%s has no prices in %q; CoinGecko quotes it in %s", r.ID, vs, strings.Join(have, ", "))
}

func parseTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

var (
	tagRE   = regexp.MustCompile(`<[^>]*>`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// plainDescription turns CoinGecko's HTML description into one paragraph
// of plain text of at most max runes, cut after a sentence where one ends
// in the second half, else after a word, with "…".
func plainDescription(s string, max int) string {
	s = tagRE.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	runes := []rune(s)
	cut := string(runes[:max])
	if i := strings.LastIndexAny(cut, ".!?"); i >= len(cut)/2 {
		return cut[:i+1]
	}
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:—-") + "…"
}
