package server

import (
	"net/http"

	"github.com/sova-ai/sova"
)

// What needs an account, and what is a pro feature (docs/security.md,
// "Who may use what"):
//
//   - anonymous visitors are told apart only by their address, so what
//     would be kept for one (memories, MCP servers, tasks that act) would
//     be everyone's behind that address: they get none of it;
//   - connectors and custom instructions are for pro accounts and
//     administrators while SOVA_PRO_FEATURES is on (000 §6.2).

// accountOnly answers 403 to an anonymous visitor and reports whether the
// request may go on.
func accountOnly(w http.ResponseWriter, r *http.Request, what string) (sova.User, bool) {
	u, ok := sova.UserFrom(r.Context())
	if !ok {
		writeError(w, http.StatusUnauthorized, "authentication_error", "unauthenticated", "authentication required")
		return u, false
	}
	if u.Role == sova.RoleAnonymous {
		writeError(w, http.StatusForbidden, "permission_error", "sign_in_required", "sign in to use "+what+": it is not offered to anonymous visitors")
		return u, false
	}
	return u, true
}

// proFeature reports whether u may use a pro feature: always without the
// setting, and to administrators, pro accounts and the local user of an
// installation without accounts.
func (s *Server) proFeature(u sova.User) bool {
	if !s.opt.ProFeatures {
		return u.Role != sova.RoleAnonymous
	}
	return u.Role == sova.RoleAdmin || u.Role == sova.RolePro || u.ID == sova.LocalUserID && u.Role == ""
}

// proOnly answers 403 when u may not use the pro feature what.
func (s *Server) proOnly(w http.ResponseWriter, u sova.User, what string) bool {
	if s.proFeature(u) {
		return true
	}
	writeError(w, http.StatusForbidden, "permission_error", "pro_required", what+" is a pro feature on this server; ask an administrator to make your account pro")
	return false
}

// admit counts a request that runs agents outside the run service (the
// planning agent of POST /api/supervisor) against u's limits, as every
// run is counted; it answers the refusal itself and returns nil then.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, u sova.User, modeID string) (release func()) {
	if s.opt.Limits == nil || u.ID == sova.LocalUserID {
		return func() {}
	}
	release, err := s.opt.Limits.Admit(r.Context(), u, modeID)
	if err != nil {
		if !rateLimited(w, r, err) {
			s.opt.Logger.Error("counting a request against the limits failed", "user", u.ID, "err", err)
			writeError(w, http.StatusServiceUnavailable, "server_error", "limits_unavailable", "the usage limits could not be checked; try again shortly")
		}
		return nil
	}
	return release
}
