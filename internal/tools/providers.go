package tools

import (
	"context"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/fetch"
	"github.com/sova-ai/sova/internal/spaces"
)

// PageReader reads a web page into Markdown (*fetch.Fetcher, or the web
// cache in front of it).
type PageReader interface {
	Fetch(ctx context.Context, url string) (*fetch.Page, error)
}

// DocumentSearcher finds passages in a person's document spaces.
// *spaces.Service implements it.
type DocumentSearcher interface {
	// Spaces lists the user's spaces with their document counts.
	Spaces(ctx context.Context, userID string) ([]sova.Space, error)
	// Search finds passages in the given spaces (IDs) of the user.
	Search(ctx context.Context, userID string, spaceIDs []string, text string, limit int) ([]spaces.Hit, error)
}

// PassageSource is the citable source of a document passage. Its Kind
// tells it from web pages; its URL (sova://spaces/…#chunk-N) names the
// passage.
func PassageSource(h spaces.Hit) sova.Source {
	title := h.Document
	if h.Title != "" && h.Title != h.Document {
		title = h.Title + " (" + h.Document + ")"
	}
	if h.Heading != "" {
		title += " — " + h.Heading
	}
	return sova.Source{URL: h.URL, Title: title, Snippet: h.Snippet, Kind: sova.SourceDocument}
}
