package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
)

var _ sova.AgentStore = (*SQLite)(nil)

// CreateAgent implements AgentStore.
func (s *SQLite) CreateAgent(ctx context.Context, a *sova.Agent) error {
	if err := prepareAgent(a, time.Now()); err != nil {
		return fmt.Errorf("store: create agent: %w", err)
	}
	r, err := encodeAgent(a)
	if err != nil {
		return fmt.Errorf("store: create agent: %w", err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO agents (id, user_id, chat_id, mode, task, state,
		iteration, searches_used, clarifications_used, sources, reasoning, result, result_sources,
		error, context, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.UserID, sqliteNullText(a.ChatID), a.Mode, a.Task, a.State,
		a.Iteration, a.SearchesUsed, a.ClarificationsUsed, sqliteText(r.sources), sqliteText(r.reasoning),
		a.Result, sqliteText(r.resultSources), a.Error, sqliteText(r.context),
		a.CreatedAt.UnixMilli(), a.UpdatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: create agent %s: %w", a.ID, sqliteErr(err))
	}
	return nil
}

const sqliteAgentColumns = `id, user_id, coalesce(chat_id, ''), mode, task, state, iteration, searches_used,
	clarifications_used, sources, reasoning, result, result_sources, error, created_at, updated_at`

// scanSQLiteAgent scans sqliteAgentColumns, plus context when withContext.
func scanSQLiteAgent(row interface{ Scan(...any) error }, withContext bool) (sova.Agent, error) {
	var (
		a                sova.Agent
		r                agentRow
		created, updated int64
	)
	dest := []any{&a.ID, &a.UserID, &a.ChatID, &a.Mode, &a.Task, &a.State, &a.Iteration, &a.SearchesUsed,
		&a.ClarificationsUsed, &r.sources, &r.reasoning, &a.Result, &r.resultSources, &a.Error, &created, &updated}
	if withContext {
		dest = append(dest, &r.context)
	}
	if err := row.Scan(dest...); err != nil {
		return sova.Agent{}, err
	}
	a.CreatedAt = time.UnixMilli(created).UTC()
	a.UpdatedAt = time.UnixMilli(updated).UTC()
	if err := r.decode(&a); err != nil {
		return sova.Agent{}, err
	}
	return a, nil
}

// GetAgent implements AgentStore.
func (s *SQLite) GetAgent(ctx context.Context, userID, agentID string) (*sova.Agent, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+sqliteAgentColumns+`, context FROM agents
		WHERE id = ? AND user_id = ?`, agentID, userID)
	a, err := scanSQLiteAgent(row, true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: agent %s: %w", agentID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get agent %s: %w", agentID, err)
	}
	return &a, nil
}

// ListAgents implements AgentStore.
func (s *SQLite) ListAgents(ctx context.Context, userID string, limit, offset int) ([]sova.Agent, error) {
	if limit <= 0 {
		limit = -1 // no limit
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqliteAgentColumns+` FROM agents WHERE user_id = ?
		ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, userID, limit, max(offset, 0))
	if err != nil {
		return nil, fmt.Errorf("store: list agents: %w", err)
	}
	defer rows.Close()
	agents := []sova.Agent{} // never nil: encodes as [] rather than null
	for rows.Next() {
		a, err := scanSQLiteAgent(rows, false)
		if err != nil {
			return nil, fmt.Errorf("store: list agents: %w", err)
		}
		agents = append(agents, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list agents: %w", err)
	}
	return agents, nil
}

// UpdateAgent implements AgentStore.
func (s *SQLite) UpdateAgent(ctx context.Context, a *sova.Agent, fromState string) error {
	r, err := encodeAgent(a)
	if err != nil {
		return fmt.Errorf("store: update agent: %w", err)
	}
	now := storedTime(time.Now())
	res, err := s.db.ExecContext(ctx, `UPDATE agents SET state = ?, iteration = ?, searches_used = ?,
		clarifications_used = ?, sources = ?, reasoning = ?, result = ?, result_sources = ?, error = ?,
		context = ?, updated_at = ?
		WHERE id = ? AND user_id = ? AND (? = '' OR state = ?)`,
		a.State, a.Iteration, a.SearchesUsed, a.ClarificationsUsed, sqliteText(r.sources), sqliteText(r.reasoning),
		a.Result, sqliteText(r.resultSources), a.Error, sqliteText(r.context), now.UnixMilli(),
		a.ID, a.UserID, fromState, fromState)
	if err != nil {
		return fmt.Errorf("store: update agent %s: %w", a.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("store: update agent %s: %w", a.ID, err)
	}
	if n == 0 {
		cur, err := s.GetAgent(ctx, a.UserID, a.ID)
		if err != nil {
			return err
		}
		return fmt.Errorf("store: update agent %s: %w: it is %s, not %s", a.ID, sova.ErrConflict, cur.State, fromState)
	}
	a.UpdatedAt = now
	return nil
}

// DeleteFinishedAgents implements AgentStore.
func (s *SQLite) DeleteFinishedAgents(ctx context.Context, before time.Time) (int, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM agents WHERE state IN (?, ?) AND updated_at < ?`,
		sova.AgentCompleted, sova.AgentFailed, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: delete finished agents: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: delete finished agents: %w", err)
	}
	return int(n), nil
}

// FailStaleAgents implements AgentStore.
func (s *SQLite) FailStaleAgents(ctx context.Context, before time.Time, reason string) (int, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE agents SET state = ?, error = ?, updated_at = ?
		WHERE state IN (?, ?) AND updated_at < ?`,
		sova.AgentFailed, reason, storedTime(time.Now()).UnixMilli(), sova.AgentInited, sova.AgentResearching, before.UnixMilli())
	if err != nil {
		return 0, fmt.Errorf("store: fail stale agents: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store: fail stale agents: %w", err)
	}
	return int(n), nil
}

// sqliteNullText binds an empty string as NULL (for optional references).
func sqliteNullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}
