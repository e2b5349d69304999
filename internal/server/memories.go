package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/connectors"
	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/memory"
)

// Memories and connected sources:
//
//	GET    /api/memories?q=&limit=              the user's memories, newest first; with q, the matches, best first
//	POST   /api/memories                        remember {content}
//	DELETE /api/memories/{id}                   forget one
//	GET    /api/connectors                      the user's connected spaces
//	GET    /api/spaces/{id}/connector           a space's connector
//	POST   /api/spaces/{id}/connector           connect {kind, location, username, password}
//	DELETE /api/spaces/{id}/connector           disconnect (the documents stay)
//	POST   /api/spaces/{id}/connector/sync      sync now; answers with the connector after the sync
//
// A connector's password is write-only: answers say hasPassword.
func (s *Server) personalRoutes() {
	s.handle("GET /api/memories", s.listMemories)
	s.handle("POST /api/memories", s.addMemory)
	s.handle("DELETE /api/memories/{id}", s.deleteMemory)
	s.handle("GET /api/connectors", s.listConnectors)
	s.handle("GET /api/spaces/{id}/connector", s.getConnector)
	s.handle("POST /api/spaces/{id}/connector", s.connect)
	s.handle("DELETE /api/spaces/{id}/connector", s.disconnect)
	s.handle("POST /api/spaces/{id}/connector/sync", s.syncConnector)
}

// memoryOr404 answers 404 when this server keeps no memories, and 403 to
// an anonymous visitor (memories kept by address would be shared by
// everyone behind it).
func (s *Server) memoryOr404(w http.ResponseWriter, r *http.Request) bool {
	if s.opt.Memory == nil {
		writeError(w, http.StatusNotFound, "not_found", "not_found", "memories are not enabled on this server")
		return false
	}
	_, ok := accountOnly(w, r, "memories")
	return ok
}

func (s *Server) memoryError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, sova.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", "memory_not_found", "no such memory")
	case errors.Is(err, sova.ErrInvalid):
		s.refuse(w, r, http.StatusBadRequest, "invalid_request_error", "invalid_memory", err, "the memory could not be kept")
	case errors.Is(err, memory.ErrFull):
		s.refuse(w, r, http.StatusConflict, "invalid_request_error", "memory_full", err, "you keep too many memories; forget some first")
	default:
		// The memory provider (Supermemory) or the store: its text is
		// shown only when it is written for the person.
		s.upstreamFailure(w, r, err, "memory_failed", "memories")
	}
}

func (s *Server) listMemories(w http.ResponseWriter, r *http.Request) {
	if !s.memoryOr404(w, r) {
		return
	}
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	limit = min(max(limit, 0), 1000)
	var (
		list []sova.Memory
		err  error
	)
	if q := r.URL.Query().Get("q"); q != "" {
		if limit == 0 {
			limit = 20
		}
		list, err = s.opt.Memory.Search(r.Context(), userID(r), q, limit)
	} else {
		list, err = s.opt.Memory.List(r.Context(), userID(r), limit)
	}
	if err != nil {
		s.memoryError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"memories": list, "provider": s.opt.Memory.Name()})
}

func (s *Server) addMemory(w http.ResponseWriter, r *http.Request) {
	if !s.memoryOr404(w, r) {
		return
	}
	var body struct {
		Content string `json:"content"`
	}
	if !s.decode(w, r, &body) {
		return
	}
	m, err := s.opt.Memory.Add(r.Context(), userID(r), body.Content)
	if err != nil {
		s.memoryError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, m)
}

func (s *Server) deleteMemory(w http.ResponseWriter, r *http.Request) {
	if !s.memoryOr404(w, r) {
		return
	}
	if err := s.opt.Memory.Delete(r.Context(), userID(r), r.PathValue("id")); err != nil {
		s.memoryError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// connectorSpace resolves the {id} of a connector route, answering the
// error itself.
func (s *Server) connectorSpace(w http.ResponseWriter, r *http.Request) (*sova.Space, bool) {
	if s.opt.Connectors == nil || s.opt.Spaces == nil {
		writeError(w, http.StatusNotFound, "not_found", "not_found", "connected sources are not enabled on this server")
		return nil, false
	}
	return s.spaceOf(w, r)
}

func (s *Server) connectorError(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, sova.ErrNotFound):
		writeError(w, http.StatusNotFound, "not_found", "connector_not_found", "the space has no connected source")
	case errors.Is(err, connectors.ErrForbidden):
		s.refuse(w, r, http.StatusForbidden, "permission_error", "forbidden", err, "the connected source refused access")
	case errors.Is(err, sova.ErrInvalid):
		s.refuse(w, r, http.StatusBadRequest, "invalid_request_error", "invalid_connector", err, "cannot read the source")
	default:
		s.failure(w, r, err, "the connected source")
	}
}

func (s *Server) listConnectors(w http.ResponseWriter, r *http.Request) {
	if s.opt.Connectors == nil {
		writeError(w, http.StatusNotFound, "not_found", "not_found", "connected sources are not enabled on this server")
		return
	}
	list, err := s.opt.Connectors.List(r.Context(), userID(r))
	if err != nil {
		s.connectorError(w, r, err)
		return
	}
	for i := range list {
		s.safeSyncError(&list[i])
	}
	writeJSON(w, http.StatusOK, map[string]any{"connectors": list})
}

func (s *Server) getConnector(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.connectorSpace(w, r)
	if !ok {
		return
	}
	c, err := s.opt.Connectors.Get(r.Context(), userID(r), sp.ID)
	if err != nil {
		s.connectorError(w, r, err)
		return
	}
	s.safeSyncError(c)
	writeJSON(w, http.StatusOK, c)
}

func (s *Server) connect(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.connectorSpace(w, r)
	if !ok {
		return
	}
	var body connectors.Request
	if !s.decode(w, r, &body) {
		return
	}
	u, _ := sova.UserFrom(r.Context())
	if !s.proOnly(w, u, "Connecting a space to a source") {
		return
	}
	c, err := s.opt.Connectors.Connect(r.Context(), u, sp.ID, body)
	if err != nil {
		s.connectorError(w, r, err)
		return
	}
	s.safeSyncError(c)
	writeJSON(w, http.StatusCreated, c)
}

func (s *Server) disconnect(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.connectorSpace(w, r)
	if !ok {
		return
	}
	if err := s.opt.Connectors.Disconnect(r.Context(), userID(r), sp.ID); err != nil {
		s.connectorError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) syncConnector(w http.ResponseWriter, r *http.Request) {
	sp, ok := s.connectorSpace(w, r)
	if !ok {
		return
	}
	c, err := s.opt.Connectors.SyncNow(r.Context(), userID(r), sp.ID)
	if err != nil {
		s.connectorError(w, r, err)
		return
	}
	s.safeSyncError(c)
	writeJSON(w, http.StatusOK, c)
}

// safeSyncError keeps of a connector's last sync error what the person
// may read: the sync stored its whole text (a WebDAV library's words, the
// share's address), which stays in the log.
func (s *Server) safeSyncError(c *sova.Connector) {
	if c == nil || c.LastError == "" {
		return
	}
	if msg := errtext.ForPerson(errors.New(c.LastError)); msg != "" {
		c.LastError = msg
		return
	}
	s.opt.Logger.Debug("a connector's last sync error", "connector", c.ID, "err", c.LastError)
	c.LastError = "the last sync could not read the source; the server log has the details"
}
