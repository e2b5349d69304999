package markets

import (
	"testing"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("SOVA_FRANKFURTER_URL", "http://fx.internal:8080/")
	cfg, err := env.ParseAs[Config]()
	if err != nil {
		t.Fatal(err)
	}
	want := Config{YahooFinanceURL: DefaultYahooFinanceURL, FrankfurterURL: "http://fx.internal:8080/", Timeout: 15 * time.Second}
	if cfg != want {
		t.Errorf("Config = %+v, want %+v", cfg, want)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c.frankfurterURL != "http://fx.internal:8080" || c.yahooURL != DefaultYahooFinanceURL {
		t.Errorf("base URLs = %s, %s", c.frankfurterURL, c.yahooURL)
	}
	if got := c.yahoo.Options().Timeout; got != 15*time.Second {
		t.Errorf("timeout = %v", got)
	}
	if _, err := New(Config{YahooFinanceURL: "query1.finance.yahoo.com"}); err == nil {
		t.Error("a URL without a scheme was taken")
	}
	apitest.Documented(t, cfg, "../../../docs/configuration.md")
}
