package sova

import (
	"context"
	"encoding/json"
	"time"
)

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleSystem    = "system"
)

// Chat is one conversation. MessageCount is computed when a chat is read and
// ignored when one is written.
type Chat struct {
	ID           string    `json:"id"`
	UserID       string    `json:"userId"`
	Title        string    `json:"title"`
	Mode         string    `json:"mode"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
	MessageCount int       `json:"messageCount"`
}

// Message is one message of a chat. Parts holds the AI SDK UI message parts
// exactly as clients expect them; ToolCalls holds the tool calls made while
// producing the message and their results. Both are opaque JSON to the store
// and compare equal as JSON (not byte for byte) after a round trip.
type Message struct {
	ID           string          `json:"id"`
	ChatID       string          `json:"chatId"`
	Role         string          `json:"role"`
	Content      string          `json:"content"`
	Parts        json.RawMessage `json:"parts,omitempty"`
	Sources      []Source        `json:"sources,omitempty"`
	Usage        *Usage          `json:"usage,omitempty"`
	Model        string          `json:"model,omitempty"`
	FinishReason string          `json:"finishReason,omitempty"`
	Mode         string          `json:"mode,omitempty"`
	ToolCalls    json.RawMessage `json:"toolCalls,omitempty"`
	Error        string          `json:"error,omitempty"`
	// ReplyTo is the id of the question (user message) an answer replies
	// to; for a question, the question it rewrites (an edit), else empty.
	ReplyTo   string    `json:"replyTo,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

// ChatStore keeps chats and their messages. Every method is scoped by the
// user: a chat of another user is ErrNotFound, like one that does not exist.
type ChatStore interface {
	// CreateChat saves a new chat owned by c.UserID. An empty ID is replaced
	// by a generated one; zero CreatedAt/UpdatedAt default to now. The
	// stored values are written back into c. A taken ID is ErrConflict.
	CreateChat(ctx context.Context, c *Chat) error
	// GetChat returns one of the user's chats with its message count.
	GetChat(ctx context.Context, userID, chatID string) (*Chat, error)
	// ListChats returns the user's chats, most recently updated first, with
	// message counts. limit <= 0 means no limit. The result is never nil.
	ListChats(ctx context.Context, userID string, limit, offset int) ([]Chat, error)
	// DeleteChat deletes one of the user's chats and all of its messages.
	DeleteChat(ctx context.Context, userID, chatID string) error
	// SetChatTitle renames one of the user's chats. It does not change
	// UpdatedAt, so renaming does not reorder the chat list.
	SetChatTitle(ctx context.Context, userID, chatID, title string) error
	// AddMessage appends a message to one of the user's chats and moves the
	// chat's UpdatedAt forward to the message's CreatedAt. An empty ID is
	// replaced by a generated one and a zero CreatedAt defaults to now; the
	// stored values are written back into m. A taken ID is ErrConflict.
	AddMessage(ctx context.Context, userID string, m *Message) error
	// ListMessages returns the messages of one of the user's chats in
	// chronological order (ties keep insertion order). The result is never
	// nil.
	ListMessages(ctx context.Context, userID, chatID string) ([]Message, error)
}
