package app

import (
	"net/http"
	"time"

	"github.com/sova-ai/sova/internal/academic"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/mode/group"
	"github.com/sova-ai/sova/internal/reddit"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
	"github.com/sova-ai/sova/internal/xai"
	"github.com/sova-ai/sova/internal/youtube"
)

// GroupProviders builds the providers of the search groups' tools from the
// configuration: the web search chain and page reader the other modes
// use, the paper, video, Reddit and X searches at their configured
// addresses (trusted: they do not pass the page fetcher's guard), the
// fast model for translations, and, with a Tavily key, code_context's
// advanced Tavily search.
func GroupProviders(cfg *config.Config, fast llm.Model, chain *search.Chain, reader fetch.Reader) tools.Providers {
	p := tools.Providers{
		Search: chain, Reader: reader, Model: fast,
		Academic: academic.New(cfg.Academic),
		YouTube:  youtube.New(cfg.YouTube),
		Reddit:   reddit.New(cfg.Reddit),
		X:        xai.New(cfg.XAI),
	}
	if cfg.TavilyAPIKey != "" {
		client := &http.Client{Timeout: cfg.Academic.Timeout + 5*time.Second}
		p.Code = search.NewTavily(cfg.TavilyAPIKey, cfg.TavilyURL, client,
			search.WithTimeout(cfg.Academic.Timeout), search.WithAdvancedDepth(), search.WithRawContent("markdown"))
	}
	return p
}

// groupModes are the search groups (web, academic, youtube, reddit, code,
// x), one mode each.
func groupModes(cfg *config.Config, model, fast *llm.Client, chain *search.Chain, reader fetch.Reader, block search.BlockList) []mode.Mode {
	return group.All(group.Config{
		Providers:   GroupProviders(cfg, fast, chain, reader),
		Temperature: cfg.ChatTemperature, MaxTokens: cfg.ChatMaxTokens, HistoryLimit: cfg.ChatHistoryLimit,
		BlockList: block,
	}, model, fast)
}
