package server

import (
	"crypto/subtle"
	"net/http"
	"strings"
)

// metricsRoute serves the Prometheus metrics when they are on. They need
// no user (a scraper has none) but may ask for a Bearer token; they name
// models and providers and count use, so a public address should not
// serve them without one.
func (s *Server) metricsRoute() {
	if s.opt.Metrics == nil {
		return
	}
	h, token := s.opt.Metrics, s.opt.MetricsToken
	s.mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="sova metrics"`)
				writeError(w, http.StatusUnauthorized, "authentication_error", "invalid_metrics_token",
					"GET /metrics needs the token of SOVA_METRICS_TOKEN: Authorization: Bearer <token>")
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
}
