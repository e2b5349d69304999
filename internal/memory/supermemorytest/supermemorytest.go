// Package supermemorytest is a local stand-in for Supermemory's v3 API
// for tests: documents added, listed, searched, read and deleted by
// container tag, with Bearer authentication, in memory.
package supermemorytest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a fake Supermemory.
type Server struct {
	URL string
	key string

	mu       sync.Mutex
	docs     []doc
	next     int
	requests []string // "METHOD path"
	// Fail, when set, answers every request with this status.
	Fail int
}

type doc struct {
	ID        string   `json:"id"`
	CustomID  string   `json:"customId,omitempty"`
	Content   string   `json:"content"`
	Tags      []string `json:"containerTags"`
	Status    string   `json:"status"`
	CreatedAt string   `json:"createdAt"`
}

// New starts a fake that accepts the API key key.
func New(t testing.TB, key string) *Server {
	s := &Server{key: key}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Requests returns the requests so far, as "METHOD path".
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Contents returns the content of every stored document with its tags.
func (s *Server) Contents() map[string][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]string{}
	for _, d := range s.docs {
		out[d.Content] = d.Tags
	}
	return out
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.Path)
	if s.Fail != 0 {
		reply(w, s.Fail, map[string]any{"error": "failure", "details": "the fake was told to fail"})
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+s.key {
		reply(w, http.StatusUnauthorized, map[string]any{"error": "Unauthorized", "details": "invalid API key"})
		return
	}
	var in struct {
		Content       string   `json:"content"`
		CustomID      string   `json:"customId"`
		ContainerTags []string `json:"containerTags"`
		Q             string   `json:"q"`
		Limit         int      `json:"limit"`
	}
	if r.Method == http.MethodPost {
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			reply(w, http.StatusBadRequest, map[string]any{"error": "Invalid request", "details": err.Error()})
			return
		}
	}
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v3/documents":
		if in.Content == "" {
			reply(w, http.StatusBadRequest, map[string]any{"error": "Invalid request", "details": "content is required"})
			return
		}
		for _, d := range s.docs {
			if in.CustomID != "" && d.CustomID == in.CustomID {
				reply(w, http.StatusOK, map[string]any{"id": d.ID, "status": "done"})
				return
			}
		}
		s.next++
		d := doc{ID: fmt.Sprintf("sm_doc_%d", s.next), CustomID: in.CustomID, Content: in.Content, Tags: in.ContainerTags,
			Status: "queued", CreatedAt: time.Now().UTC().Format(time.RFC3339Nano)}
		s.docs = append(s.docs, d)
		reply(w, http.StatusOK, map[string]any{"id": d.ID, "status": d.Status})
	case r.Method == http.MethodPost && r.URL.Path == "/v3/documents/list":
		var out []doc
		for i := len(s.docs) - 1; i >= 0; i-- {
			if slices.Equal(s.docs[i].Tags, in.ContainerTags) {
				out = append(out, s.docs[i])
			}
		}
		reply(w, http.StatusOK, map[string]any{"memories": out,
			"pagination": map[string]any{"currentPage": 1, "limit": in.Limit, "totalItems": len(out), "totalPages": 1}})
	case r.Method == http.MethodPost && r.URL.Path == "/v3/search":
		type chunk struct {
			Content    string  `json:"content"`
			Score      float64 `json:"score"`
			IsRelevant bool    `json:"isRelevant"`
		}
		type result struct {
			DocumentID string         `json:"documentId"`
			Chunks     []chunk        `json:"chunks"`
			Score      float64        `json:"score"`
			Metadata   map[string]any `json:"metadata"`
			Title      string         `json:"title"`
			CreatedAt  string         `json:"createdAt"`
		}
		words := strings.Fields(strings.ToLower(in.Q))
		results := []result{}
		for _, d := range s.docs {
			if !slices.Equal(d.Tags, in.ContainerTags) {
				continue
			}
			hit := 0
			for _, w := range words {
				if strings.Contains(strings.ToLower(d.Content), w) {
					hit++
				}
			}
			if hit == 0 {
				continue
			}
			score := float64(hit) / float64(len(words))
			results = append(results, result{DocumentID: d.ID, Score: score, Title: "", CreatedAt: d.CreatedAt,
				Chunks: []chunk{{Content: d.Content, Score: score, IsRelevant: true}}})
		}
		reply(w, http.StatusOK, map[string]any{"results": results, "total": len(results), "timing": 12.5})
	case strings.HasPrefix(r.URL.Path, "/v3/documents/"):
		id := strings.TrimPrefix(r.URL.Path, "/v3/documents/")
		i := slices.IndexFunc(s.docs, func(d doc) bool { return d.ID == id || d.CustomID == id })
		if i < 0 {
			reply(w, http.StatusNotFound, map[string]any{"error": "Document not found"})
			return
		}
		switch r.Method {
		case http.MethodGet:
			reply(w, http.StatusOK, s.docs[i])
		case http.MethodDelete:
			s.docs = slices.Delete(s.docs, i, i+1)
			w.WriteHeader(http.StatusNoContent)
		default:
			reply(w, http.StatusMethodNotAllowed, map[string]any{"error": "method not allowed"})
		}
	default:
		reply(w, http.StatusNotFound, map[string]any{"error": "Not found"})
	}
}
