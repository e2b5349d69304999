package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sova-ai/sova"

	"github.com/google/uuid"
)

// newID returns a time-ordered (version 7) UUID, so generated IDs also sort
// by creation.
func newID() (string, error) {
	id, err := uuid.NewV7()
	if err != nil {
		return "", fmt.Errorf("generate id: %w", err)
	}
	return id.String(), nil
}

// storedTime is t as both back-ends keep it: UTC, millisecond precision.
func storedTime(t time.Time) time.Time {
	return t.UTC().Truncate(time.Millisecond)
}

// prepareChat validates c and fills in its ID and timestamps.
func prepareChat(c *sova.Chat, now time.Time) error {
	if c == nil {
		return fmt.Errorf("%w: nil chat", sova.ErrInvalid)
	}
	if c.UserID == "" {
		return fmt.Errorf("%w: chat has no user", sova.ErrInvalid)
	}
	if c.ID == "" {
		id, err := newID()
		if err != nil {
			return err
		}
		c.ID = id
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = now
	}
	if c.UpdatedAt.IsZero() {
		c.UpdatedAt = c.CreatedAt
	}
	c.CreatedAt = storedTime(c.CreatedAt)
	c.UpdatedAt = storedTime(c.UpdatedAt)
	c.MessageCount = 0
	return nil
}

// messageRow is a Message encoded for storage. JSON columns are nil for
// SQL NULL.
type messageRow struct {
	parts, sources, toolCalls []byte
	inputTokens               *int64
	outputTokens              *int64
	totalTokens               *int64
}

// prepareMessage validates m, fills in its ID and CreatedAt and encodes the
// structured fields.
func prepareMessage(m *sova.Message, now time.Time) (messageRow, error) {
	var r messageRow
	if m == nil {
		return r, fmt.Errorf("%w: nil message", sova.ErrInvalid)
	}
	switch m.Role {
	case sova.RoleUser, sova.RoleAssistant, sova.RoleSystem:
	default:
		return r, fmt.Errorf("%w: message role %q", sova.ErrInvalid, m.Role)
	}
	var err error
	if r.parts, err = rawJSON("parts", m.Parts); err != nil {
		return r, err
	}
	if r.toolCalls, err = rawJSON("tool calls", m.ToolCalls); err != nil {
		return r, err
	}
	if m.Sources != nil {
		if r.sources, err = json.Marshal(m.Sources); err != nil {
			return r, fmt.Errorf("encode sources: %w", err)
		}
	}
	if u := m.Usage; u != nil {
		in, out, total := int64(u.InputTokens), int64(u.OutputTokens), int64(u.TotalTokens)
		r.inputTokens, r.outputTokens, r.totalTokens = &in, &out, &total
	}
	if m.ID == "" {
		if m.ID, err = newID(); err != nil {
			return r, err
		}
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = now
	}
	m.CreatedAt = storedTime(m.CreatedAt)
	return r, nil
}

func rawJSON(field string, raw json.RawMessage) ([]byte, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	if !json.Valid(raw) {
		return nil, fmt.Errorf("%w: message %s are not valid JSON", sova.ErrInvalid, field)
	}
	return raw, nil
}

// decode fills the structured fields of m from r.
func (r messageRow) decode(m *sova.Message) error {
	if len(r.parts) > 0 {
		m.Parts = json.RawMessage(r.parts)
	}
	if len(r.toolCalls) > 0 {
		m.ToolCalls = json.RawMessage(r.toolCalls)
	}
	if len(r.sources) > 0 {
		if err := json.Unmarshal(r.sources, &m.Sources); err != nil {
			return fmt.Errorf("decode sources of message %s: %w", m.ID, err)
		}
	}
	if r.inputTokens != nil || r.outputTokens != nil || r.totalTokens != nil {
		m.Usage = &sova.Usage{
			InputTokens:  intOf(r.inputTokens),
			OutputTokens: intOf(r.outputTokens),
			TotalTokens:  intOf(r.totalTokens),
		}
	}
	return nil
}

func intOf(p *int64) int {
	if p == nil {
		return 0
	}
	return int(*p)
}

