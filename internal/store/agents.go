package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
)

// validAgentState reports whether s is one of the Agent states.
func validAgentState(s string) bool {
	switch s {
	case sova.AgentInited, sova.AgentResearching, sova.AgentWaiting, sova.AgentCompleted, sova.AgentFailed:
		return true
	}
	return false
}

// agentRow is an Agent's JSON columns, encoded; nil for SQL NULL.
type agentRow struct {
	sources, reasoning, resultSources, context []byte
}

// prepareAgent validates a new agent and fills in its ID and timestamps.
func prepareAgent(a *sova.Agent, now time.Time) error {
	if a == nil {
		return fmt.Errorf("%w: nil agent", sova.ErrInvalid)
	}
	if a.UserID == "" || a.Mode == "" {
		return fmt.Errorf("%w: an agent needs a user and a mode", sova.ErrInvalid)
	}
	if a.ID == "" {
		id, err := newID()
		if err != nil {
			return err
		}
		a.ID = id
	}
	if a.CreatedAt.IsZero() {
		a.CreatedAt = now
	}
	a.CreatedAt = storedTime(a.CreatedAt)
	a.UpdatedAt = storedTime(now)
	return nil
}

// encodeAgent validates the mutable fields and encodes the JSON ones.
func encodeAgent(a *sova.Agent) (agentRow, error) {
	var r agentRow
	if !validAgentState(a.State) {
		return r, fmt.Errorf("%w: agent state %q", sova.ErrInvalid, a.State)
	}
	if a.Iteration < 0 || a.SearchesUsed < 0 || a.ClarificationsUsed < 0 {
		return r, fmt.Errorf("%w: negative agent counter", sova.ErrInvalid)
	}
	var err error
	if a.Sources != nil {
		if r.sources, err = json.Marshal(a.Sources); err != nil {
			return r, fmt.Errorf("encode agent sources: %w", err)
		}
	}
	if a.ResultSources != nil {
		if r.resultSources, err = json.Marshal(a.ResultSources); err != nil {
			return r, fmt.Errorf("encode agent result sources: %w", err)
		}
	}
	if len(a.Reasoning) > 0 {
		if !json.Valid(a.Reasoning) {
			return r, fmt.Errorf("%w: agent reasoning is not valid JSON", sova.ErrInvalid)
		}
		r.reasoning = a.Reasoning
	}
	if len(a.Context) > 0 {
		if !json.Valid(a.Context) {
			return r, fmt.Errorf("%w: agent context is not valid JSON", sova.ErrInvalid)
		}
		r.context = a.Context
	}
	return r, nil
}

// decode fills the JSON fields of a from r.
func (r agentRow) decode(a *sova.Agent) error {
	if len(r.sources) > 0 {
		if err := json.Unmarshal(r.sources, &a.Sources); err != nil {
			return fmt.Errorf("decode sources of agent %s: %w", a.ID, err)
		}
	}
	if len(r.resultSources) > 0 {
		if err := json.Unmarshal(r.resultSources, &a.ResultSources); err != nil {
			return fmt.Errorf("decode result sources of agent %s: %w", a.ID, err)
		}
	}
	if len(r.reasoning) > 0 {
		a.Reasoning = json.RawMessage(r.reasoning)
	}
	if len(r.context) > 0 {
		a.Context = json.RawMessage(r.context)
	}
	return nil
}

var _ sova.AgentStore = (*DB)(nil)

