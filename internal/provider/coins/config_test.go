package coins

import (
	"testing"
	"time"

	"github.com/caarlos0/env/v11"

	"github.com/sova-ai/sova/internal/apiclient/apitest"
)

func TestConfigFromEnv(t *testing.T) {
	t.Setenv("COINGECKO_API_KEY", testKey)
	t.Setenv("SOVA_COINGECKO_PLAN", "pro")
	cfg, err := env.ParseAs[Config]()
	if err != nil {
		t.Fatal(err)
	}
	if want := (Config{APIKey: testKey, Plan: "pro", Timeout: 15 * time.Second}); cfg != want {
		t.Errorf("Config = %+v, want %+v", cfg, want)
	}
	c := newTestClient(t, cfg)
	if c.Plan() != PlanPro || c.base != DefaultProURL || c.header.Get("x-cg-pro-api-key") != testKey {
		t.Errorf("client = %s %s %v", c.Plan(), c.base, c.header)
	}
	apitest.Documented(t, cfg, "../../../docs/configuration.md")
}
