package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	searchmode "github.com/sova-ai/sova/internal/mode/search"
	"github.com/sova-ai/sova/internal/rank"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/webcache"
)

// ProviderNames are the values SOVA_SEARCH_PROVIDER and
// SOVA_SEARCH_FALLBACK accept.
var ProviderNames = []string{"auto", "searxng", "tavily", "exa", "brave", "keyless", "duckduckgo", "wikipedia"}

// Providers builds the search provider chain: SOVA_SEARCH_PROVIDER first,
// then each of SOVA_SEARCH_FALLBACK. "auto" (the default) stands for every
// provider that is configured — searxng when SOVA_SEARXNG_URL is set,
// tavily, exa and brave when their keys are — followed by "keyless"
// (DuckDuckGo with Wikipedia), which needs nothing, so a fresh install
// gets web results at once. Each provider is held to its limits
// (search.DefaultLimits, overridden by SOVA_SEARCH_LIMITS), shared by all
// runs of the server.
func Providers(cfg *config.Config) (*search.Chain, error) { return providers(cfg, nil, nil) }

// providers builds the chain with each provider's limits held across the
// nodes sharing c (nil: in this process).
func providers(cfg *config.Config, c search.Coordinator, logger *slog.Logger) (*search.Chain, error) {
	limits, err := searchLimits(cfg.SearchLimits)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, name := range append([]string{cfg.SearchProvider}, cfg.SearchFallback...) {
		if name == "auto" {
			names = append(names, autoProviders(cfg)...)
			continue
		}
		names = append(names, name)
	}
	// The configured services are reachable wherever they are; where
	// they redirect to passes the egress guard.
	client := egress.ServiceClient(cfg.SearchTimeout+5*time.Second, cfg.SearXNGURL, cfg.TavilyURL, cfg.ExaURL, cfg.BraveURL, cfg.DuckDuckGoURL, cfg.WikipediaURL)
	opts := []search.Option{search.WithTimeout(cfg.SearchTimeout)}
	throttled := func(p search.Provider) search.Provider {
		return search.ThrottleShared(p, limits[p.Name()], c, logger)
	}
	var ps []search.Provider
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		switch name {
		case "searxng":
			if cfg.SearXNGURL == "" {
				return nil, errors.New("the searxng search provider needs SOVA_SEARXNG_URL (for example http://127.0.0.1:8888); or leave SOVA_SEARCH_PROVIDER at auto to search without an account")
			}
			sx := search.NewSearXNG(cfg.SearXNGURL, client, opts...)
			if _, set := cfg.SearchLimits["searxng"]; !set && privateInstance(cfg.SearXNGURL) {
				// The politeness limits protect public instances; one the
				// admin runs on this machine or a private network would
				// only cap the server (3 queries a second: under one
				// search run a second). SOVA_SEARCH_LIMITS still applies.
				ps = append(ps, sx)
				continue
			}
			ps = append(ps, throttled(sx))
		case "tavily":
			if cfg.TavilyAPIKey == "" {
				return nil, errors.New("the tavily search provider needs TAVILY_API_KEY")
			}
			ps = append(ps, throttled(search.NewTavily(cfg.TavilyAPIKey, cfg.TavilyURL, client, opts...)))
		case "exa":
			if cfg.ExaAPIKey == "" {
				return nil, errors.New("the exa search provider needs EXA_API_KEY")
			}
			ps = append(ps, throttled(search.NewExa(cfg.ExaAPIKey, cfg.ExaURL, client, opts...)))
		case "brave":
			if cfg.BraveAPIKey == "" {
				return nil, errors.New("the brave search provider needs BRAVE_API_KEY")
			}
			ps = append(ps, throttled(search.NewBrave(cfg.BraveAPIKey, cfg.BraveURL, client, opts...)))
		case "keyless":
			ps = append(ps, search.NewKeyless(
				throttled(search.NewDuckDuckGo(cfg.DuckDuckGoURL, client, opts...)),
				throttled(search.NewWikipedia(cfg.WikipediaURL, client, opts...))))
		case "duckduckgo":
			ps = append(ps, throttled(search.NewDuckDuckGo(cfg.DuckDuckGoURL, client, opts...)))
		case "wikipedia":
			ps = append(ps, throttled(search.NewWikipedia(cfg.WikipediaURL, client, opts...)))
		default:
			return nil, fmt.Errorf("unknown search provider %q in SOVA_SEARCH_PROVIDER/SOVA_SEARCH_FALLBACK; available: %s",
				name, strings.Join(ProviderNames, ", "))
		}
	}
	// Concurrent runs (and one run's research agents) sending the same
	// query at the same moment share one request.
	for i, p := range ps {
		ps[i] = search.Shared(p)
	}
	return search.NewChain(ps...), nil
}

