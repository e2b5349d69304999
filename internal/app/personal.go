package app

import (
	"log/slog"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/connectors"
	"github.com/sova-ai/sova/internal/memory"
	"github.com/sova-ai/sova/internal/spaces"
)

// Memories are the memories' back-end: Supermemory with
// SUPERMEMORY_API_KEY, the store otherwise.
func Memories(cfg *config.Config, st sova.MemoryStore) (memory.Service, error) {
	if cfg.Memory.SupermemoryAPIKey != "" {
		return memory.NewSupermemory(memory.SupermemoryConfig{APIKey: cfg.Memory.SupermemoryAPIKey, URL: cfg.Memory.SupermemoryURL})
	}
	return &memory.Builtin{Store: st, MaxPerUser: cfg.Memory.MaxPerUser}, nil
}

// Connectors is the service that keeps spaces in sync with their
// sources; the app starts its periodic sync and stops it on Close. The
// CLI uses it without starting it.
func Connectors(cfg *config.Config, st sova.ConnectorStore, sp *spaces.Service, logger *slog.Logger) *connectors.Service {
	return connectors.New(st, sp, connectors.Config{
		Interval: cfg.Connectors.SyncInterval, FolderRoots: cfg.Connectors.FolderRoots,
		AllowPrivate: cfg.Connectors.AllowPrivateHosts, MaxFiles: cfg.Connectors.MaxFiles,
		Timeout: cfg.Connectors.Timeout, Logger: logger,
	})
}
