package store

import (
	"context"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
)

var _ sova.ShareStore = (*DB)(nil)

// AddShareLink implements sova.ShareStore.
func (s *DB) AddShareLink(ctx context.Context, l *sova.ShareLink, max int) error {
	if l == nil || l.ID == "" || l.UserID == "" || l.ChatID == "" {
		return fmt.Errorf("store: add share link: %w: a link needs an id, a user and a chat", sova.ErrInvalid)
	}
	// Only the chat's owner shares it.
	if _, err := s.GetChat(ctx, l.UserID, l.ChatID); err != nil {
		return fmt.Errorf("store: add share link: %w", err)
	}
	if l.CreatedAt.IsZero() {
		l.CreatedAt = time.Now()
	}
	l.CreatedAt = storedTime(l.CreatedAt)
	if _, err := s.exec(ctx, `INSERT INTO share_links (id, chat_id, user_id, created_at) VALUES (?, ?, ?, ?)`,
		l.ID, l.ChatID, l.UserID, s.d.time(l.CreatedAt)); err != nil {
		return fmt.Errorf("store: add share link: %w", s.d.mapErr(err))
	}
	if max <= 0 {
		return nil
	}
	// Counted after the insert, so that two links added at once cannot
	// both pass the cap; the one over it is taken back.
	var n int
	if err := s.queryRow(ctx, `SELECT COUNT(*) FROM share_links WHERE user_id = ?`, l.UserID).Scan(&n); err != nil {
		return fmt.Errorf("store: add share link: counting the user's links: %w", s.d.mapErr(err))
	}
	if n > max {
		if _, err := s.exec(ctx, `DELETE FROM share_links WHERE id = ?`, l.ID); err != nil {
			return fmt.Errorf("store: add share link: taking back a link over the cap: %w", s.d.mapErr(err))
		}
		return fmt.Errorf("%w: %d live share links per person; revoke one to share another", sova.ErrLimit, max)
	}
	return nil
}

// ShareLinks implements sova.ShareStore.
func (s *DB) ShareLinks(ctx context.Context, userID, chatID string) ([]sova.ShareLink, error) {
	rows, err := s.query(ctx, `SELECT id, chat_id, user_id, created_at FROM share_links
		WHERE user_id = ? AND chat_id = ? ORDER BY created_at, id`, userID, chatID)
	if err != nil {
		return nil, fmt.Errorf("store: list share links: %w", err)
	}
	defer rows.Close()
	out := []sova.ShareLink{}
	for rows.Next() {
		var l sova.ShareLink
		if err := rows.Scan(&l.ID, &l.ChatID, &l.UserID, scanTime(&l.CreatedAt)); err != nil {
			return nil, fmt.Errorf("store: list share links: %w", err)
		}
		out = append(out, l)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list share links: %w", err)
	}
	return out, nil
}

// ShareLink implements sova.ShareStore.
func (s *DB) ShareLink(ctx context.Context, id string) (*sova.ShareLink, error) {
	var l sova.ShareLink
	err := s.queryRow(ctx, `SELECT id, chat_id, user_id, created_at FROM share_links WHERE id = ?`, id).
		Scan(&l.ID, &l.ChatID, &l.UserID, scanTime(&l.CreatedAt))
	if isNoRows(err) {
		return nil, fmt.Errorf("store: share link: %w", sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: share link: %w", s.d.mapErr(err))
	}
	return &l, nil
}

// DeleteShareLink implements sova.ShareStore.
func (s *DB) DeleteShareLink(ctx context.Context, userID, chatID, id string) error {
	if err := s.execOne(ctx, "share link", `DELETE FROM share_links WHERE id = ? AND user_id = ? AND chat_id = ?`, id, userID, chatID); err != nil {
		return fmt.Errorf("store: delete share link: %w", err)
	}
	return nil
}
