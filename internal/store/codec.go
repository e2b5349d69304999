package store

import (
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
