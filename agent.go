package sova

import (
	"context"
	"encoding/json"
	"time"
)

// Agent states (seed 002). An agent is inited when created, researching
// while its loop runs, waiting_for_clarification after it asked the person
// something, and completed or failed when it is done.
const (
	AgentInited      = "inited"
	AgentResearching = "researching"
	AgentWaiting     = "waiting_for_clarification"
	AgentCompleted   = "completed"
	AgentFailed      = "failed"
)

// AgentFinished reports whether state is one an agent never leaves on its
// own (completed or failed), which is what eviction removes.
func AgentFinished(state string) bool {
	return state == AgentCompleted || state == AgentFailed
}

// Agent is the persisted state of a schema-guided reasoning agent: enough
// to show its progress and to continue it after a clarification or a
// restart. Its ID is the id of the run that created it, which clients send
// back as the OpenAI "model" to continue it.
type Agent struct {
	ID     string `json:"id"`
	UserID string `json:"userId"`
	ChatID string `json:"chatId,omitempty"`
	Mode   string `json:"mode"`
	Task   string `json:"task"`
	State  string `json:"state"`

	Iteration          int `json:"iteration"`
	SearchesUsed       int `json:"searchesUsed"`
	ClarificationsUsed int `json:"clarificationsUsed"`

	// Sources are the sources found so far; those read are numbered as the
	// agent's model saw them.
	Sources []Source `json:"sources,omitempty"`
	// Reasoning is the agent's latest reasoning (its NextStep without the
	// chosen tool), as JSON.
	Reasoning json.RawMessage `json:"reasoning,omitempty"`
	// Result is the final answer or report, or the pending questions while
	// the agent waits; ResultSources are the sources it cites, numbered as
	// in Result.
	Result        string   `json:"result,omitempty"`
	ResultSources []Source `json:"resultSources,omitempty"`
	Error         string   `json:"error,omitempty"`
	// Context is what the agent needs to go on (conversation, plan, pages
	// read), opaque to the store.
	Context json.RawMessage `json:"-"`

	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// AgentStore keeps agents. Methods taking a user ID are scoped by it: an
// agent of another user is ErrNotFound. The eviction methods work across
// users; they are maintenance.
type AgentStore interface {
	// CreateAgent saves a new agent. An empty ID is generated; zero
	// CreatedAt defaults to now. A taken ID is ErrConflict.
	CreateAgent(ctx context.Context, a *Agent) error
	// GetAgent returns one of the user's agents.
	GetAgent(ctx context.Context, userID, agentID string) (*Agent, error)
	// ListAgents returns the user's agents, newest first, without their
	// Context. limit <= 0 means no limit. The result is never nil.
	ListAgents(ctx context.Context, userID string, limit, offset int) ([]Agent, error)
	// UpdateAgent saves everything but the identity, task and creation time
	// of a.UserID's agent a.ID, and sets UpdatedAt to now. When fromState is
	// not empty the update happens only if the stored state is fromState,
	// and is ErrConflict otherwise: two requests cannot both claim an agent.
	UpdateAgent(ctx context.Context, a *Agent, fromState string) error
	// FailOrphanedAgents marks as failed, with reason, the agents still
	// inited or researching whose runs (the run of the agent's id and its
	// restarts) exist and none of which is running: their run was
	// interrupted by a crash. It returns how many.
	FailOrphanedAgents(ctx context.Context, reason string) (int, error)
	// DeleteFinishedAgents removes completed and failed agents last updated
	// before the given time, and returns how many.
	DeleteFinishedAgents(ctx context.Context, before time.Time) (int, error)
	// FailStaleAgents marks agents that are inited or researching but were
	// last updated before the given time as failed with the given error
	// (their run ended without saying so, e.g. the process died), and
	// returns how many.
	FailStaleAgents(ctx context.Context, before time.Time, reason string) (int, error)
}
