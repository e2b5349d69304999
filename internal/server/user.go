package server

import (
	"errors"
	"net/http"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/auth"
)

// handle registers a route that acts for a user: withUser asks the
// Authenticator whom the request is for before the handler runs. Every
// route but the health check and the browser UI's files goes through it.
func (s *Server) handle(pattern string, h http.HandlerFunc) {
	s.mux.Handle(pattern, s.withUser(h))
}

// withUser is the one place that learns whom a request acts for: it puts
// the user in the request's context (sova.WithUser), where handlers, runs
// and modes read it. A request without a user is answered 401.
func (s *Server) withUser(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.opt.Auth.Authenticate(r)
		if err == nil && u.ID == "" {
			err = auth.ErrUnauthenticated
		}
		switch {
		case err == nil:
			next.ServeHTTP(w, r.WithContext(sova.WithUser(r.Context(), u)))
		case errors.Is(err, auth.ErrUnauthenticated):
			w.Header().Set("WWW-Authenticate", `Bearer realm="sova"`)
			s.refuse(w, r, http.StatusUnauthorized, "authentication_error", "unauthenticated", err, auth.ErrUnauthenticated.Error())
		default:
			s.failure(w, r, err, "telling who this request is for")
		}
	})
}

// userID is the id of the user the request acts for, as withUser put it in
// the context.
func userID(r *http.Request) string {
	u, _ := sova.UserFrom(r.Context())
	return u.ID
}
