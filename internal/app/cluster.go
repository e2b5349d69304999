package app

import (
	"context"
	"log/slog"

	"github.com/sova-ai/sova/internal/cluster"
	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/run"
)

// clusterNotifier carries run notices between the nodes (run.Notifier)
// until it is closed.
type clusterNotifier interface {
	run.Notifier
	Close()
}

// newNotifier connects this node to the others sharing its PostgreSQL
// database: through Redis pub/sub when SOVA_REDIS_URL is set, else through
// PostgreSQL's LISTEN/NOTIFY. On SQLite (one node) it returns nil.
func newNotifier(ctx context.Context, cfg *config.Config, logger *slog.Logger) (clusterNotifier, error) {
	switch {
	case cfg.DatabaseURL == "":
		return nil, nil
	case cfg.RedisURL != "":
		n, err := cluster.NewRedisNotifier(ctx, cfg.RedisURL, logger)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return n, nil
	default:
		n, err := cluster.NewPGNotifier(ctx, cfg.DatabaseURL, logger)
		if err != nil {
			return nil, err
		}
		return n, nil
	}
}

func closeNotifier(n clusterNotifier) {
	if n != nil {
		n.Close()
	}
}