// privateInstance reports whether a search instance's URL is on this
// machine or a private network, waiting at most a second for its name to
// resolve.
func privateInstance(rawURL string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return search.PrivateInstance(ctx, rawURL)
}

// autoProviders lists the configured providers, then keyless.
func autoProviders(cfg *config.Config) []string {
	var out []string
	if cfg.SearXNGURL != "" {
		out = append(out, "searxng")
	}
	if cfg.TavilyAPIKey != "" {
		out = append(out, "tavily")
	}
	if cfg.ExaAPIKey != "" {
		out = append(out, "exa")
	}
	if cfg.BraveAPIKey != "" {
		out = append(out, "brave")
	}
	return append(out, "keyless")
}

// searchLimits merges SOVA_SEARCH_LIMITS over the default limits.
func searchLimits(overrides map[string]string) (map[string]search.Limits, error) {
	out := make(map[string]search.Limits, len(search.DefaultLimits))
	for k, v := range search.DefaultLimits {
		out[k] = v
	}
	keys := make([]string, 0, len(overrides))
	for k := range overrides {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var errs []error
	for _, name := range keys {
		if !slices.Contains(ProviderNames, name) || name == "auto" || name == "keyless" {
			errs = append(errs, fmt.Errorf("SOVA_SEARCH_LIMITS: unknown provider %q (limits apply to searxng, tavily, exa, brave, duckduckgo, wikipedia)", name))
			continue
		}
		l, err := search.ParseLimits(overrides[name])
		if err != nil {
			errs = append(errs, fmt.Errorf("SOVA_SEARCH_LIMITS: %s: %w", name, err))
			continue
		}
		out[name] = l
	}
	return out, errors.Join(errs...)
}

// retrieval is what the search modes read and rank with.
type retrieval struct {
	reader   fetch.Reader        // cache → fetcher → external reader fallback
	reranker searchmode.Reranker // nil: BM25
	cache    *webcache.Cache
	embed    *llm.Client // SOVA_EMBED_MODEL; nil when unset
}

// newRetrieval builds the page reader chain, the web cache over the store
// and, with SOVA_EMBED_MODEL set, the hybrid reranker.
func newRetrieval(ctx context.Context, cfg *config.Config, chain *search.Chain, fetcher *fetch.Fetcher,
	st sova.CacheStore, logger *slog.Logger) (*retrieval, error) {
	r := &retrieval{}
	var reader fetch.Reader = fetcher
	if cfg.ReaderFallback != "" {
		ext, err := fetch.NewExternalReader(fetch.ExternalConfig{
			Service: cfg.ReaderFallback, BaseURL: cfg.ReaderURL, APIKey: cfg.ReaderAPIKey,
			Timeout: cfg.ReaderTimeout, MaxBytes: cfg.FetchMaxBytes, MaxChars: cfg.ContentMaxChars,
			CheckURL: fetcher.CheckURL, Logger: logger,
		})
		if err != nil {
			return nil, fmt.Errorf("SOVA_READER_FALLBACK: %w", err)
		}
		reader = &fetch.Fallback{Primary: fetcher, Next: ext, MinChars: cfg.ReaderMinChars}
	}
	r.cache = webcache.New(st, webcache.Options{SearchTTL: cfg.SearchCacheTTL, PageTTL: cfg.PageCacheTTL, Logger: logger})
	if n, err := r.cache.Purge(ctx); err != nil {
		logger.Warn("purging the web cache failed", "err", err)
	} else if n > 0 {
		logger.Debug("web cache purged", "expired", n)
	}
	chain.Cache = r.cache
	// Concurrent runs reading the same page at the same moment share one
	// fetch and extraction (the cache, when on, then keeps it).
	r.reader = fetch.NewShared(r.cache.Reader(reader))

	if cfg.EmbedModel != "" {
		embed, err := EmbeddingClient(cfg, logger) // spaces.go
		if err != nil {
			return nil, err
		}
		r.embed = embed
		r.reranker = rank.NewHybrid(embed, rank.HybridConfig{
			Threshold: cfg.EmbedThreshold, Candidates: cfg.EmbedTopK, Weight: cfg.EmbedWeight,
		})
	}
	return r, nil
}
