// Package app assembles Sova from its configuration: the model client, the
// search providers, the fetcher, the store, the modes and the run service.
// `sova serve` and `sova ask` both start from here.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/run"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/store"
)

// App is an assembled Sova.
type App struct {
	Config  *config.Config
	Store   store.Store
	Service *run.Service
	Model   *llm.Client
	Logger  *slog.Logger
}

// New assembles Sova. Close releases what it opened.
func New(ctx context.Context, cfg *config.Config, logger *slog.Logger) (*App, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	model, err := llm.New(llm.Config{
		BaseURL:              cfg.LLMBaseURL,
		APIKey:               cfg.LLMAPIKey,
		Model:                cfg.Model,
		FastModel:            cfg.FastModel,
		FallbackModel:        cfg.FallbackModel,
		Timeout:              cfg.LLMTimeout,
		MaxRetries:           cfg.LLMMaxRetries,
		MaxStructuredRetries: cfg.StructuredRetries,
		Logger:               logger,
	})
	if err != nil {
		return nil, fmt.Errorf("model client: %w", err)
	}
	fast := model.Fast()

	chain, err := Providers(cfg)
	if err != nil {
		// Chat works without search; the search modes report the problem
		// when they are used, so a missing setting doesn't stop the server.
		logger.Warn("web search is not configured", "err", err)
		chain = search.NewChain(unavailable{err})
	}
	redirects := cfg.FetchMaxRedirects
	if redirects == 0 {
		redirects = -1 // SOVA_FETCH_MAX_REDIRECTS=0 means follow none
	}
	fcfg := fetch.Config{
		AllowHosts:   cfg.FetchAllowHosts,
		MaxBytes:     cfg.FetchMaxBytes,
		Timeout:      cfg.FetchTimeout,
		MaxRedirects: redirects,
		MaxChars:     cfg.ContentMaxChars,
	}
	if err := fcfg.Validate(); err != nil {
		return nil, fmt.Errorf("SOVA_FETCH_ALLOW_HOSTS: %w", err)
	}
	fetcher := fetch.New(fcfg)

	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("opening the store: %w", err)
	}

	block := search.BlockList{Domains: cfg.BlockedDomains, Keywords: cfg.BlockedKeywords}
	searchCfg := func(id, desc string, iterations int, words string) mode.SearchConfig {
		return mode.SearchConfig{
			ID: id, Description: desc,
			Queries: cfg.DeepSearchQueries, Iterations: iterations, MaxResults: cfg.DeepSearchMaxResults,
			RerankTopK: cfg.RerankTopK, ScrapeTopN: cfg.ScrapeTopN, Concurrency: cfg.SearchConcurrency,
			AnswerWords: words, BlockList: block, HistoryLimit: cfg.ChatHistoryLimit,
			Temperature: cfg.ChatTemperature, MaxTokens: cfg.ChatMaxTokens,
		}
	}
	modes, err := mode.NewRegistry(
		mode.NewChat(mode.ChatConfig{HistoryLimit: cfg.ChatHistoryLimit, MaxTokens: cfg.ChatMaxTokens, Temperature: cfg.ChatTemperature}, model),
		mode.NewSearch(searchCfg("search", "Fast web search: query rewrite, parallel multi-query search, reads the best pages, cited answer of 400–600 words.", cfg.SpeedMaxIterations, "400-600"), model, fast, chain, fetcher),
		mode.NewSearch(searchCfg("deep_search", "Deeper web search: the search pipeline with more iterations and sources, cited answer of 800–1200 words.", cfg.BalancedIterations, "800-1200"), model, fast, chain, fetcher),
	)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	var titler run.Titler
	if !cfg.TitleGenerationOff {
		titler = run.ModelTitler{Model: fast}
	}
	svc := run.NewService(run.Options{
		Store: st, Modes: modes, Titler: titler, Logger: logger,
		Timeout: cfg.RunTimeout, MaxQuestionChars: cfg.MaxQuestionChars,
	})
	return &App{Config: cfg, Store: st, Service: svc, Model: model, Logger: logger}, nil
}

// Providers builds the search provider chain: SOVA_SEARCH_PROVIDER first,
// then each of SOVA_SEARCH_FALLBACK.
func Providers(cfg *config.Config) (*search.Chain, error) {
	names := append([]string{cfg.SearchProvider}, cfg.SearchFallback...)
	client := &http.Client{Timeout: cfg.SearchTimeout + 5*time.Second}
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
				return nil, errors.New("the searxng search provider needs SOVA_SEARXNG_URL (for example http://127.0.0.1:8888); or choose another with SOVA_SEARCH_PROVIDER=tavily and TAVILY_API_KEY")
			}
			ps = append(ps, search.NewSearXNG(cfg.SearXNGURL, client, search.WithTimeout(cfg.SearchTimeout)))
		case "tavily":
			if cfg.TavilyAPIKey == "" {
				return nil, errors.New("the tavily search provider needs TAVILY_API_KEY")
			}
			ps = append(ps, search.NewTavily(cfg.TavilyAPIKey, cfg.TavilyURL, client, search.WithTimeout(cfg.SearchTimeout)))
		default:
			return nil, fmt.Errorf("unknown search provider %q in SOVA_SEARCH_PROVIDER/SOVA_SEARCH_FALLBACK; available: searxng, tavily", name)
		}
	}
	return search.NewChain(ps...), nil
}

// Close waits for background work and closes the store.
func (a *App) Close(ctx context.Context) error {
	return errors.Join(a.Service.Close(ctx), a.Store.Close())
}

// unavailable stands in for a search provider that is not configured.
type unavailable struct{ err error }

func (u unavailable) Name() string { return "unconfigured" }

func (u unavailable) Search(context.Context, search.Query) ([]search.Result, error) {
	return nil, u.err
}
