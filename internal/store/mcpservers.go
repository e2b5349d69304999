package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
)

var (
	_ sova.MCPServerStore = (*DB)(nil)
	_ sova.MessageStore   = (*DB)(nil)
)

// MCPServers implements sova.MCPServerStore.
func (s *DB) MCPServers(ctx context.Context, userID string) ([]sova.MCPServer, error) {
	rows, err := s.query(ctx, `SELECT name, url, headers, created_at FROM mcp_servers
		WHERE user_id = ? ORDER BY name `+s.d.bytewise, userID)
	if err != nil {
		return nil, fmt.Errorf("store: list MCP servers: %w", err)
	}
	defer rows.Close()
	out := []sova.MCPServer{}
	for rows.Next() {
		m := sova.MCPServer{UserID: userID}
		var headers []byte
		if err := rows.Scan(&m.Name, &m.URL, &headers, scanTime(&m.CreatedAt)); err != nil {
			return nil, fmt.Errorf("store: list MCP servers: %w", err)
		}
		if len(headers) > 0 {
			if err := json.Unmarshal(headers, &m.Headers); err != nil {
				return nil, fmt.Errorf("store: headers of MCP server %s: %w", m.Name, err)
			}
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list MCP servers: %w", err)
	}
	return out, nil
}

// PutMCPServer implements sova.MCPServerStore.
func (s *DB) PutMCPServer(ctx context.Context, m *sova.MCPServer) error {
	if m == nil || m.UserID == "" || m.Name == "" || m.URL == "" {
		return fmt.Errorf("store: put MCP server: %w: a user, a name and a URL are required", sova.ErrInvalid)
	}
	if m.CreatedAt.IsZero() {
		m.CreatedAt = time.Now()
	}
	m.CreatedAt = storedTime(m.CreatedAt)
	var headers []byte
	if len(m.Headers) > 0 {
		headers, _ = json.Marshal(m.Headers)
	}
	_, err := s.exec(ctx, `INSERT INTO mcp_servers (user_id, name, url, headers, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (user_id, name) DO UPDATE SET url = excluded.url, headers = excluded.headers`,
		m.UserID, m.Name, m.URL, jsonArg(headers), s.d.time(m.CreatedAt))
	if err != nil {
		return fmt.Errorf("store: put MCP server %s: %w", m.Name, err)
	}
	return nil
}

// DeleteMCPServer implements sova.MCPServerStore.
func (s *DB) DeleteMCPServer(ctx context.Context, userID, name string) error {
	if err := s.execOne(ctx, "MCP server", `DELETE FROM mcp_servers WHERE user_id = ? AND name = ?`, userID, name); err != nil {
		return fmt.Errorf("store: delete MCP server %s: %w", name, err)
	}
	return nil
}

// RecentMessages implements sova.MessageStore.
func (s *DB) RecentMessages(ctx context.Context, userID string, limit int) ([]sova.Message, error) {
	rows, err := s.query(ctx, `SELECT m.id, m.chat_id, m.role, m.content, m.mode, m.created_at
		FROM messages m JOIN chats c ON c.id = m.chat_id
		WHERE c.user_id = ? AND m.role IN ('user', 'assistant') AND m.content <> ''
		ORDER BY m.created_at DESC, m.seq DESC LIMIT ?`, userID, limitArg(limit))
	if err != nil {
		return nil, fmt.Errorf("store: recent messages: %w", err)
	}
	defer rows.Close()
	out := []sova.Message{}
	for rows.Next() {
		var m sova.Message
		if err := rows.Scan(&m.ID, &m.ChatID, &m.Role, &m.Content, &m.Mode, scanTime(&m.CreatedAt)); err != nil {
			return nil, fmt.Errorf("store: recent messages: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: recent messages: %w", err)
	}
	return out, nil
}
