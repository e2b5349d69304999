// Package memory keeps what a person asks Sova to remember and finds it
// again (seed 000 §4.3, the memory group): built in, in the store and
// searched with BM25 over Russian and English stems (internal/rank), or
// in Supermemory when SUPERMEMORY_API_KEY is set. Both are scoped by
// user: nobody reads, finds or deletes another person's memories.
package memory

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/rank"
)

// Service is where memories are kept and searched.
type Service interface {
	// Name names the back-end: "built-in" or "supermemory".
	Name() string
	// Add remembers content for the user.
	Add(ctx context.Context, userID, content string) (sova.Memory, error)
	// List returns the user's memories, newest first, at most limit
	// (<= 0: the back-end's maximum).
	List(ctx context.Context, userID string, limit int) ([]sova.Memory, error)
	// Search returns the user's memories that match query, best first,
	// with their scores; at most limit.
	Search(ctx context.Context, userID, query string, limit int) ([]sova.Memory, error)
	// Delete forgets one of the user's memories; another user's is
	// sova.ErrNotFound.
	Delete(ctx context.Context, userID, id string) error
}

// ErrFull is returned by Add when a user has as many memories as allowed.
var ErrFull = errors.New("too many memories")

// DefaultMaxPerUser bounds a user's built-in memories.
const DefaultMaxPerUser = 5000

// checkContent trims content and refuses empty or overlong memories.
func checkContent(content string) (string, error) {
	content = strings.TrimSpace(content)
	if content == "" {
		return "", fmt.Errorf("%w: the memory is empty", sova.ErrInvalid)
	}
	if n := utf8.RuneCountInString(content); n > sova.MaxMemoryChars {
		return "", fmt.Errorf("%w: a memory has at most %d characters, this one has %d", sova.ErrInvalid, sova.MaxMemoryChars, n)
	}
	return content, nil
}

// Builtin keeps memories in the store and searches them with BM25. A
// search reads the user's memories (at most MaxPerUser, a few hundred
// KiB) and ranks them in memory: nothing to keep in step with the store,
// and every replica of a server on PostgreSQL sees the same memories.
type Builtin struct {
	Store sova.MemoryStore
	// MaxPerUser bounds a user's memories (default DefaultMaxPerUser).
	MaxPerUser int
}

var _ Service = (*Builtin)(nil)

// Name implements Service.
func (b *Builtin) Name() string { return "built-in" }

func (b *Builtin) max() int {
	if b.MaxPerUser <= 0 {
		return DefaultMaxPerUser
	}
	return b.MaxPerUser
}

// Add implements Service.
func (b *Builtin) Add(ctx context.Context, userID, content string) (sova.Memory, error) {
	content, err := checkContent(content)
	if err != nil {
		return sova.Memory{}, err
	}
	n, err := b.Store.CountMemories(ctx, userID)
	if err != nil {
		return sova.Memory{}, err
	}
	if n >= b.max() {
		return sova.Memory{}, fmt.Errorf("%w: %d is the most one person may keep (SOVA_MEMORY_MAX_PER_USER); delete some first", ErrFull, b.max())
	}
	m := sova.Memory{UserID: userID, Content: content}
	if err := b.Store.AddMemory(ctx, &m); err != nil {
		return sova.Memory{}, err
	}
	return m, nil
}

// List implements Service.
func (b *Builtin) List(ctx context.Context, userID string, limit int) ([]sova.Memory, error) {
	if limit <= 0 || limit > b.max() {
		limit = b.max()
	}
	return b.Store.ListMemories(ctx, userID, limit)
}

// Search implements Service: BM25 over the memories' stemmed words;
// memories sharing no word with the query are left out. An empty query
// returns the newest memories.
func (b *Builtin) Search(ctx context.Context, userID, query string, limit int) ([]sova.Memory, error) {
	if limit <= 0 {
		limit = 10
	}
	all, err := b.Store.ListMemories(ctx, userID, b.max())
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(query) == "" {
		return all[:min(limit, len(all))], nil
	}
	docs := make([]rank.Doc, len(all))
	for i, m := range all {
		docs[i] = rank.Doc{ID: m.ID, Text: m.Content}
	}
	out := []sova.Memory{}
	for _, s := range rank.Rerank(query, docs, limit) {
		if s.Score <= 0 {
			break
		}
		m := all[s.Index]
		m.Score = s.Score
		out = append(out, m)
	}
	return out, nil
}

// Delete implements Service.
func (b *Builtin) Delete(ctx context.Context, userID, id string) error {
	return b.Store.DeleteMemory(ctx, userID, id)
}
