package memory

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/apiclient"
)

// DefaultSupermemoryURL is Supermemory's API.
const DefaultSupermemoryURL = "https://api.supermemory.ai"

// SupermemoryConfig configures the Supermemory back-end.
type SupermemoryConfig struct {
	APIKey string // SUPERMEMORY_API_KEY
	URL    string // SOVA_SUPERMEMORY_URL (default DefaultSupermemoryURL)
	// Timeout bounds one call (default apiclient.DefaultTimeout).
	Timeout time.Duration
	// HTTPClient sends the requests; nil: a client of its own.
	HTTPClient *http.Client
}

// Supermemory keeps memories in Supermemory (v3 API): each memory is a
// document tagged with its user's container tag (containerTags exact
// match), added with POST /v3/documents, found with POST /v3/search,
// listed with POST /v3/documents/list, checked with GET
// /v3/documents/{id} and deleted with DELETE /v3/documents/{id}.
type Supermemory struct {
	base   string
	key    string
	client *apiclient.Client
}

var _ Service = (*Supermemory)(nil)

// NewSupermemory returns the Supermemory back-end.
func NewSupermemory(cfg SupermemoryConfig) (*Supermemory, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("supermemory: no API key (SUPERMEMORY_API_KEY)")
	}
	base, err := apiclient.BaseURL("SOVA_SUPERMEMORY_URL", cfg.URL, DefaultSupermemoryURL)
	if err != nil {
		return nil, err
	}
	return &Supermemory{base: base, key: cfg.APIKey, client: apiclient.New(apiclient.Options{Bases: []string{base},
		Provider: "supermemory", HTTPClient: cfg.HTTPClient, Timeout: cfg.Timeout, Secrets: []string{cfg.APIKey},
		Hint: func(status int) string {
			if status == http.StatusUnauthorized || status == http.StatusForbidden {
				return "check SUPERMEMORY_API_KEY"
			}
			return ""
		},
	})}, nil
}

// Name implements Service.
func (s *Supermemory) Name() string { return "supermemory" }

// tag is the container tag of a user's memories: only letters, digits,
// '_', '-' and '.' are allowed in tags.
func tag(userID string) string {
	var b strings.Builder
	b.WriteString("sova_user_")
	for _, r := range userID {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "_%x", r)
		}
	}
	return b.String()
}

func (s *Supermemory) header() http.Header {
	return http.Header{"Authorization": {"Bearer " + s.key}}
}

type smDocument struct {
	ID            string   `json:"id"`
	Content       string   `json:"content,omitempty"`
	Summary       string   `json:"summary,omitempty"`
	Title         string   `json:"title,omitempty"`
	ContainerTags []string `json:"containerTags,omitempty"`
	CreatedAt     string   `json:"createdAt,omitempty"`
}

func (d smDocument) memory(userID string) sova.Memory {
	content := d.Content
	if content == "" {
		content = d.Summary
	}
	if content == "" {
		content = d.Title
	}
	t, _ := time.Parse(time.RFC3339Nano, d.CreatedAt)
	return sova.Memory{ID: d.ID, UserID: userID, Content: content, CreatedAt: t.UTC()}
}

// Add implements Service. The memory's own id goes as customId, so a
// retried request does not store it twice.
func (s *Supermemory) Add(ctx context.Context, userID, content string) (sova.Memory, error) {
	content, err := checkContent(content)
	if err != nil {
		return sova.Memory{}, err
	}
	id, err := uuid.NewV7()
	if err != nil {
		return sova.Memory{}, err
	}
	in := map[string]any{
		"content": content, "containerTags": []string{tag(userID)}, "customId": "sova_" + id.String(),
		"metadata": map[string]any{"source": "sova"},
	}
	var out struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := s.client.PostJSON(ctx, s.base+"/v3/documents", s.header(), in, &out); err != nil {
		return sova.Memory{}, err
	}
	if out.ID == "" {
		return sova.Memory{}, s.client.Errorf(apiclient.ErrBadResponse, nil, "the answer to adding a memory has no id")
	}
	return sova.Memory{ID: out.ID, UserID: userID, Content: content, CreatedAt: time.Now().UTC().Truncate(time.Millisecond)}, nil
}

