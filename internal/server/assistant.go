package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/mcp"
	"github.com/sova-ai/sova/internal/mode/assistant"
	"github.com/sova-ai/sova/internal/run"
)

// Assistant is what the assistant's endpoints call (seed 004).
type Assistant interface {
	Supervise(ctx context.Context, req assistant.SupervisorRequest) (*assistant.SupervisorResult, error)
}

// assistantRoutes serves the planning and complex-task agents and each
// user's own MCP servers; left out when Options.Assistant is nil.
func (s *Server) assistantRoutes() {
	if s.opt.Assistant == nil {
		return
	}
	s.handle("POST /api/supervisor", s.supervise)
	s.handle("POST /api/tasks/execute", s.executeTask)
	s.handle("GET /api/tasks/{id}", s.getTask)
	s.handle("POST /api/tasks/{id}/decision", s.decideTask)
	if s.opt.MCPServers != nil {
		s.handle("GET /api/mcp/servers", s.listMCPServers)
		s.handle("POST /api/mcp/servers", s.addMCPServer)
		s.handle("DELETE /api/mcp/servers/{name}", s.deleteMCPServer)
	}
}

// supervise runs the planning agent: it reads with the person's MCP
// servers and searches, so it needs an account and counts against the
// limits like a message of the assistant.
func (s *Server) supervise(w http.ResponseWriter, r *http.Request) {
	u, ok := accountOnly(w, r, "the planning agent")
	if !ok {
		return
	}
	var req assistant.SupervisorRequest
	if !s.decode(w, r, &req) {
		return
	}
	release := s.admit(w, r, u, "assistant")
	if release == nil {
		return
	}
	defer release()
	res, err := s.opt.Assistant.Supervise(r.Context(), req)
	if err != nil {
		s.assistantError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// taskView is a complex task's run as /api/tasks answers it: its state,
// and once it has completed the agent's {success, report, subtasks}.
type taskView struct {
	RunID     string `json:"runId"`
	State     string `json:"state"`
	StreamURL string `json:"streamUrl"`
	RunURL    string `json:"runUrl"`
	Error     string `json:"error,omitempty"`
	// Question and Waiting are set while the task waits for the person:
	// Sova's question and the actions it holds, to approve or decline by
	// id (POST /api/tasks/{id}/decision).
	Question string             `json:"question,omitempty"`
	Waiting  []assistant.Action `json:"waiting,omitempty"`
	*assistant.TaskResult
}

// taskDecision is the body of POST /api/tasks/{id}/decision.
type taskDecision struct {
	Approve []string `json:"approve"`
	Decline []string `json:"decline"`
}

// executeTask starts the complex-task agent as a durable run (progress at
// /api/runs/{id}/stream, cancel and restart like any run) and answers 202
// with where to follow it; with ?wait=true it answers when the run ends,
// with the task's result. A client that leaves does not stop the run.
func (s *Server) executeTask(w http.ResponseWriter, r *http.Request) {
	if _, ok := accountOnly(w, r, "complex tasks"); !ok {
		return
	}
	var req assistant.TaskRequest
	if !s.decode(w, r, &req) {
		return
	}
	if strings.TrimSpace(req.Task) == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_request", "task is required")
		return
	}
	wait := r.URL.Query().Get("wait") == "true"
	p, err := s.opt.Service.Prepare(r.Context(), run.Request{Mode: assistant.TaskModeID, Messages: assistant.TaskMessages(req), Internal: true})
	if err != nil {
		s.runError(w, r, err, "tasks_unavailable")
		return
	}
	s.runTask(w, r, p, wait)
}

// decideTask approves or declines the actions a waiting task holds, by
// id, and the task goes on; ?wait=true answers when it ends or waits
// again.
func (s *Server) decideTask(w http.ResponseWriter, r *http.Request) {
	var d taskDecision
	if !s.decode(w, r, &d) {
		return
	}
	if len(d.Approve)+len(d.Decline) == 0 {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_decision", "name the held actions to approve or decline (approve, decline: lists of action ids)")
		return
	}
	id := r.PathValue("id")
	if _, err := s.task(r.Context(), userID(r), id); err != nil {
		s.runStoreError(w, r, err)
		return
	}
	p, err := s.opt.Service.Prepare(r.Context(), run.Request{Mode: id, Approve: d.Approve, Decline: d.Decline})
	if err != nil {
		s.runError(w, r, err, "tasks_unavailable")
		return
	}
	s.runTask(w, r, p, r.URL.Query().Get("wait") == "true")
}

// runTask starts a prepared task run and answers with where to follow it,
// or, waiting, with its state when it ends or waits for the person.
func (s *Server) runTask(w http.ResponseWriter, r *http.Request, p *run.Prepared, wait bool) {
	s.opt.Service.Start(p)
	if !wait {
		writeJSON(w, http.StatusAccepted, taskView{RunID: p.RunID, State: sova.RunRunning,
			StreamURL: "/api/runs/" + p.RunID + "/stream", RunURL: "/api/tasks/" + p.RunID})
		return
	}
	// The run ends with a finish event; following it until then is the wait.
	if err := s.opt.Service.Follow(r.Context(), p.RunID, p.StartSeq(), func(event.Event) error { return nil }); err != nil {
		if r.Context().Err() != nil {
			return // the client left; the run goes on
		}
		s.runStoreError(w, r, err)
		return
	}
	v, err := s.task(r.Context(), userID(r), p.RunID)
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	status := http.StatusOK
	if v.TaskResult == nil && v.State != sova.RunWaiting {
		status = http.StatusBadGateway
	}
	writeJSON(w, status, v)
}

// getTask answers GET /api/tasks/{id}: a complex task's state, and its
// result once completed.
func (s *Server) getTask(w http.ResponseWriter, r *http.Request) {
	v, err := s.task(r.Context(), userID(r), r.PathValue("id"))
	if err != nil {
		s.runStoreError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// task reads one of the user's complex-task runs; other runs are not
// found here.
func (s *Server) task(ctx context.Context, user, id string) (*taskView, error) {
	rn, err := s.opt.Store.GetRun(ctx, user, id)
	if err != nil {
		return nil, err
	}
	if rn.Mode != assistant.TaskModeID {
		return nil, sova.ErrNotFound
	}
	v := &taskView{RunID: rn.ID, State: rn.State, Error: rn.Error, StreamURL: "/api/runs/" + rn.ID + "/stream", RunURL: "/api/tasks/" + rn.ID}
	if rn.State == sova.RunWaiting {
		var ps struct {
			Questions []string        `json:"questions"`
			State     json.RawMessage `json:"state"`
		}
		if json.Unmarshal(rn.Pause, &ps) == nil {
			if len(ps.Questions) > 0 {
				v.Question = ps.Questions[0]
			}
			_ = json.Unmarshal(ps.State, &v.Waiting) // a task's pause keeps its held actions
		}
		return v, nil
	}
	if rn.State != sova.RunCompleted {
		return v, nil
	}
	raw, err := s.opt.Store.RunFile(ctx, rn.ID, "task/result.json")
	if err != nil {
		return nil, fmt.Errorf("reading the task's result: %w", err)
	}
	var res assistant.TaskResult
	if err := json.Unmarshal([]byte(raw), &res); err != nil {
		return nil, fmt.Errorf("reading the task's result: %w", err)
	}
	v.TaskResult = &res
	return v, nil
}

func (s *Server) assistantError(w http.ResponseWriter, r *http.Request, err error) {
	s.upstreamFailure(w, r, err, "agent_failed", "the agent")
}

// mcpServerInfo is a server as the API shows it: header values stay
// secret, only their names are shown.
type mcpServerInfo struct {
	Name        string   `json:"name"`
	URL         string   `json:"url,omitempty"`
	Kind        string   `json:"kind"` // "http" or "stdio"
	HeaderNames []string `json:"header_names,omitempty"`
	Own         bool     `json:"own"`
	CreatedAt   any      `json:"created_at,omitempty"`
}

// listMCPServers lists the administrator's servers the person may use
// and their own.
func (s *Server) listMCPServers(w http.ResponseWriter, r *http.Request) {
	user, ok := accountOnly(w, r, "MCP servers")
	if !ok {
		return
	}
	own, err := s.opt.MCPServers.MCPServers(r.Context(), user.ID)
	if err != nil {
		s.failure(w, r, err, "listing the MCP servers")
		return
	}
	out := []mcpServerInfo{}
	for _, a := range s.opt.MCPAdmin {
		if !a.Permits(user) {
			continue
		}
		kind := "http"
		if a.Stdio() {
			kind = "stdio"
		}
		out = append(out, mcpServerInfo{Name: a.Name, Kind: kind})
	}
	for _, o := range own {
		info := mcpServerInfo{Name: o.Name, URL: o.URL, Kind: "http", Own: true, CreatedAt: o.CreatedAt}
		for k := range o.Headers {
			info.HeaderNames = append(info.HeaderNames, k)
		}
		slices.Sort(info.HeaderNames)
		out = append(out, info)
	}
	writeJSON(w, http.StatusOK, map[string]any{"servers": out})
}

func (s *Server) addMCPServer(w http.ResponseWriter, r *http.Request) {
	user, ok := accountOnly(w, r, "MCP servers")
	if !ok {
		return
	}
	var in mcp.Server
	if !s.decode(w, r, &in) {
		return
	}
	if err := in.ValidateUser(); err != nil {
		s.refuse(w, r, http.StatusBadRequest, "invalid_request_error", "invalid_mcp_server", err, "the MCP server is invalid")
		return
	}
	if s.opt.MCPCheckURL != nil {
		if err := s.opt.MCPCheckURL(r.Context(), in.URL); err != nil {
			s.refuse(w, r, http.StatusBadRequest, "invalid_request_error", "mcp_server_address_refused", err, "the MCP server's address is refused")
			return
		}
	}
	if slices.ContainsFunc(s.opt.MCPAdmin, func(a mcp.Server) bool { return a.Name == in.Name }) {
		writeError(w, http.StatusConflict, "invalid_request_error", "name_taken", "the administrator's server is named "+in.Name+"; choose another name")
		return
	}
	if list, err := s.opt.MCPServers.MCPServers(r.Context(), user.ID); err == nil && len(list) >= 20 &&
		!slices.ContainsFunc(list, func(m sova.MCPServer) bool { return m.Name == in.Name }) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "too_many_servers", "at most 20 MCP servers per person")
		return
	}
	m := &sova.MCPServer{UserID: user.ID, Name: in.Name, URL: in.URL, Headers: in.Headers}
	if err := s.opt.MCPServers.PutMCPServer(r.Context(), m); err != nil {
		s.failure(w, r, err, "storing the MCP server")
		return
	}
	writeJSON(w, http.StatusCreated, mcpServerInfo{Name: m.Name, URL: m.URL, Kind: "http", Own: true, CreatedAt: m.CreatedAt})
}

func (s *Server) deleteMCPServer(w http.ResponseWriter, r *http.Request) {
	user, ok := accountOnly(w, r, "MCP servers")
	if !ok {
		return
	}
	err := s.opt.MCPServers.DeleteMCPServer(r.Context(), user.ID, r.PathValue("name"))
	switch {
	case errors.Is(err, sova.ErrNotFound):
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found", "no MCP server "+r.PathValue("name"))
	case err != nil:
		s.failure(w, r, err, "deleting the MCP server")
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}
