package app

import (
	"time"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/egress"
	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode"
	"github.com/sova-ai/sova/internal/mode/group"
	"github.com/sova-ai/sova/internal/provider"
	"github.com/sova-ai/sova/internal/provider/academic"
	"github.com/sova-ai/sova/internal/provider/coins"
	"github.com/sova-ai/sova/internal/provider/flights"
	"github.com/sova-ai/sova/internal/provider/markets"
	"github.com/sova-ai/sova/internal/provider/movies"
	"github.com/sova-ai/sova/internal/provider/places"
	"github.com/sova-ai/sova/internal/provider/reddit"
	"github.com/sova-ai/sova/internal/provider/weather"
	"github.com/sova-ai/sova/internal/provider/xai"
	"github.com/sova-ai/sova/internal/provider/youtube"
	"github.com/sova-ai/sova/internal/sandbox"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/tools"
)

// GroupProviders builds the providers of the search groups' tools from the
// configuration: the web search chain and page reader the other modes
// use, the paper, video, Reddit and X searches at their configured
// addresses (trusted: they do not pass the page fetcher's guard), the
// fast model for translations, and, with a Tavily key, code_context's
// advanced Tavily search.
//
// sb is the code sandbox (nil when it cannot run here; sbErr says why):
// code_interpreter runs on it or is withdrawn.
func GroupProviders(cfg *config.Config, fast llm.Model, chain *search.Chain, reader fetch.Reader, sb *sandbox.Sandbox, sbErr error) tools.Providers {
	ac := settings[academic.Config](cfg)
	p := tools.Providers{
		Search: chain, Reader: reader, Model: fast, SandboxErr: sbErr,
		Academic: academic.New(ac),
		YouTube:  youtube.New(settings[youtube.Config](cfg)),
		Reddit:   reddit.New(settings[reddit.Config](cfg)),
		X:        xai.New(settings[xai.Config](cfg)),
	}
	// The data providers' settings were checked with the configuration;
	// a client that still cannot be made withdraws its tools.
	if c, err := weather.New(settings[weather.Config](cfg)); err == nil {
		p.Weather = c
	}
	if c, err := places.New(settings[places.Config](cfg)); err == nil {
		p.Places = c
	}
	if c, err := markets.New(settings[markets.Config](cfg)); err == nil {
		p.Markets = c
	}
	if c, err := coins.New(settings[coins.Config](cfg)); err == nil {
		p.Coins = c
	}
	// Without their keys these are nil and their tools withdrawn.
	if c, err := flights.New(settings[flights.Config](cfg)); err == nil && c != nil {
		p.Flights = c
	}
	if c, err := movies.New(settings[movies.Config](cfg)); err == nil && c != nil {
		p.Movies = c
	}
	if sb != nil {
		p.Sandbox = sb
	} else if sbErr == nil {
		p.SandboxErr = ErrSandboxDisabled
	}
	if cfg.TavilyAPIKey != "" {
		client := egress.ServiceClient(ac.Timeout+5*time.Second, cfg.TavilyURL)
		p.Code = search.NewTavily(cfg.TavilyAPIKey, cfg.TavilyURL, client,
			search.WithTimeout(ac.Timeout), search.WithAdvancedDepth(), search.WithRawContent("markdown"))
	}
	return p
}

// settings are the provider settings of type T the configuration read;
// a Config not made by config.FromEnv has none and gives the zero T.
func settings[T any](cfg *config.Config) T {
	if v, ok := provider.Get[T](cfg.Providers); ok {
		return v
	}
	var v T
	return v
}

// groupModes are the search groups (web, academic, youtube, reddit, code,
// x, stocks, crypto, memory, connectors), one mode each. personal holds
// the memory and connectors groups' providers: the memories, the
// connectors and the document spaces.
func groupModes(cfg *config.Config, model, fast *llm.Client, chain *search.Chain, reader fetch.Reader, block search.BlockList,
	sb *sandbox.Sandbox, sbErr error, personal tools.Providers) []mode.Mode {
	p := GroupProviders(cfg, fast, chain, reader, sb, sbErr)
	p.Memory, p.Connectors, p.Documents = personal.Memory, personal.Connectors, personal.Documents
	return group.All(group.Config{
		Providers:   p,
		Temperature: cfg.ChatTemperature, MaxTokens: cfg.ChatMaxTokens, HistoryLimit: cfg.ChatHistoryLimit,
		BlockList: block,
	}, model, fast)
}
