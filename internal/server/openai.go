package server

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/event"
	"github.com/sova-ai/sova/internal/run"
	"github.com/sova-ai/sova/internal/wire"
)

// completionRequest is the part of OpenAI's chat-completions body Sova
// reads. Sampling fields (temperature, max_tokens, ...) are accepted and
// ignored: a mode sets its own.
type completionRequest struct {
	Model         string      `json:"model"`
	Messages      []inMessage `json:"messages"`
	Stream        bool        `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	User string `json:"user"`
	// Approve and Decline decide about the actions a waiting run (the
	// model) holds, by id: Sova's extension, sent as extra body fields.
	Approve []string `json:"approve"`
	Decline []string `json:"decline"`
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
	}
	data := []model{}
	for _, id := range s.opt.Service.Modes().Listed() {
		data = append(data, model{ID: id, Object: "model", Created: 0, OwnedBy: "sova"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	var req completionRequest
	if !s.decode(w, r, &req) {
		return
	}
	if req.Model == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "model_not_found",
			"\"model\" is required: one of "+strings.Join(s.opt.Service.Modes().Listed(), ", "))
		return
	}
	prep, err := s.opt.Service.Prepare(r.Context(), run.Request{
		Mode: req.Model, Messages: toLLM(req.Messages),
		Approve: req.Approve, Decline: req.Decline,
	})
	if errors.Is(err, run.ErrUnknownMode) {
		s.unknownModel(w, r, req.Model)
		return
	}
	if err != nil {
		s.runError(w, r, err, "model_not_found")
		return
	}
	if s.isAgentRun(r, req.Model, prep.RunID) {
		// Seed 002: the agent's id, also in every chunk's "model".
		w.Header().Set("X-Agent-ID", prep.RunID)
	}
	created := time.Now()
	id := "chatcmpl-" + prep.RunID
	// DESIGN §3: the run's id travels in "model", so a client can refer to
	// the run later.
	if !req.Stream {
		out := s.opt.Service.Execute(r.Context(), prep, event.Discard)
		if out.State == sova.RunRunning {
			// This node stopped and handed the run to another: wait for
			// its answer through the store (handoff.go).
			s.handedOffCompletion(w, r, prep, id, created)
			return
		}
		if out.Err != nil {
			s.upstreamFailure(w, r, out.Err, "run_failed", "the run")
			return
		}
		writeJSON(w, http.StatusOK, wire.Completion(id, prep.RunID, created, out.Result.Text, out.Result.FinishReason, out.Usage))
		return
	}
	includeUsage := req.StreamOptions != nil && req.StreamOptions.IncludeUsage
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Run-ID", prep.RunID)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	stream := wire.NewChunkStream(w, func() { _ = rc.Flush() }, id, prep.RunID, created, includeUsage)
	// Detached like every streamed run: a client that goes away can pick
	// it up again from GET /api/runs/{id}/stream.
	s.opt.Service.Start(prep)
	err = s.opt.Service.Follow(r.Context(), prep.RunID, prep.StartSeq(), func(e event.Event) error {
		if err := stream.Emit(s.safeEvent(prep.RunID, e)); err != nil && !errors.Is(err, wire.ErrInvalidEvent) {
			return err
		}
		return nil
	})
	var moved *run.MovedError
	if errors.As(err, &moved) {
		// The node stops and the run goes on elsewhere: the client is told
		// which run and how to follow it, not left with an empty answer.
		_ = stream.Emit(event.Event{Type: event.TypeError, Error: &event.Error{Message: moved.Error(), Code: "run_moved"}})
	}
	_ = stream.Close()
}

// handedOffCompletion answers a non-streaming completion whose run this
// node handed to another as it stopped: the answer is read from the store
// once that node ends the run; if it does not in time, 503 names the run.
func (s *Server) handedOffCompletion(w http.ResponseWriter, r *http.Request, prep *run.Prepared, id string, created time.Time) {
	ans, err := s.opt.Service.AwaitAnswer(r.Context(), prep.RunID, prep.StartSeq())
	var moved *run.MovedError
	switch {
	case errors.As(err, &moved):
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "server_error", "run_moved", moved.Error())
	case err != nil:
		s.opt.Logger.Error("reading the answer of a handed-back run failed", "run", prep.RunID, "err", err)
		writeError(w, http.StatusServiceUnavailable, "server_error", "run_moved",
			(&run.MovedError{RunID: prep.RunID}).Error())
	case ans.Err != nil:
		s.upstreamFailure(w, r, ans.Err, "run_failed", "the run")
	default:
		writeJSON(w, http.StatusOK, wire.Completion(id, prep.RunID, created, ans.Text, ans.FinishReason, ans.Usage.Usage))
	}
}
