// Package store persists chats and their messages. Store is the interface
// the HTTP and CLI layers depend on; SQLite (the default, a single file in
// the data directory) and PostgreSQL implement it with identical behaviour.
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

	"github.com/sova-ai/sova"
)

// SQLiteFileName is the name of the SQLite database inside the data directory.
const SQLiteFileName = "sova.db"

// Store keeps chats and messages. Implementations are safe for concurrent
// use. Timestamps are kept with millisecond precision and returned in UTC.
type Store interface {
	sova.SpaceStore // document spaces (spaces.go)
	sova.RunStore   // runs, their event logs and workspace files (runs.go)
	sova.AgentStore // schema-guided reasoning agents (agents.go)
	sova.CacheStore // web search and page cache (cache.go)

	// CreateChat saves a new chat owned by c.UserID. An empty ID is replaced
	// by a generated one; zero CreatedAt/UpdatedAt default to now. The
	// stored values are written back into c. A taken ID is ErrConflict.
	CreateChat(ctx context.Context, c *sova.Chat) error
	// GetChat returns one of the user's chats with its message count.
	GetChat(ctx context.Context, userID, chatID string) (*sova.Chat, error)
	// ListChats returns the user's chats, most recently updated first, with
	// message counts. limit <= 0 means no limit. The result is never nil.
	ListChats(ctx context.Context, userID string, limit, offset int) ([]sova.Chat, error)
	// DeleteChat deletes one of the user's chats and all of its messages.
	DeleteChat(ctx context.Context, userID, chatID string) error
	// SetChatTitle renames one of the user's chats. It does not change
	// UpdatedAt, so renaming does not reorder the chat list.
	SetChatTitle(ctx context.Context, userID, chatID, title string) error
	// AddMessage appends a message to one of the user's chats and moves the
	// chat's UpdatedAt forward to the message's CreatedAt. An empty ID is
	// replaced by a generated one and a zero CreatedAt defaults to now; the
	// stored values are written back into m. A taken ID is ErrConflict.
	AddMessage(ctx context.Context, userID string, m *sova.Message) error
	// ListMessages returns the messages of one of the user's chats in
	// chronological order (ties keep insertion order). The result is never
	// nil.
	ListMessages(ctx context.Context, userID, chatID string) ([]sova.Message, error)
	// Ping checks that the database is reachable.
	Ping(ctx context.Context) error
	// Close releases the database.
	Close() error
}

// Open opens the configured store and brings its schema up to date. An
// empty databaseURL selects SQLite at <dataDir>/sova.db; a postgres:// or
// postgresql:// URL selects PostgreSQL.
func Open(ctx context.Context, databaseURL, dataDir string) (Store, error) {
	if databaseURL == "" {
		if dataDir == "" {
			return nil, fmt.Errorf("store: open: %w: no database URL and no data directory", sova.ErrInvalid)
		}
		return OpenSQLite(ctx, filepath.Join(dataDir, SQLiteFileName))
	}
	lower := strings.ToLower(databaseURL)
	if strings.HasPrefix(lower, "postgres://") || strings.HasPrefix(lower, "postgresql://") {
		return OpenPostgres(ctx, databaseURL)
	}
	// The URL may carry a password, so only its scheme goes into the error.
	scheme := "none"
	if u, err := url.Parse(databaseURL); err == nil && u.Scheme != "" {
		scheme = u.Scheme + "://"
	}
	return nil, fmt.Errorf("store: open: unsupported database URL (scheme %s): use a postgres:// or postgresql:// URL, or leave it empty for SQLite in the data directory", scheme)
}
