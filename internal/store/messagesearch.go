package store

import (
	"context"
	"fmt"
	"strings"
	"unicode"

	"github.com/sova-ai/sova"
)

// Bounds of a message search: a query is a handful of words.
const (
	maxSearchTerms   = 16
	maxSearchResults = 100
)

// searchTerms keeps the letters and digits of each term, lower-cased,
// dropping empty and repeated ones: what is left is safe inside an FTS5
// string and a tsquery lexeme.
func searchTerms(terms []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, t := range terms {
		t = strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, t)
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, t)
		if len(out) == maxSearchTerms {
			break
		}
	}
	return out
}

// SearchMessages implements sova.MessageStore through the messages'
// full-text index (migration 00018): FTS5 ranked by bm25() in SQLite, a GIN
// index over to_tsvector('simple', content) ranked by ts_rank_cd in
// PostgreSQL. Each term matches as a prefix, so a stem finds its forms.
func (s *DB) SearchMessages(ctx context.Context, userID string, terms []string, exceptChat string, limit int) ([]sova.Message, error) {
	terms = searchTerms(terms)
	out := []sova.Message{}
	if len(terms) == 0 {
		return out, nil
	}
	if limit <= 0 || limit > maxSearchResults {
		limit = maxSearchResults
	}
	var q string
	var match string
	if s.d.engine == "postgres" {
		parts := make([]string, len(terms))
		for i, t := range terms {
			parts[i] = "'" + t + "':*"
		}
		match = strings.Join(parts, " | ")
		q = `SELECT m.id, m.chat_id, m.role, m.content, m.mode, m.created_at
			FROM messages m JOIN chats c ON c.id = m.chat_id,
				to_tsquery('simple', ?) query
			WHERE to_tsvector('simple', m.content) @@ query
				AND c.user_id = ? AND m.role IN ('user', 'assistant') AND m.chat_id <> ?
			ORDER BY ts_rank_cd(to_tsvector('simple', m.content), query) DESC, m.created_at DESC, m.seq DESC
			LIMIT ?`
	} else {
		parts := make([]string, len(terms))
		for i, t := range terms {
			parts[i] = `"` + t + `"*`
		}
		match = strings.Join(parts, " OR ")
		q = `SELECT m.id, m.chat_id, m.role, m.content, m.mode, m.created_at
			FROM messages_fts f JOIN messages m ON m.seq = f.rowid JOIN chats c ON c.id = m.chat_id
			WHERE messages_fts MATCH ?
				AND c.user_id = ? AND m.role IN ('user', 'assistant') AND m.chat_id <> ?
			ORDER BY bm25(messages_fts), m.created_at DESC, m.seq DESC
			LIMIT ?`
	}
	rows, err := s.query(ctx, q, match, userID, exceptChat, limit)
	if err != nil {
		return nil, fmt.Errorf("store: searching messages: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var m sova.Message
		if err := rows.Scan(&m.ID, &m.ChatID, &m.Role, &m.Content, &m.Mode, scanTime(&m.CreatedAt)); err != nil {
			return nil, fmt.Errorf("store: searching messages: %w", err)
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: searching messages: %w", err)
	}
	return out, nil
}