// CreateChat implements sova.ChatStore.
func (s *DB) CreateChat(ctx context.Context, c *sova.Chat) error {
	if err := prepareChat(c, time.Now()); err != nil {
		return fmt.Errorf("store: create chat: %w", err)
	}
	_, err := s.exec(ctx,
		`INSERT INTO chats (id, user_id, title, mode, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		c.ID, c.UserID, c.Title, c.Mode, s.d.time(c.CreatedAt), s.d.time(c.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: create chat %s: %w", c.ID, err)
	}
	return nil
}

const chatColumns = `c.id, c.user_id, c.title, c.mode, c.created_at, c.updated_at,
	(SELECT COUNT(*) FROM messages m WHERE m.chat_id = c.id)`

func scanChat(row interface{ Scan(...any) error }) (sova.Chat, error) {
	var (
		c            sova.Chat
		messageCount int64
	)
	if err := row.Scan(&c.ID, &c.UserID, &c.Title, &c.Mode, scanTime(&c.CreatedAt), scanTime(&c.UpdatedAt), &messageCount); err != nil {
		return sova.Chat{}, err
	}
	c.MessageCount = int(messageCount)
	return c, nil
}

// GetChat implements sova.ChatStore.
func (s *DB) GetChat(ctx context.Context, userID, chatID string) (*sova.Chat, error) {
	c, err := scanChat(s.queryRow(ctx,
		`SELECT `+chatColumns+` FROM chats c WHERE c.id = ? AND c.user_id = ?`, chatID, userID))
	if isNoRows(err) {
		return nil, fmt.Errorf("store: chat %s: %w", chatID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get chat %s: %w", chatID, err)
	}
	return &c, nil
}

// ListChats implements sova.ChatStore.
func (s *DB) ListChats(ctx context.Context, userID string, limit, offset int) ([]sova.Chat, error) {
	rows, err := s.query(ctx,
		`SELECT `+chatColumns+` FROM chats c WHERE c.user_id = ?
		ORDER BY c.updated_at DESC, c.id DESC LIMIT ? OFFSET ?`, userID, limitArg(limit), max(offset, 0))
	if err != nil {
		return nil, fmt.Errorf("store: list chats: %w", err)
	}
	defer rows.Close()
	chats := []sova.Chat{} // never nil: encodes as [] rather than null
	for rows.Next() {
		c, err := scanChat(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list chats: %w", err)
		}
		chats = append(chats, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list chats: %w", err)
	}
	return chats, nil
}

// DeleteChat implements sova.ChatStore.
func (s *DB) DeleteChat(ctx context.Context, userID, chatID string) error {
	if err := s.execOne(ctx, "chat", `DELETE FROM chats WHERE id = ? AND user_id = ?`, chatID, userID); err != nil {
		return fmt.Errorf("store: delete chat %s: %w", chatID, err)
	}
	return nil
}

// SetChatTitle implements sova.ChatStore.
func (s *DB) SetChatTitle(ctx context.Context, userID, chatID, title string) error {
	if err := s.execOne(ctx, "chat", `UPDATE chats SET title = ? WHERE id = ? AND user_id = ?`, title, chatID, userID); err != nil {
		return fmt.Errorf("store: set title of chat %s: %w", chatID, err)
	}
	return nil
}

// AddMessage implements sova.ChatStore.
func (s *DB) AddMessage(ctx context.Context, userID string, m *sova.Message) error {
	r, err := prepareMessage(m, time.Now())
	if err != nil {
		return fmt.Errorf("store: add message: %w", err)
	}
	created := s.d.time(m.CreatedAt)
	err = s.inTx(ctx, func(tx conn) error {
		if err := tx.execOne(ctx, "chat", `UPDATE chats SET updated_at = `+s.d.greatest+`(updated_at, ?)
			WHERE id = ? AND user_id = ?`, created, m.ChatID, userID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO messages (id, chat_id, role, content, parts, sources,
			input_tokens, output_tokens, total_tokens, model, finish_reason, mode, tool_calls, error, reply_to, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			m.ID, m.ChatID, m.Role, m.Content, jsonArg(r.parts), jsonArg(r.sources),
			r.inputTokens, r.outputTokens, r.totalTokens, m.Model, m.FinishReason, m.Mode,
			jsonArg(r.toolCalls), m.Error, m.ReplyTo, created)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: add message %s to chat %s: %w", m.ID, m.ChatID, err)
	}
	return nil
}

// ListMessages implements sova.ChatStore.
func (s *DB) ListMessages(ctx context.Context, userID, chatID string) ([]sova.Message, error) {
	var one int
	err := s.queryRow(ctx, `SELECT 1 FROM chats WHERE id = ? AND user_id = ?`, chatID, userID).Scan(&one)
	if isNoRows(err) {
		return nil, fmt.Errorf("store: chat %s: %w", chatID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: chat %s: %w", chatID, err)
	}
	rows, err := s.query(ctx, `SELECT m.id, m.chat_id, m.role, m.content, m.parts, m.sources,
		m.input_tokens, m.output_tokens, m.total_tokens, m.model, m.finish_reason, m.mode,
		m.tool_calls, m.error, m.reply_to, m.created_at
		FROM messages m JOIN chats c ON c.id = m.chat_id
		WHERE m.chat_id = ? AND c.user_id = ?
		ORDER BY m.created_at, m.seq`, chatID, userID)
	if err != nil {
		return nil, fmt.Errorf("store: list messages of chat %s: %w", chatID, err)
	}
	defer rows.Close()
	msgs := []sova.Message{} // never nil: encodes as [] rather than null
	for rows.Next() {
		var (
			m sova.Message
			r messageRow
		)
		if err := rows.Scan(&m.ID, &m.ChatID, &m.Role, &m.Content, &r.parts, &r.sources,
			&r.inputTokens, &r.outputTokens, &r.totalTokens, &m.Model, &m.FinishReason, &m.Mode,
			&r.toolCalls, &m.Error, &m.ReplyTo, scanTime(&m.CreatedAt)); err != nil {
			return nil, fmt.Errorf("store: list messages of chat %s: %w", chatID, err)
		}
		if err := r.decode(&m); err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list messages of chat %s: %w", chatID, err)
	}
	return msgs, nil
}