// CreateAgent implements sova.AgentStore.
func (s *DB) CreateAgent(ctx context.Context, a *sova.Agent) error {
	if err := prepareAgent(a, time.Now()); err != nil {
		return fmt.Errorf("store: create agent: %w", err)
	}
	r, err := encodeAgent(a)
	if err != nil {
		return fmt.Errorf("store: create agent: %w", err)
	}
	_, err = s.exec(ctx, `INSERT INTO agents (id, user_id, chat_id, mode, task, state,
		iteration, searches_used, clarifications_used, sources, reasoning, result, result_sources,
		error, context, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.UserID, nullString(a.ChatID), a.Mode, a.Task, a.State,
		a.Iteration, a.SearchesUsed, a.ClarificationsUsed, jsonArg(r.sources), jsonArg(r.reasoning),
		a.Result, jsonArg(r.resultSources), a.Error, jsonArg(r.context),
		s.d.time(a.CreatedAt), s.d.time(a.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: create agent %s: %w", a.ID, err)
	}
	return nil
}

const agentColumns = `id, user_id, coalesce(chat_id, ''), mode, task, state, iteration, searches_used,
	clarifications_used, sources, reasoning, result, result_sources, error, created_at, updated_at`

// scanAgent scans agentColumns, plus context when withContext.
func scanAgent(row interface{ Scan(...any) error }, withContext bool) (sova.Agent, error) {
	var (
		a sova.Agent
		r agentRow
	)
	dest := []any{&a.ID, &a.UserID, &a.ChatID, &a.Mode, &a.Task, &a.State, &a.Iteration, &a.SearchesUsed,
		&a.ClarificationsUsed, &r.sources, &r.reasoning, &a.Result, &r.resultSources, &a.Error,
		scanTime(&a.CreatedAt), scanTime(&a.UpdatedAt)}
	if withContext {
		dest = append(dest, &r.context)
	}
	if err := row.Scan(dest...); err != nil {
		return sova.Agent{}, err
	}
	if err := r.decode(&a); err != nil {
		return sova.Agent{}, err
	}
	return a, nil
}

// GetAgent implements sova.AgentStore.
func (s *DB) GetAgent(ctx context.Context, userID, agentID string) (*sova.Agent, error) {
	a, err := scanAgent(s.queryRow(ctx, `SELECT `+agentColumns+`, context FROM agents
		WHERE id = ? AND user_id = ?`, agentID, userID), true)
	if isNoRows(err) {
		return nil, fmt.Errorf("store: agent %s: %w", agentID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get agent %s: %w", agentID, err)
	}
	return &a, nil
}

// ListAgents implements sova.AgentStore.
func (s *DB) ListAgents(ctx context.Context, userID string, limit, offset int) ([]sova.Agent, error) {
	rows, err := s.query(ctx, `SELECT `+agentColumns+` FROM agents WHERE user_id = ?
		ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`, userID, limitArg(limit), max(offset, 0))
	if err != nil {
		return nil, fmt.Errorf("store: list agents: %w", err)
	}
	defer rows.Close()
	agents := []sova.Agent{} // never nil: encodes as [] rather than null
	for rows.Next() {
		a, err := scanAgent(rows, false)
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

// UpdateAgent implements sova.AgentStore.
func (s *DB) UpdateAgent(ctx context.Context, a *sova.Agent, fromState string) error {
	r, err := encodeAgent(a)
	if err != nil {
		return fmt.Errorf("store: update agent: %w", err)
	}
	now := storedTime(time.Now())
	res, err := s.exec(ctx, `UPDATE agents SET state = ?, iteration = ?, searches_used = ?,
		clarifications_used = ?, sources = ?, reasoning = ?, result = ?, result_sources = ?, error = ?,
		context = ?, updated_at = ?
		WHERE id = ? AND user_id = ? AND (? = '' OR state = ?)`,
		a.State, a.Iteration, a.SearchesUsed, a.ClarificationsUsed, jsonArg(r.sources), jsonArg(r.reasoning),
		a.Result, jsonArg(r.resultSources), a.Error, jsonArg(r.context), s.d.time(now),
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

// DeleteFinishedAgents implements sova.AgentStore.
func (s *DB) DeleteFinishedAgents(ctx context.Context, before time.Time) (int, error) {
	n, err := rowsChanged(s.exec(ctx, `DELETE FROM agents WHERE state IN (?, ?) AND updated_at < ?`,
		sova.AgentCompleted, sova.AgentFailed, s.d.time(before)))
	if err != nil {
		return 0, fmt.Errorf("store: delete finished agents: %w", err)
	}
	return int(n), nil
}

// FailOrphanedAgents implements sova.AgentStore.
func (s *DB) FailOrphanedAgents(ctx context.Context, reason string) (int, error) {
	n, err := rowsChanged(s.exec(ctx, `UPDATE agents SET state = ?, error = ?, updated_at = ?
		WHERE state IN (?, ?)
		  AND EXISTS (SELECT 1 FROM runs r WHERE r.user_id = agents.user_id AND (r.id = agents.id OR r.origin_id = agents.id))
		  AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.user_id = agents.user_id AND r.state = ?
			  AND (r.id = agents.id OR r.origin_id = agents.id))`,
		sova.AgentFailed, reason, s.d.time(storedTime(time.Now())), sova.AgentInited, sova.AgentResearching, sova.RunRunning))
	if err != nil {
		return 0, fmt.Errorf("store: fail orphaned agents: %w", err)
	}
	return int(n), nil
}

// FailStaleAgents implements sova.AgentStore.
func (s *DB) FailStaleAgents(ctx context.Context, before time.Time, reason string) (int, error) {
	n, err := rowsChanged(s.exec(ctx, `UPDATE agents SET state = ?, error = ?, updated_at = ?
		WHERE state IN (?, ?) AND updated_at < ?`,
		sova.AgentFailed, reason, s.d.time(storedTime(time.Now())), sova.AgentInited, sova.AgentResearching, s.d.time(before)))
	if err != nil {
		return 0, fmt.Errorf("store: fail stale agents: %w", err)
	}
	return int(n), nil
}
