package doctor

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/sova-ai/sova/internal/app"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/search"
)

// CheckSearch is the name prefix of the search checks: "web search: searxng".
const CheckSearch = "web search"

// probeQuery is the one small query sent to each provider.
var probeQuery = search.Query{Text: "open source", MaxResults: 3}

// searchFixes says what to check when a provider does not answer.
var searchFixes = map[string]string{
	"searxng":    "check SOVA_SEARXNG_URL, that SearXNG runs there and that its settings.yml enables the json format (search: formats: [html, json])",
	"tavily":     "check TAVILY_API_KEY (and SOVA_TAVILY_URL)",
	"exa":        "check EXA_API_KEY (and SOVA_EXA_URL)",
	"brave":      "check BRAVE_API_KEY (and SOVA_BRAVE_URL)",
	"keyless":    "check this machine's access to DuckDuckGo and Wikipedia, or set SOVA_SEARXNG_URL to your SearXNG",
	"duckduckgo": "check this machine's access to DuckDuckGo (SOVA_DUCKDUCKGO_URL), or set SOVA_SEARXNG_URL to your SearXNG",
	"wikipedia":  "check this machine's access to Wikipedia (SOVA_WIKIPEDIA_URL), or set SOVA_SEARXNG_URL to your SearXNG",
}

// Search builds the provider chain as the server does and sends one small
// query to each provider in it, at the same time. A provider that fails is
// fatal only when no other provider of the chain answers: the chain falls
// back to the next one.
func Search(ctx context.Context, cfg *config.Config, opts Options) []Check {
	chain, err := app.Providers(cfg)
	if err != nil {
		return []Check{{Name: CheckSearch, Status: Fail, Required: true, Detail: err.Error(),
			Fix: "set SOVA_SEARCH_PROVIDER and the provider's settings (docs/configuration.md, Web search)"}}
	}
	if len(chain.Providers) == 0 {
		return []Check{{Name: CheckSearch, Status: Fail, Required: true, Detail: "no search provider is configured",
			Fix: "set SOVA_SEARCH_PROVIDER (auto searches without an account)"}}
	}
	ctx, cancel := context.WithTimeout(ctx, opts.timeout())
	defer cancel()
	checks := make([]Check, len(chain.Providers))
	var wg sync.WaitGroup
	for i, p := range chain.Providers {
		wg.Go(func() { checks[i] = probe(ctx, p, opts.timeout()) })
	}
	wg.Wait()
	answered := false
	for _, c := range checks {
		answered = answered || c.Status == OK
	}
	for i := range checks {
		// While one provider answers, the chain falls back to it.
		checks[i].Required = checks[i].Status == OK || !answered
	}
	return checks
}

func probe(ctx context.Context, p search.Provider, timeout time.Duration) Check {
	c := Check{Name: CheckSearch + ": " + p.Name()}
	res, err := p.Search(ctx, probeQuery)
	if err != nil {
		// A provider of several (keyless) joins their errors with newlines.
		// The operator's report names the addresses the error's text leaves out.
		c.Status, c.Detail = Fail, strings.ReplaceAll(errtext.Detail(err), "\n", "; ")
		if ctx.Err() != nil {
			c.Detail = fmt.Sprintf("no answer within %s (%v)", timeout, err)
		}
		c.Fix = searchFixes[p.Name()]
		return c
	}
	c.Status = OK
	c.Detail = fmt.Sprintf("answered %q with %d results", probeQuery.Text, len(res))
	if len(res) == 1 {
		c.Detail = fmt.Sprintf("answered %q with 1 result", probeQuery.Text)
	}
	return c
}
