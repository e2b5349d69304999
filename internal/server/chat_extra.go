package server

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/run"
)

// maxTitleChars bounds a chat title a person sets.
const maxTitleChars = 200

// renameChat answers PATCH /api/chats/{id} {"title"}: the person names the
// chat; an empty title is refused.
func (s *Server) renameChat(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Title *string `json:"title"`
	}
	if !s.decode(w, r, &body) {
		return
	}
	if body.Title == nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_title", `"title" is required`)
		return
	}
	title := strings.Join(strings.Fields(*body.Title), " ")
	if title == "" || utf8.RuneCountInString(title) > maxTitleChars {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_title",
			fmt.Sprintf("the title must have 1 to %d characters", maxTitleChars))
		return
	}
	if err := s.opt.Store.SetChatTitle(r.Context(), userID(r), r.PathValue("id"), title); err != nil {
		s.storeError(w, r, err)
		return
	}
	chat, err := s.opt.Store.GetChat(r.Context(), userID(r), r.PathValue("id"))
	if err != nil {
		s.storeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"chat": chat})
}

// exportChat answers GET /api/chats/{id}/export.md: the chat as one
// Markdown file, each question a heading, each answer with its numbered
// sources, sent as a download.
func (s *Server) exportChat(w http.ResponseWriter, r *http.Request) {
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
	md := ChatMarkdown(chat, run.CurrentVersions(msgs)) // the versions the person sees
	w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s.md"`, exportFileName(chat)))
	_, _ = w.Write([]byte(md))
}

// ChatMarkdown renders a chat as Markdown.
func ChatMarkdown(chat *sova.Chat, msgs []sova.Message) string {
	var b strings.Builder
	title := chat.Title
	if title == "" {
		title = "Sova chat"
	}
	fmt.Fprintf(&b, "# %s\n\n", oneLineText(title))
	fmt.Fprintf(&b, "_%s · %s_\n", chat.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), chat.Mode)
	for _, m := range msgs {
		switch m.Role {
		case "user":
			fmt.Fprintf(&b, "\n## %s\n\n", oneLineText(m.Content))
		default:
			text := strings.TrimSpace(m.Content)
			if text != "" {
				b.WriteString(text + "\n")
			}
			if m.Error != "" {
				fmt.Fprintf(&b, "\n> **Error:** %s\n", oneLineText(m.Error))
			}
			if len(m.Sources) > 0 {
				b.WriteString("\n**Sources**\n\n")
				for _, src := range m.Sources {
					name := src.Title
					if name == "" {
						name = src.URL
					}
					fmt.Fprintf(&b, "%d. [%s](%s)\n", src.Number, escapeLinkText(oneLineText(name)), strings.ReplaceAll(src.URL, ")", "%29"))
				}
			}
		}
	}
	return b.String()
}

func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// escapeLinkText keeps a title from closing its link early.
func escapeLinkText(s string) string {
	return strings.NewReplacer(`[`, `\[`, `]`, `\]`).Replace(s)
}

// exportFileName makes a safe file name from the chat's title.
func exportFileName(c *sova.Chat) string { return safeFileName("sova-chat-", c.Title, c.ID) }

// passage answers GET /api/passages?url=sova://spaces/…: the cited passage
// of one of the user's documents with its neighbours.
func (s *Server) passage(w http.ResponseWriter, r *http.Request) {
	if !s.spacesOr404(w) {
		return
	}
	u := r.URL.Query().Get("url")
	if u == "" {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "invalid_url", `"url" is required: a sova://spaces/… passage address`)
		return
	}
	p, err := s.opt.Spaces.Passage(r.Context(), userID(r), u)
	if err != nil {
		if errors.Is(err, sova.ErrNotFound) {
			writeError(w, http.StatusNotFound, "not_found", "passage_not_found", "no such passage in your documents")
			return
		}
		s.spaceError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"passage": p})
}
