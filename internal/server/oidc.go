package server

import (
	"net/http"

	"github.com/sova-ai/sova/internal/auth"
)

// oidcRoutes are single sign-on's: what the sign-in page offers, the
// redirect to the provider and its return. None needs a user.
func (s *Server) oidcRoutes() {
	s.mux.HandleFunc("GET /api/auth/providers", s.signInProviders)
	s.mux.HandleFunc("GET /api/auth/oidc/login", s.oidcLogin)
	s.mux.HandleFunc("GET /api/auth/oidc/callback", s.oidcCallback)
}

// signInProviders tells the sign-in page how people sign in here.
func (s *Server) signInProviders(w http.ResponseWriter, _ *http.Request) {
	out := map[string]any{"password": s.opt.Accounts != nil}
	if s.opt.OIDC != nil {
		out["oidc"] = map[string]string{"name": s.opt.OIDC.Name(), "login": "/api/auth/oidc/login"}
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) oidcLogin(w http.ResponseWriter, r *http.Request) {
	if s.opt.OIDC == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "sso_disabled", "single sign-on is not configured (SOVA_OIDC_ISSUER)")
		return
	}
	to, err := s.opt.OIDC.Begin(w, r)
	if err != nil {
		s.failure(w, r, err, "starting the sign-in")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, to, http.StatusFound)
}

// oidcCallback finishes a sign-in: a new session cookie (the browser's
// earlier session ended) and back to the app; a refused sign-in goes back
// to the sign-in page, which says so.
func (s *Server) oidcCallback(w http.ResponseWriter, r *http.Request) {
	if s.opt.OIDC == nil || s.opt.Accounts == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "sso_disabled", "single sign-on is not configured (SOVA_OIDC_ISSUER)")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	s.opt.OIDC.ClearFlow(w, r)
	ip := s.opt.Accounts.Proxies().ClientIP(r)
	secret, u, expires, err := s.opt.OIDC.Finish(r.Context(), r)
	if err != nil {
		// The reason goes to the log only: it may quote the provider.
		s.opt.Logger.Warn("single sign-on refused", "ip", ip, "err", err)
		http.Redirect(w, r, "/?sso_error=1", http.StatusSeeOther)
		return
	}
	if c, err := r.Cookie(auth.SessionCookie); err == nil {
		_ = s.opt.Accounts.SignOut(r.Context(), c.Value)
	}
	http.SetCookie(w, s.sessionCookie(r, secret, expires))
	s.opt.Logger.Info("signed in", "user", u.Name, "ip", ip, "via", "oidc")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
