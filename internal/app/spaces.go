package app

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/isolate"
	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/mode/docs"
	"github.com/sova-ai/sova/internal/search"
	"github.com/sova-ai/sova/internal/spaces"
)

// SpacesIndexDir is where the embedded index of document spaces lives
// inside the data directory.
const SpacesIndexDir = "spaces"

// OpenSpaces opens the document spaces kept in st, with the embedded
// index under <SOVA_DATA_DIR>/spaces. embed may be nil (BM25 only); with
// SOVA_EMBED_MODEL set it is that model's client, and searches are hybrid.
// The CLI uses it without the rest of the app.
func OpenSpaces(cfg *config.Config, st sova.SpaceStore, embed *llm.Client, logger *slog.Logger) (*spaces.Service, error) {
	idx, err := spaces.OpenBleve(filepath.Join(cfg.DataDir, SpacesIndexDir), spaces.BleveOptions{
		IdleClose: cfg.SpacesIdleClose, Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("document spaces (SOVA_DATA_DIR=%s): %w", cfg.DataDir, err)
	}
	var e spaces.Embedder
	if embed != nil {
		e = spaces.EmbedFunc(embed.Embed)
	}
	return spaces.NewService(st, idx, e, spaces.Config{
		ChunkChars: cfg.SpacesChunkChars, ChunkOverlap: cfg.SpacesChunkOverlap, MaxFileBytes: cfg.SpacesMaxFileBytes,
		Parse: ParseLimits(cfg),
	}, logger), nil
}

// ParseLimits are the limits of one parse of an untrusted file
// (SOVA_PARSE_TIMEOUT, SOVA_PARSE_MEMORY), for the fetcher and the spaces.
func ParseLimits(cfg *config.Config) isolate.Limits {
	return isolate.Limits{Timeout: cfg.ParseTimeout, Memory: int64(cfg.ParseMemory)}
}

// EmbeddingClient is the client of SOVA_EMBED_MODEL, or nil when none is
// set. The endpoint and key default to the chat model's.
func EmbeddingClient(cfg *config.Config, logger *slog.Logger) (*llm.Client, error) {
	if cfg.EmbedModel == "" {
		return nil, nil
	}
	base, key := cfg.EmbedBaseURL, cfg.EmbedAPIKey
	if base == "" {
		base = cfg.LLMBaseURL
	}
	if key == "" && cfg.EmbedBaseURL == "" {
		key = cfg.LLMAPIKey
	}
	c, err := llm.New(llm.Config{
		BaseURL: base, APIKey: key, Model: cfg.EmbedModel,
		Timeout: cfg.LLMTimeout, MaxRetries: cfg.LLMMaxRetries, Logger: logger,
	})
	if err != nil {
		return nil, fmt.Errorf("embedding client (SOVA_EMBED_MODEL): %w", err)
	}
	return c, nil
}

// docsMode is the docs mode (seed 003) over the spaces, with the web
// search chain for its web_search tool.
func docsMode(cfg *config.Config, model, fast *llm.Client, sp *spaces.Service, chain *search.Chain, block search.BlockList) *docs.Mode {
	return docs.New(docs.Config{
		MaxDocQueries: cfg.DocsMaxDocQueries, MaxWebQueries: cfg.DocsMaxWebQueries, WebSearch: cfg.DocsWebSearch,
		DocResults: cfg.DocsResults, WebResults: cfg.DeepSearchMaxResults, MaxSteps: cfg.DocsMaxSteps,
		Temperature: cfg.DocsTemperature, MaxTokens: cfg.ChatMaxTokens, HistoryLimit: cfg.ChatHistoryLimit,
		UserName: cfg.UserName, BlockList: block,
	}, model, fast, sp, chain)
}
