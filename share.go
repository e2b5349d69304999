package sova

import (
	"context"
	"time"
)

// ShareLink makes one chat readable, read-only, by anyone who has its
// link (SOVA_SHARE_LINKS). The link's secret is never stored: ID is the
// SHA-256 of it, so a copy of the database opens no chat. Deleting the
// row revokes the link.
type ShareLink struct {
	ID        string    `json:"id"`
	ChatID    string    `json:"chatId"`
	UserID    string    `json:"-"`
	CreatedAt time.Time `json:"createdAt"`
}

// ShareStore keeps share links.
type ShareStore interface {
	// AddShareLink stores a link to a chat of its user; a chat that is
	// not theirs is ErrNotFound. max > 0 caps the user's live links, over
	// all their chats: one more is ErrLimit.
	AddShareLink(ctx context.Context, l *ShareLink, max int) error
	// ShareLinks lists a chat's links, oldest first; never nil.
	ShareLinks(ctx context.Context, userID, chatID string) ([]ShareLink, error)
	// ShareLink finds a link by its ID (the hash of its secret);
	// ErrNotFound when there is none (revoked, or the chat deleted).
	ShareLink(ctx context.Context, id string) (*ShareLink, error)
	// DeleteShareLink revokes one of the user's links to a chat.
	DeleteShareLink(ctx context.Context, userID, chatID, id string) error
}
