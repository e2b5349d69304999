package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sova-ai/sova"

	"github.com/jackc/pgx/v5"
)

var _ sova.AgentStore = (*Postgres)(nil)

// CreateAgent implements AgentStore.
func (s *Postgres) CreateAgent(ctx context.Context, a *sova.Agent) error {
	if err := prepareAgent(a, time.Now()); err != nil {
		return fmt.Errorf("store: create agent: %w", err)
	}
	r, err := encodeAgent(a)
	if err != nil {
		return fmt.Errorf("store: create agent: %w", err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO agents (id, user_id, chat_id, mode, task, state,
		iteration, searches_used, clarifications_used, sources, reasoning, result, result_sources,
		error, context, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`,
		a.ID, a.UserID, pgNullText(a.ChatID), a.Mode, a.Task, a.State,
		a.Iteration, a.SearchesUsed, a.ClarificationsUsed, r.sources, r.reasoning,
		a.Result, r.resultSources, a.Error, r.context, a.CreatedAt, a.UpdatedAt)
	if err != nil {
		return fmt.Errorf("store: create agent %s: %w", a.ID, postgresErr(err))
	}
	return nil
}

const postgresAgentColumns = `id, user_id, coalesce(chat_id, ''), mode, task, state, iteration, searches_used,
	clarifications_used, sources, reasoning, result, result_sources, error, created_at, updated_at`

// scanPostgresAgent scans postgresAgentColumns, plus context when withContext.
func scanPostgresAgent(row pgx.Row, withContext bool) (sova.Agent, error) {
	var (
		a sova.Agent
		r agentRow
	)
	dest := []any{&a.ID, &a.UserID, &a.ChatID, &a.Mode, &a.Task, &a.State, &a.Iteration, &a.SearchesUsed,
		&a.ClarificationsUsed, &r.sources, &r.reasoning, &a.Result, &r.resultSources, &a.Error, &a.CreatedAt, &a.UpdatedAt}
	if withContext {
		dest = append(dest, &r.context)
	}
	if err := row.Scan(dest...); err != nil {
		return sova.Agent{}, err
	}
	a.CreatedAt = a.CreatedAt.UTC()
	a.UpdatedAt = a.UpdatedAt.UTC()
	if err := r.decode(&a); err != nil {
		return sova.Agent{}, err
	}
	return a, nil
}

// GetAgent implements AgentStore.
func (s *Postgres) GetAgent(ctx context.Context, userID, agentID string) (*sova.Agent, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+postgresAgentColumns+`, context FROM agents
		WHERE id = $1 AND user_id = $2`, agentID, userID)
	a, err := scanPostgresAgent(row, true)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: agent %s: %w", agentID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get agent %s: %w", agentID, err)
	}
	return &a, nil
}

// ListAgents implements AgentStore.
func (s *Postgres) ListAgents(ctx context.Context, userID string, limit, offset int) ([]sova.Agent, error) {
	var lim *int64 // NULL: no limit
	if limit > 0 {
		l := int64(limit)
		lim = &l
	}
	rows, err := s.pool.Query(ctx, `SELECT `+postgresAgentColumns+` FROM agents WHERE user_id = $1
		ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, userID, lim, int64(max(offset, 0)))
	if err != nil {
		return nil, fmt.Errorf("store: list agents: %w", err)
	}
	defer rows.Close()
	agents := []sova.Agent{} // never nil: encodes as [] rather than null
	for rows.Next() {
		a, err := scanPostgresAgent(rows, false)
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
func (s *Postgres) UpdateAgent(ctx context.Context, a *sova.Agent, fromState string) error {
	r, err := encodeAgent(a)
	if err != nil {
		return fmt.Errorf("store: update agent: %w", err)
	}
	now := storedTime(time.Now())
	tag, err := s.pool.Exec(ctx, `UPDATE agents SET state = $1, iteration = $2, searches_used = $3,
		clarifications_used = $4, sources = $5, reasoning = $6, result = $7, result_sources = $8, error = $9,
		context = $10, updated_at = $11
		WHERE id = $12 AND user_id = $13 AND ($14 = '' OR state = $14)`,
		a.State, a.Iteration, a.SearchesUsed, a.ClarificationsUsed, r.sources, r.reasoning,
		a.Result, r.resultSources, a.Error, r.context, now, a.ID, a.UserID, fromState)
	if err != nil {
		return fmt.Errorf("store: update agent %s: %w", a.ID, err)
	}
	if tag.RowsAffected() == 0 {
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
func (s *Postgres) DeleteFinishedAgents(ctx context.Context, before time.Time) (int, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM agents WHERE state IN ($1, $2) AND updated_at < $3`,
		sova.AgentCompleted, sova.AgentFailed, before)
	if err != nil {
		return 0, fmt.Errorf("store: delete finished agents: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// FailStaleAgents implements AgentStore.
func (s *Postgres) FailStaleAgents(ctx context.Context, before time.Time, reason string) (int, error) {
	tag, err := s.pool.Exec(ctx, `UPDATE agents SET state = $1, error = $2, updated_at = $3
		WHERE state IN ($4, $5) AND updated_at < $6`,
		sova.AgentFailed, reason, storedTime(time.Now()), sova.AgentInited, sova.AgentResearching, before)
	if err != nil {
		return 0, fmt.Errorf("store: fail stale agents: %w", err)
	}
	return int(tag.RowsAffected()), nil
}

// pgNullText binds an empty string as NULL (for optional references).
func pgNullText(s string) any {
	if s == "" {
		return nil
	}
	return s
}
