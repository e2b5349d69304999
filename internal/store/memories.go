package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova"
)

var _ sova.MemoryStore = (*DB)(nil)

// AddMemory implements sova.MemoryStore.
func (s *DB) AddMemory(ctx context.Context, m *sova.Memory) error {
	if m == nil || m.UserID == "" {
		return fmt.Errorf("store: add memory: %w: no user", sova.ErrInvalid)
	}
	m.Content = strings.TrimSpace(m.Content)
	if m.Content == "" {
		return fmt.Errorf("store: add memory: %w: the memory is empty", sova.ErrInvalid)
	}
	if utf8.RuneCountInString(m.Content) > sova.MaxMemoryChars {
		return fmt.Errorf("store: add memory: %w: a memory has at most %d characters", sova.ErrInvalid, sova.MaxMemoryChars)
	}
	if m.ID == "" {
		id, err := newID()
		if err != nil {
			return fmt.Errorf("store: add memory: %w", err)
		}
		m.ID = id
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now()
	}
	m.CreatedAt = storedTime(m.CreatedAt)
	_, err := s.exec(ctx, `INSERT INTO memories (id, user_id, content, created_at) VALUES (?, ?, ?, ?)`,
		m.ID, m.UserID, m.Content, s.d.time(m.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: add memory: %w", err)
	}
	return nil
}

// ListMemories implements sova.MemoryStore.
func (s *DB) ListMemories(ctx context.Context, userID string, limit int) ([]sova.Memory, error) {
	// Ids are time-ordered (UUID v7): they break ties of the millisecond.
	rows, err := s.query(ctx, `SELECT id, user_id, content, created_at FROM memories
		WHERE user_id = ? ORDER BY created_at DESC, id DESC LIMIT ?`, userID, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("store: list memories: %w", err)
	}
	defer rows.Close()
	out := []sova.Memory{}
	for rows.Next() {
		var m sova.Memory
		if err := rows.Scan(&m.ID, &m.UserID, &m.Content, scanTime(&m.CreatedAt)); err != nil {
			return nil, fmt.Errorf("store: list memories: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list memories: %w", err)
	}
	return out, nil
}

// CountMemories implements sova.MemoryStore.
func (s *DB) CountMemories(ctx context.Context, userID string) (int, error) {
	var n int
	if err := s.queryRow(ctx, `SELECT COUNT(*) FROM memories WHERE user_id = ?`, userID).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count memories: %w", err)
	}
	return n, nil
}

// DeleteMemory implements sova.MemoryStore.
func (s *DB) DeleteMemory(ctx context.Context, userID, id string) error {
	if err := s.execOne(ctx, "memory", `DELETE FROM memories WHERE id = ? AND user_id = ?`, id, userID); err != nil {
		return fmt.Errorf("store: delete memory %s: %w", id, err)
	}
	return nil
}
