package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/errtext"
	"github.com/sova-ai/sova/internal/lang"
)

// ModelLister lists the models the endpoint serves (GET /api/models);
// *llm.Client is one.
type ModelLister interface {
	ListModels(ctx context.Context) ([]string, error)
	ModelName() string
}

// Limits of what a person may save.
const (
	maxInstructionsChars = 4000
	maxModelNameChars    = 200
)

// settingsRequest is PUT /api/me: the fields sent replace the saved ones,
// the others stay as they are.
type settingsRequest struct {
	CustomInstructions *string            `json:"custom_instructions"`
	Language           *string            `json:"language"`
	TimeZone           *string            `json:"time_zone"`
	Model              *string            `json:"model"`
	Preferences        *map[string]string `json:"preferences"`
}

// settingsOf reads the user's settings for GET /api/me; nil when this
// server keeps none or the store fails (logged).
func (s *Server) settingsOf(r *http.Request, u sova.User) *sova.UserSettings {
	if s.opt.Settings == nil || u.Role == sova.RoleAnonymous {
		return nil
	}
	us, err := s.opt.Settings.UserSettings(r.Context(), u.ID)
	if err != nil {
		s.opt.Logger.Error("reading settings failed", "user", u.ID, "err", err)
		return nil
	}
	return &us
}

// putSettings saves the person's settings and answers as GET /api/me.
func (s *Server) putSettings(w http.ResponseWriter, r *http.Request) {
	u, _ := sova.UserFrom(r.Context())
	if s.opt.Settings == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "settings_disabled", "this server keeps no settings")
		return
	}
	if u.Role == sova.RoleAnonymous {
		writeError(w, http.StatusForbidden, "permission_error", "sign_in_required", "sign in to keep settings: anonymous visitors share their address")
		return
	}
	var req settingsRequest
	if !s.decode(w, r, &req) {
		return
	}
	us, err := s.opt.Settings.UserSettings(r.Context(), u.ID)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if req.CustomInstructions != nil && strings.TrimSpace(*req.CustomInstructions) != us.CustomInstructions &&
		strings.TrimSpace(*req.CustomInstructions) != "" && !s.proOnly(w, u, "Custom instructions") {
		return
	}
	if req.CustomInstructions != nil {
		us.CustomInstructions = strings.TrimSpace(*req.CustomInstructions)
	}
	if req.Language != nil {
		us.Language = strings.ToLower(strings.TrimSpace(*req.Language))
	}
	if req.TimeZone != nil {
		us.TimeZone = strings.TrimSpace(*req.TimeZone)
	}
	if req.Model != nil {
		us.Model = strings.TrimSpace(*req.Model)
	}
	if req.Preferences != nil {
		us.Preferences = *req.Preferences
	}
	if msg := s.checkSettings(r.Context(), us, req.Model != nil); msg != "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_settings", msg)
		return
	}
	if err := s.opt.Settings.PutUserSettings(r.Context(), u.ID, us); err != nil {
		s.storeError(w, r, err)
		return
	}
	s.me(w, r)
}

// checkSettings says what is wrong with settings ("" when nothing). A
// model newly chosen must be one the endpoint lists, when it answers.
func (s *Server) checkSettings(ctx context.Context, us sova.UserSettings, modelChanged bool) string {
	if n := len([]rune(us.CustomInstructions)); n > maxInstructionsChars {
		return fmt.Sprintf("custom instructions are %d characters; the limit is %d", n, maxInstructionsChars)
	}
	if us.Language != "" {
		if _, ok := lang.Parse(us.Language); !ok {
			return fmt.Sprintf("unknown language %q: give an ISO 639-1 code such as en, ru, de, or none to answer in the question's language", us.Language)
		}
	}
	if us.TimeZone != "" {
		if _, err := time.LoadLocation(us.TimeZone); err != nil || strings.EqualFold(us.TimeZone, "local") {
			return fmt.Sprintf("unknown time zone %q: give an IANA name such as Europe/Berlin", us.TimeZone)
		}
	}
	if len(us.Preferences) > 100 {
		return "at most 100 preferences"
	}
	for k, v := range us.Preferences {
		if len(k) > 200 || len(v) > 2000 {
			return "a preference's name is at most 200 bytes and its value 2000"
		}
	}
	if us.Model == "" || !modelChanged {
		return ""
	}
	if len(us.Model) > maxModelNameChars || strings.IndexFunc(us.Model, unicode.IsControl) >= 0 {
		return "a model name is at most 200 printable characters"
	}
	if s.opt.Models != nil {
		ids, err := s.opt.Models.ListModels(ctx)
		if err == nil && len(ids) > 0 && !slices.Contains(ids, us.Model) && us.Model != s.opt.Models.ModelName() {
			return fmt.Sprintf("the model endpoint does not serve %q; GET /api/models lists what it does", us.Model)
		}
	}
	return ""
}

// listModels is GET /api/models: the models the endpoint serves, for the
// settings page's picker, and the configured default.
func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	if s.opt.Models == nil {
		writeJSON(w, http.StatusOK, map[string]any{"models": []string{}, "default": ""})
		return
	}
	ids, err := s.opt.Models.ListModels(r.Context())
	out := map[string]any{"models": ids, "default": s.opt.Models.ModelName()}
	if err != nil {
		// The picker still offers the default; the reason is the model
		// client's own text, which names no address, where it is the
		// person's.
		s.opt.Logger.Warn("listing the endpoint's models failed", "err", errtext.Detail(err))
		out["models"], out["error"] = []string{}, personOr(err, "the model endpoint did not list its models")
	}
	if ids == nil {
		out["models"] = []string{}
	}
	writeJSON(w, http.StatusOK, out)
}
