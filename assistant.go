package sova

import (
	"context"
	"time"
)

// MCPServer is a Streamable HTTP MCP server a user added for their own
// assistant runs (seed 004). Headers carry what the server needs to accept
// the requests (an API key); they are kept, never shown again.
type MCPServer struct {
	UserID    string            `json:"-"`
	Name      string            `json:"name"`
	URL       string            `json:"url"`
	Headers   map[string]string `json:"-"`
	CreatedAt time.Time         `json:"created_at"`
}

// MCPServerStore keeps users' own MCP servers. Names are unique per user.
type MCPServerStore interface {
	// MCPServers lists the user's servers by name; never nil.
	MCPServers(ctx context.Context, userID string) ([]MCPServer, error)
	// PutMCPServer adds or replaces the user's server of that name.
	PutMCPServer(ctx context.Context, s *MCPServer) error
	// DeleteMCPServer removes one; ErrNotFound when the user has none of
	// that name.
	DeleteMCPServer(ctx context.Context, userID, name string) error
}

// MessageStore reads across a user's chats: the assistant's knowledge
// agent searches the person's past conversations.
type MessageStore interface {
	// RecentMessages returns the user's newest user and assistant
	// messages over all their chats, newest first, at most limit.
	RecentMessages(ctx context.Context, userID string, limit int) ([]Message, error)
	// SearchMessages finds the user's user and assistant messages that
	// contain any of terms as a word or the start of one (terms are word
	// stems; other characters are dropped), through the store's full-text
	// index, best match first (BM25 in SQLite, ts_rank_cd in PostgreSQL),
	// at most limit, leaving out the chat exceptChat ("" leaves out none).
	SearchMessages(ctx context.Context, userID string, terms []string, exceptChat string, limit int) ([]Message, error)
}
