package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/limits"
)

// UsageReader is what the admin's usage report reads (the store).
type UsageReader interface {
	limits.ReportStore
	GetAccountByName(ctx context.Context, name string) (*sova.Account, error)
}

// maxUsageDays bounds the report's window.
const maxUsageDays = 366

// adminUsage is GET /api/admin/usage?days=N&user=NAME: tokens, searches,
// runs and counted messages per user per day, for admins only.
func (s *Server) adminUsage(w http.ResponseWriter, r *http.Request) {
	u, _ := sova.UserFrom(r.Context())
	if u.Role != sova.RoleAdmin {
		writeError(w, http.StatusForbidden, "permission_error", "admin_only", "the usage report is for admins")
		return
	}
	if s.opt.Usage == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "usage_disabled", "this server keeps no usage")
		return
	}
	days := 7
	if v := r.URL.Query().Get("days"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxUsageDays {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_days", "days is a number from 1 to 366")
			return
		}
		days = n
	}
	userID := ""
	if name := r.URL.Query().Get("user"); name != "" {
		acc, err := s.opt.Usage.GetAccountByName(r.Context(), name)
		if errors.Is(err, sova.ErrNotFound) {
			writeError(w, http.StatusNotFound, "not_found", "user_not_found", "no such user")
			return
		}
		if err != nil {
			s.storeError(w, r, err)
			return
		}
		userID = acc.ID
	}
	var counter limits.Counter
	if s.opt.Limits != nil {
		counter = s.opt.Limits.Counter()
	}
	rows, err := limits.Report(r.Context(), s.opt.Usage, userID, days, time.Now(), counter)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"days": days, "usage": rows})
}
