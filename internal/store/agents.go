package store

import (
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
