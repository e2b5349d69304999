package server

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/sova-ai/sova"
)

func (s *Server) listChats(w http.ResponseWriter, r *http.Request) {
	if q := r.URL.Query().Get("q"); q != "" {
		s.searchChats(w, r, q) // chatsearch.go
		return
	}
	limit, offset := 50, 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_limit", "limit must be a number from 1 to 500")
			return
		}
		limit = n
	}
	if v := r.URL.Query().Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_offset", "offset must be a number of at least 0")
			return
		}
		offset = n
	}
	chats, err := s.opt.Store.ListChats(r.Context(), userID(r), limit, offset)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if chats == nil {
		chats = []sova.Chat{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"chats": chats})
}

func (s *Server) getChat(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	chat, err := s.opt.Store.GetChat(r.Context(), userID(r), id)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	msgs, err := s.opt.Store.ListMessages(r.Context(), userID(r), id)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	if msgs == nil {
		msgs = []sova.Message{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"chat": chat, "messages": msgs})
}

func (s *Server) deleteChat(w http.ResponseWriter, r *http.Request) {
	// The service stops the chat's runs first: they stop paying the model
	// and write nothing into the deleted chat.
	if err := s.opt.Service.DeleteChat(r.Context(), r.PathValue("id")); err != nil {
		s.storeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) storeError(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, sova.ErrNotFound) {
		writeError(w, http.StatusNotFound, "not_found", "chat_not_found", "no such chat")
		return
	}
	s.failure(w, r, err, "the store")
}
