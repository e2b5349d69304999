package server

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/sova-ai/sova/internal/llm"
	"github.com/sova-ai/sova/internal/run"
)

// searchRequest is the body of POST /api/search. Messages are AI SDK UI
// messages ({id, role, parts}) or plain {role, content}.
type searchRequest struct {
	ID       string      `json:"id"`
	Group    string      `json:"group"`
	Mode     string      `json:"mode"` // alias of group
	Messages []inMessage `json:"messages"`
	Spaces   []string    `json:"spaces"`
	// WebSearch turns the docs mode's web search on or off.
	WebSearch *bool  `json:"webSearch"`
	Timezone  string `json:"timezone"`
	Trigger   string `json:"trigger"`
	// Approve and Decline decide about the actions a waiting run holds,
	// by id (the assistant_confirmation part's actions).
	Approve []string `json:"approve"`
	Decline []string `json:"decline"`
}

type inMessage struct {
	ID      string          `json:"id"`
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
	Parts   []inPart        `json:"parts"`
}

type inPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// text returns a message's text: its text parts joined, or its content,
// which is a string or an array of OpenAI content parts.
func (m inMessage) text() string {
	var b strings.Builder
	for _, p := range m.Parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	if b.Len() > 0 {
		return b.String()
	}
	return contentText(m.Content)
}

func contentText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []inPart
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			if p.Type == "text" {
				b.WriteString(p.Text)
			}
		}
		return b.String()
	}
	return ""
}

func toLLM(msgs []inMessage) []llm.Message {
	out := make([]llm.Message, 0, len(msgs))
	for _, m := range msgs {
		role := m.Role
		if role != llm.RoleUser && role != llm.RoleAssistant && role != llm.RoleSystem {
			continue // tool messages and unknown roles carry nothing a mode uses
		}
		out = append(out, llm.Message{Role: role, Content: m.text()})
	}
	return out
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	var req searchRequest
	if !s.decode(w, r, &req) {
		return
	}
	modeID := req.Group
	if modeID == "" {
		modeID = req.Mode
	}
	if modeID == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "missing_group",
			`"group" is required: one of `+strings.Join(s.opt.Service.Modes().Listed(), ", "))
		return
	}
	modeID = s.groupOrFallback(r, modeID)
	spaceIDs, ok := s.resolveSpaces(w, r, modeID, req.Spaces) // spaces.go
	if !ok {
		return
	}
	prep, err := s.opt.Service.Prepare(r.Context(), run.Request{
		ChatID: req.ID, Mode: modeID,
		Messages: toLLM(req.Messages), Timezone: req.Timezone, Persist: true,
		Spaces: spaceIDs, WebSearch: req.WebSearch,
		Approve: req.Approve, Decline: req.Decline,
		// The AI SDK's "regenerate-message": the chat's last question
		// answered again, as a new version of its answer.
		Regenerate: req.Trigger == "regenerate-message",
		// "edit-message": the chat's last question rewritten.
		Edit: req.Trigger == "edit-message",
	})
	if err != nil {
		s.runError(w, r, err, "unknown_mode")
		return
	}
	s.opt.Service.Start(prep)
	w.Header().Set("X-Chat-ID", prep.ChatID)
	w.Header().Set("X-Run-ID", prep.RunID)
	w.Header().Set("X-Mode", modeID)
	// The run is detached: if the client goes away it goes on, and
	// GET /api/chats/{id}/stream picks it up again.
	s.streamUI(w, r, prep.RunID, prep.StartSeq(), 0)
}

// fallbackGroup is the group an unknown one runs as (seed 000 §6.1).
const fallbackGroup = "web"

// groupOrFallback returns the mode a request names, or, when the server
// has no such mode, the web group (000 §6.1): a client of another version
// or a mistyped group still gets an answer. The id of a run of the user
// is kept, since it continues a paused run.
func (s *Server) groupOrFallback(r *http.Request, id string) string {
	modes := s.opt.Service.Modes()
	if _, ok := modes.Get(id); ok {
		return id
	}
	if _, ok := modes.Get(fallbackGroup); !ok {
		return id
	}
	if _, err := s.opt.Store.GetRun(r.Context(), userID(r), id); err == nil {
		return id
	}
	return fallbackGroup
}
