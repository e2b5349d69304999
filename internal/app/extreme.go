package app

import (
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/mode/extreme"
	"github.com/sova-ai/sova/internal/sandbox"
	"github.com/sova-ai/sova/internal/search"
)

// extremeMode is the extreme mode on the search groups' providers: the web
// search chain and page reader, X search with XAI_API_KEY, and the code
// sandbox (codeRunner is withdrawn where it cannot run).
func extremeMode(cfg *config.Config, model, fast *llm.Client, chain *search.Chain, reader fetch.Reader, block search.BlockList,
	sb *sandbox.Sandbox, sbErr error) mode.Mode {
	e := cfg.Extreme
	return extreme.New(extreme.Config{
		Providers:  GroupProviders(cfg, fast, chain, reader, sb, sbErr),
		MaxActions: e.MaxActions, Results: e.Results, ReadPages: e.ReadPages, ContentChars: e.ContentChars,
		ChartBytes: int64(e.ChartBytes), Concurrency: cfg.SearchConcurrency, BlockList: block,
		Temperature: cfg.ChatTemperature, MaxTokens: cfg.ChatMaxTokens, HistoryLimit: cfg.ChatHistoryLimit,
	}, model, fast)
}
