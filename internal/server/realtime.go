package server

import (
	"net/http"

	"github.com/sova-ai/sova/internal/realtime"
)

// realtimeRoute serves GET /v1/realtime, the OpenAI Realtime WebSocket
// (internal/realtime), for the request's user like every /v1 route. A
// browser cannot set Authorization on a WebSocket and sends its key as
// the subprotocol "openai-insecure-api-key.<key>" instead; it is read as
// the Bearer key when no Authorization is given.
func (s *Server) realtimeRoute() {
	if s.opt.Realtime == nil {
		return
	}
	authed := s.withUser(s.opt.Realtime)
	s.mux.Handle("GET /v1/realtime", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := realtime.KeyFromProtocols(r.Header); key != "" && r.Header.Get("Authorization") == "" {
			r = r.Clone(r.Context())
			r.Header.Set("Authorization", "Bearer "+key)
		}
		authed.ServeHTTP(w, r)
	}))
}
