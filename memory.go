package sova

import (
	"context"
	"time"
)

// Memory is one thing a person asked Sova to remember (seed 000 §4.3):
// a fact, a preference, a note. Memories are searched by the memory
// group's search_memories tool and managed at /api/memories.
type Memory struct {
	ID        string    `json:"id"`
	UserID    string    `json:"-"`
	Content   string    `json:"content"`
	CreatedAt time.Time `json:"createdAt"`
	// Score is a search's relevance; zero outside a search.
	Score float64 `json:"score,omitempty"`
}

// MaxMemoryChars bounds one memory's content.
const MaxMemoryChars = 4000

// MemoryStore keeps each user's memories. Every method is scoped by
// user: another user's memory is ErrNotFound.
type MemoryStore interface {
	// AddMemory saves a new memory, filling in its ID and creation time.
	// Empty or overlong content is ErrInvalid.
	AddMemory(ctx context.Context, m *Memory) error
	// ListMemories returns the user's memories, newest first, at most
	// limit of them (limit <= 0: all); never nil.
	ListMemories(ctx context.Context, userID string, limit int) ([]Memory, error)
	// CountMemories tells how many memories the user has.
	CountMemories(ctx context.Context, userID string) (int, error)
	// DeleteMemory deletes one of the user's memories.
	DeleteMemory(ctx context.Context, userID, id string) error
}