// List implements Service.
func (s *Supermemory) List(ctx context.Context, userID string, limit int) ([]sova.Memory, error) {
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	in := map[string]any{"containerTags": []string{tag(userID)}, "limit": limit, "page": 1, "sort": "createdAt", "order": "desc"}
	var out struct {
		Memories []smDocument `json:"memories"`
	}
	if err := s.client.PostJSON(ctx, s.base+"/v3/documents/list", s.header(), in, &out); err != nil {
		return nil, err
	}
	list := make([]sova.Memory, 0, len(out.Memories))
	for _, d := range out.Memories {
		// The tag filter is the service's; checked again here, because a
		// memory of another person must never show.
		if d.ID != "" && slices.Contains(d.ContainerTags, tag(userID)) {
			list = append(list, d.memory(userID))
		}
	}
	return list, nil
}

// Search implements Service.
func (s *Supermemory) Search(ctx context.Context, userID, query string, limit int) ([]sova.Memory, error) {
	if limit <= 0 {
		limit = 10
	}
	if strings.TrimSpace(query) == "" {
		return s.List(ctx, userID, limit)
	}
	in := map[string]any{"q": query, "containerTags": []string{tag(userID)}, "limit": limit, "onlyMatchingChunks": true}
	var out struct {
		Results []struct {
			DocumentID string  `json:"documentId"`
			Score      float64 `json:"score"`
			Title      string  `json:"title"`
			CreatedAt  string  `json:"createdAt"`
			Chunks     []struct {
				Content    string  `json:"content"`
				Score      float64 `json:"score"`
				IsRelevant bool    `json:"isRelevant"`
			} `json:"chunks"`
		} `json:"results"`
	}
	if err := s.client.PostJSON(ctx, s.base+"/v3/search", s.header(), in, &out); err != nil {
		return nil, err
	}
	list := []sova.Memory{}
	for _, r := range out.Results {
		var parts []string
		for _, c := range r.Chunks {
			if c.IsRelevant || len(r.Chunks) == 1 {
				parts = append(parts, strings.TrimSpace(c.Content))
			}
		}
		content := strings.Join(parts, "\n")
		if content == "" {
			content = r.Title
		}
		if r.DocumentID == "" || content == "" {
			continue
		}
		t, _ := time.Parse(time.RFC3339Nano, r.CreatedAt)
		list = append(list, sova.Memory{ID: r.DocumentID, UserID: userID, Content: content, CreatedAt: t.UTC(), Score: r.Score})
	}
	slices.SortStableFunc(list, func(a, b sova.Memory) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return list[:min(limit, len(list))], nil
}

// Delete implements Service. The document is read first: one that is
// not tagged with the user's tag is someone else's, ErrNotFound.
func (s *Supermemory) Delete(ctx context.Context, userID, id string) error {
	if id == "" || strings.ContainsAny(id, "/?#") {
		return fmt.Errorf("memory %q: %w", id, sova.ErrNotFound)
	}
	u := s.base + "/v3/documents/" + url.PathEscape(id)
	var d smDocument
	if err := s.client.GetJSON(ctx, u, s.header(), &d); err != nil {
		if errors.Is(err, apiclient.ErrNotFound) {
			return fmt.Errorf("memory %s: %w", id, sova.ErrNotFound)
		}
		return err
	}
	if !slices.Contains(d.ContainerTags, tag(userID)) {
		return fmt.Errorf("memory %s: %w", id, sova.ErrNotFound)
	}
	if _, err := s.client.Do(ctx, http.MethodDelete, u, s.header(), nil); err != nil {
		if errors.Is(err, apiclient.ErrNotFound) {
			return fmt.Errorf("memory %s: %w", id, sova.ErrNotFound)
		}
		return err
	}
	return nil
}
