package server

import (
	"net/http"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/rank"
)

// maxSearchChats bounds the chats a content search answers.
const maxSearchChats = 50

// searchChats answers GET /api/chats?q=…: the person's chats whose
// messages contain the words of q (the messages' full-text index), best
// match first. A store without the index answers none.
func (s *Server) searchChats(w http.ResponseWriter, r *http.Request, q string) {
	chats := []sova.Chat{}
	ms, ok := s.opt.Store.(sova.MessageStore)
	terms := rank.Tokenize(q)
	if !ok || len(terms) == 0 {
		writeJSON(w, http.StatusOK, map[string]any{"chats": chats})
		return
	}
	msgs, err := ms.SearchMessages(r.Context(), userID(r), terms, "", 4*maxSearchChats)
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	seen := map[string]bool{}
	for _, m := range msgs {
		if seen[m.ChatID] || len(chats) >= maxSearchChats {
			continue
		}
		seen[m.ChatID] = true
		c, err := s.opt.Store.GetChat(r.Context(), userID(r), m.ChatID)
		if err != nil {
			continue // deleted meanwhile
		}
		chats = append(chats, *c)
	}
	writeJSON(w, http.StatusOK, map[string]any{"chats": chats})
}
