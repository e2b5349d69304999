package server

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/run"
)

// Share links (SOVA_SHARE_LINKS): a chat readable, read-only, by anyone
// with its link, until its owner revokes it.
//
//	POST   /api/chats/{id}/shares             a new link; the answer holds its URL, shown once
//	GET    /api/chats/{id}/shares             the chat's links (without their secrets)
//	DELETE /api/chats/{id}/shares/{shareId}   revoke a link
//	GET    /api/shared/{secret}               the shared chat, for anyone with the link
//
// The page /s/{secret} (ui.go) draws the shared chat. Off (nil
// Options.Shares), every one of these answers 404.
func (s *Server) shareRoutes() {
	s.handle("POST /api/chats/{id}/shares", s.createShare)
	s.handle("GET /api/chats/{id}/shares", s.listShares)
	s.handle("DELETE /api/chats/{id}/shares/{shareId}", s.deleteShare)
	// For anyone: the link's secret is the permission.
	s.mux.HandleFunc("GET /api/shared/{secret}", s.sharedChat)
}

// shareID is what the store keeps of a link's secret.
func shareID(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func (s *Server) sharesOr404(w http.ResponseWriter, r *http.Request) bool {
	if s.opt.Shares == nil {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found",
			"share links are off on this server (SOVA_SHARE_LINKS=true turns them on)")
		return false
	}
	return true
}

func (s *Server) createShare(w http.ResponseWriter, r *http.Request) {
	if !s.sharesOr404(w, r) {
		return
	}
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand never fails (Go 1.24)
	secret := base64.RawURLEncoding.EncodeToString(b[:])
	l := &sova.ShareLink{ID: shareID(secret), ChatID: r.PathValue("id"), UserID: userID(r)}
	if err := s.opt.Shares.AddShareLink(r.Context(), l, s.opt.MaxShareLinks); err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": l.ID, "chatId": l.ChatID, "createdAt": l.CreatedAt, "url": "/s/" + secret})
}

func (s *Server) listShares(w http.ResponseWriter, r *http.Request) {
	if !s.sharesOr404(w, r) {
		return
	}
	// A chat that is not the person's is a 404, not an empty list.
	if _, err := s.opt.Store.GetChat(r.Context(), userID(r), r.PathValue("id")); err != nil {
		s.storeError(w, r, err)
		return
	}
	links, err := s.opt.Shares.ShareLinks(r.Context(), userID(r), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"shares": links})
}

func (s *Server) deleteShare(w http.ResponseWriter, r *http.Request) {
	if !s.sharesOr404(w, r) {
		return
	}
	if err := s.opt.Shares.DeleteShareLink(r.Context(), userID(r), r.PathValue("id"), r.PathValue("shareId")); err != nil {
		s.storeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// sharedMessage is what a shared chat shows of a message: the text and
// the sources, nothing of the person, their documents or the runs.
type sharedMessage struct {
	Role      string         `json:"role"`
	Content   string         `json:"content"`
	Error     string         `json:"error,omitempty"`
	Sources   []sharedSource `json:"sources,omitempty"`
	CreatedAt time.Time      `json:"createdAt"`
}

type sharedSource struct {
	Number int    `json:"number"`
	Title  string `json:"title,omitempty"`
	URL    string `json:"url,omitempty"` // web pages only: a document's address names the person's space
}

func (s *Server) sharedChat(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	if !s.sharesOr404(w, r) {
		return
	}
	gone := func() {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found", "this link opens no chat: it was revoked, or the chat deleted")
	}
	l, err := s.opt.Shares.ShareLink(r.Context(), shareID(r.PathValue("secret")))
	if err != nil {
		gone()
		return
	}
	chat, err := s.opt.Store.GetChat(r.Context(), l.UserID, l.ChatID)
	if err != nil {
		gone()
		return
	}
	msgs, err := s.opt.Store.ListMessages(r.Context(), l.UserID, l.ChatID)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	out := []sharedMessage{}
	for _, m := range run.CurrentVersions(msgs) { // the versions the owner sees
		sm := sharedMessage{Role: m.Role, Content: m.Content, Error: m.Error, CreatedAt: m.CreatedAt}
		for _, src := range m.Sources {
			ss := sharedSource{Number: src.Number, Title: src.Title}
			if u, err := url.Parse(src.URL); err == nil && (u.Scheme == "http" || u.Scheme == "https") {
				ss.URL = src.URL
			}
			if ss.Title == "" && ss.URL == "" {
				ss.Title = "document"
			}
			sm.Sources = append(sm.Sources, ss)
		}
		out = append(out, sm)
	}
	writeJSON(w, http.StatusOK, map[string]any{"title": strings.TrimSpace(chat.Title), "createdAt": chat.CreatedAt, "messages": out})
}
