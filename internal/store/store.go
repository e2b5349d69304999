// Package store persists chats, runs, agents, document spaces and the web
// cache in SQL. One implementation, DB, serves both engines: SQLite (the
// default, a single file in the data directory) and PostgreSQL. Queries
// are written once; a small dialect (dialect.go) covers where the engines
// differ: placeholders, timestamps, error codes, sorting by bytes, row
// locks. Each engine keeps its own migrations (migrations/<engine>).
//
// Every method is scoped by a user ID: a user only ever sees, changes or
// deletes their own chats, and a chat that exists but belongs to someone
// else is reported as ErrNotFound, exactly like one that does not exist.
// The user comes from the request (sova.UserFrom) and is passed down.
package store

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/sova-ai/sova"
)

// SQLiteFileName is the name of the SQLite database inside the data directory.
const SQLiteFileName = "sova.db"

// Store is everything the store keeps, for the code that assembles Sova.
// Other packages take only the part they use (sova.ChatStore,
// sova.RunStore, ...). Implementations are safe for concurrent use.
// Timestamps are kept with millisecond precision and returned in UTC.
type Store interface {
	sova.ChatStore      // chats and messages (chats.go)
	sova.SpaceStore     // document spaces (spaces.go)
	sova.RunStore       // runs, their event logs and workspace files (runs.go)
	sova.AgentStore     // schema-guided reasoning agents (agents.go)
	sova.CacheStore     // web search and page cache (cache.go)
	sova.AccountStore   // accounts, sessions, API keys, usage counters (accounts.go)
	sova.MCPServerStore // users' own MCP servers (mcpservers.go)
	sova.MessageStore   // messages across a user's chats (mcpservers.go)
	sova.MemoryStore    // memories (memories.go)
	sova.ConnectorStore // connected sources of spaces (connectors.go)
	sova.SettingsStore  // each user's settings (settings.go)
	sova.ShareStore     // read-only links to chats (shares.go)

	// CompactRunEvents and PurgeRunEvents bound finished runs' event logs
	// (retention.go).
	CompactRunEvents(ctx context.Context, before time.Time, limit int) (runs int, removed int64, err error)
	PurgeRunEvents(ctx context.Context, before time.Time) (int64, error)

	// Ping checks that the database is reachable.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error
}

var _ Store = (*DB)(nil)

// Open opens the configured store and brings its schema up to date. An
// empty databaseURL selects SQLite at <dataDir>/sova.db; a postgres:// or
// postgresql:// URL selects PostgreSQL.
func Open(ctx context.Context, databaseURL, dataDir string) (*DB, error) {
	if databaseURL == "" {
		if dataDir == "" {
			return nil, fmt.Errorf("store: open: %w: no database URL and no data directory", sova.ErrInvalid)
		}
		return OpenSQLite(ctx, filepath.Join(dataDir, SQLiteFileName))
	}
	if u, ok := postgresURL(databaseURL); ok {
		return OpenPostgres(ctx, u)
	}
	// The URL may carry a password, so only its scheme goes into the error.
	scheme := "none"
	if u, err := url.Parse(databaseURL); err == nil && u.Scheme != "" {
		scheme = u.Scheme + "://"
	}
	return nil, fmt.Errorf("store: open: unsupported database URL (scheme %s): use a postgres:// or postgresql:// URL, or leave it empty for SQLite in the data directory", scheme)
}

// postgresURL reports whether databaseURL names PostgreSQL.
func postgresURL(databaseURL string) (string, bool) {
	lower := strings.ToLower(databaseURL)
	return databaseURL, strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://")
}
