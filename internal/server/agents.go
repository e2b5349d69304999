package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/mode"
)

// Agents (sgr_agent runs) are listed and inspected under the paths and
// field names of SGR Agent Core, so that its clients work unchanged.

const (
	defaultAgentList = 100
	maxAgentList     = 1000
)

// agentSummary is one entry of GET /agents.
type agentSummary struct {
	ID        string    `json:"id"`
	AgentID   string    `json:"agent_id"` // the name SGR Agent Core clients read
	Task      string    `json:"task"`
	State     string    `json:"state"`
	CreatedAt time.Time `json:"created_at"`
}

// agentState is GET /agents/{id}/state.
type agentState struct {
	ID                 string          `json:"id"`
	AgentID            string          `json:"agent_id"`
	Task               string          `json:"task"`
	State              string          `json:"state"`
	ChatID             string          `json:"chat_id,omitempty"`
	Iteration          int             `json:"iteration"`
	SearchesUsed       int             `json:"searches_used"`
	ClarificationsUsed int             `json:"clarifications_used"`
	SourcesCount       int             `json:"sources_count"`
	Sources            []sova.Source   `json:"sources"`
	Reasoning          json.RawMessage `json:"current_step_reasoning"`
	Result             string          `json:"result"`
	ResultSources      []sova.Source   `json:"result_sources"`
	Error              string          `json:"error,omitempty"`
	CreatedAt          time.Time       `json:"created_at"`
	UpdatedAt          time.Time       `json:"updated_at"`
}

func (s *Server) listAgents(w http.ResponseWriter, r *http.Request) {
	limit, offset := defaultAgentList, 0
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxAgentList {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_limit",
				fmt.Sprintf("limit must be a number from 1 to %d", maxAgentList))
			return
		}
		limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_offset", "offset must be a number from 0")
			return
		}
		offset = n
	}
	agents, err := s.opt.Store.ListAgents(r.Context(), userID(r), limit, offset)
	if err != nil {
		s.failure(w, r, err, "listing the agents")
		return
	}
	out := make([]agentSummary, 0, len(agents))
	for _, a := range agents {
		out = append(out, agentSummary{ID: a.ID, AgentID: a.ID, Task: a.Task, State: a.State, CreatedAt: a.CreatedAt})
	}
	writeJSON(w, http.StatusOK, map[string]any{"agents": out, "total": len(out)})
}

func (s *Server) getAgentState(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	a, err := s.opt.Store.GetAgent(r.Context(), userID(r), id)
	if errors.Is(err, sova.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found_error", "agent_not_found", "no agent "+strconv.Quote(id)+" (finished agents are removed after SOVA_SGR_AGENT_TTL)")
		return
	}
	if err != nil {
		s.failure(w, r, err, "loading the agent")
		return
	}
	st := agentState{
		ID: a.ID, AgentID: a.ID, Task: a.Task, State: a.State, ChatID: a.ChatID,
		Iteration: a.Iteration, SearchesUsed: a.SearchesUsed, ClarificationsUsed: a.ClarificationsUsed,
		SourcesCount: len(a.Sources), Sources: a.Sources, Reasoning: a.Reasoning,
		Result: a.Result, ResultSources: a.ResultSources, Error: a.Error,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}
	if st.Sources == nil {
		st.Sources = []sova.Source{}
	}
	if st.ResultSources == nil {
		st.ResultSources = []sova.Source{}
	}
	if len(st.Reasoning) == 0 {
		st.Reasoning = json.RawMessage("null")
	}
	writeJSON(w, http.StatusOK, st)
}

// isAgentRun reports whether a run of /v1/chat/completions is an agent's:
// a new run of an agent mode, or the continuation of a stored agent. Its
// run id is then the agent id.
func (s *Server) isAgentRun(r *http.Request, model, runID string) bool {
	if m, ok := s.opt.Service.Modes().Get(model); ok {
		am, ok := m.(mode.AgentMode)
		return ok && am.KeepsAgents()
	}
	_, err := s.opt.Store.GetAgent(r.Context(), userID(r), runID)
	return err == nil
}

// closeWaitingAgent fails the agent of a run that was cancelled while it
// waited for clarification, so that the agent, like its run, no longer
// waits (and the sweeper can evict it). An agent that an answer already
// took up again is left to its run.
//
// It belongs with the run service's Cancel, through a hook of the mode
// that paused; until modes have one, the endpoint that cancels does it.
func (s *Server) closeWaitingAgent(ctx context.Context, userID, runID string) {
	a, err := s.opt.Store.GetAgent(ctx, userID, runID)
	if err != nil || a.State != sova.AgentWaiting {
		return
	}
	a.State, a.Error = sova.AgentFailed, "cancelled while waiting for clarification"
	if err := s.opt.Store.UpdateAgent(ctx, a, sova.AgentWaiting); err != nil && !errors.Is(err, sova.ErrConflict) {
		s.opt.Logger.Error("closing the agent of a cancelled run failed", "agent", runID, "err", err)
	}
}

// unknownModel answers a model that is neither a mode nor a run waiting
// for an answer: an agent that cannot be continued now says why, anything
// else lists what is valid.
func (s *Server) unknownModel(w http.ResponseWriter, r *http.Request, model string) {
	if a, err := s.opt.Store.GetAgent(r.Context(), userID(r), model); err == nil {
		writeError(w, http.StatusConflict, "invalid_request_error", "agent_not_waiting",
			fmt.Sprintf("agent %s is %s: only an agent waiting for clarification can be continued; use %q as the model to start a new one",
				a.ID, a.State, a.Mode))
		return
	}
	writeError(w, http.StatusBadRequest, "invalid_request_error", "model_not_found",
		fmt.Sprintf("unknown model %q: use one of %s, or the id of an agent (or run) waiting for your answer",
			model, strings.Join(s.opt.Service.Modes().Listed(), ", ")))
}
