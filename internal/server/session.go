package server

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/auth"
	"github.com/sova-ai/sova/internal/limits"
)

// sessionRoutes are sign-in, sign-out and the signed-in user. Sign-in and
// sign-out need no user; /api/me does.
func (s *Server) sessionRoutes() {
	s.mux.HandleFunc("POST /api/session", s.signIn)
	s.mux.HandleFunc("DELETE /api/session", s.signOut)
	s.handle("GET /api/me", s.me)
	s.handle("PUT /api/me", s.putSettings)         // settings.go
	s.handle("GET /api/models", s.listModels)      // settings.go
	s.handle("GET /api/admin/usage", s.adminUsage) // usage.go
}

type signInRequest struct {
	Name     string `json:"name"`
	Password string `json:"password"`
}

// signIn checks a name and password and sets the session cookie: a new
// session at every sign-in, the one the browser had before ended.
func (s *Server) signIn(w http.ResponseWriter, r *http.Request) {
	a := s.opt.Accounts
	if a == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "accounts_disabled",
			"this Sova has no sign-in (SOVA_AUTH=none): every request is the local user's")
		return
	}
	var req signInRequest
	if !s.decode(w, r, &req) {
		return
	}
	if req.Name == "" || req.Password == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_credentials", "give a name and a password")
		return
	}
	secret, u, expires, err := a.SignIn(r.Context(), req.Name, req.Password, a.Proxies().ClientIP(r))
	var th *auth.ErrThrottled
	switch {
	case errors.As(err, &th):
		w.Header().Set("Retry-After", strconv.Itoa(int(th.RetryAfter.Seconds())+1))
		writeError(w, http.StatusTooManyRequests, "rate_limit_error", "rate_limited", personOr(th, "too many sign-in attempts; try again later"))
		return
	case errors.Is(err, auth.ErrBadCredentials):
		s.opt.Logger.Info("sign-in refused", "name", quoteShort(req.Name), "ip", a.Proxies().ClientIP(r))
		writeError(w, http.StatusUnauthorized, "authentication_error", "invalid_credentials", auth.ErrBadCredentials.Error())
		return
	case err != nil:
		s.failure(w, r, err, "signing in")
		return
	}
	if c, err := r.Cookie(auth.SessionCookie); err == nil {
		_ = a.SignOut(r.Context(), c.Value) // the browser's earlier session, if any
	}
	http.SetCookie(w, s.sessionCookie(r, secret, expires))
	s.opt.Logger.Info("signed in", "user", u.Name, "ip", a.Proxies().ClientIP(r))
	writeJSON(w, http.StatusOK, map[string]any{"user": u, "expires": expires})
}

// signOut ends the browser's session on the server and clears the cookie.
func (s *Server) signOut(w http.ResponseWriter, r *http.Request) {
	if c, err := r.Cookie(auth.SessionCookie); err == nil && s.opt.Accounts != nil {
		if err := s.opt.Accounts.SignOut(r.Context(), c.Value); err != nil {
			s.failure(w, r, err, "signing out")
			return
		}
	}
	c := s.sessionCookie(r, "", time.Unix(0, 0))
	c.MaxAge = -1
	http.SetCookie(w, c)
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) sessionCookie(r *http.Request, value string, expires time.Time) *http.Cookie {
	secure := r.TLS != nil
	if s.opt.Accounts != nil {
		secure = s.opt.Accounts.Proxies().Secure(r)
	}
	return &http.Cookie{
		Name: auth.SessionCookie, Value: value, Path: "/", Expires: expires,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure,
	}
}

// meResponse is GET /api/me.
type meResponse struct {
	sova.User
	// Kind is how the request was recognised: "local" (no accounts),
	// "account" or "anonymous".
	Kind string `json:"kind"`
	// Usage is what the limits leave for today (limits.go); absent when
	// none apply.
	Usage *limits.Usage `json:"usage,omitempty"`
	// Settings are the person's own (settings.go); absent for anonymous
	// visitors.
	Settings *sova.UserSettings `json:"settings,omitempty"`
}

func (s *Server) me(w http.ResponseWriter, r *http.Request) {
	u, _ := sova.UserFrom(r.Context())
	resp := meResponse{User: u, Kind: "account"}
	switch {
	case u.ID == sova.LocalUserID:
		resp.Kind = "local"
	case u.Role == sova.RoleAnonymous:
		resp.Kind = "anonymous"
	}
	resp.Usage = s.usage(r, u)
	resp.Settings = s.settingsOf(r, u)
	writeJSON(w, http.StatusOK, resp)
}
