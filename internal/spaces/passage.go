package spaces

import (
	"context"
	"fmt"

	"github.com/sova-ai/sova"
)

// Passage is a cited passage with the passages around it, as a reader
// opens it from a citation.
type Passage struct {
	Hit
	// Before and After are the neighbouring passages of the document (at
	// most one each), for context.
	Before *Chunk `json:"before,omitempty"`
	After  *Chunk `json:"after,omitempty"`
}

// Passage returns the passage a sova://spaces address names, when the
// document is in one of the user's spaces at the version the index holds;
// anything else (another user's document, a removed one, a chunk past the
// end) is sova.ErrNotFound.
func (s *Service) Passage(ctx context.Context, userID, rawURL string) (*Passage, error) {
	spaceID, docID, seq, err := ParsePassageURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", sova.ErrInvalid, err)
	}
	docs, err := s.store.LookupDocuments(ctx, userID, []string{docID})
	if err != nil {
		return nil, err
	}
	if len(docs) != 1 || docs[0].SpaceID != spaceID || seq > docs[0].ChunkCount {
		return nil, fmt.Errorf("passage %s: %w", rawURL, sova.ErrNotFound)
	}
	d := docs[0]
	hits, err := s.index.Chunks(ctx, spaceID, d.Version, []int{seq - 1, seq, seq + 1})
	if err != nil {
		return nil, err
	}
	p := &Passage{}
	found := false
	for i := range hits {
		h := hits[i]
		switch h.Seq {
		case seq:
			p.Hit, found = h, true
		case seq - 1:
			p.Before = &h.Chunk
		case seq + 1:
			p.After = &h.Chunk
		}
	}
	if !found {
		return nil, fmt.Errorf("passage %s: %w", rawURL, sova.ErrNotFound)
	}
	p.Document, p.Title, p.SpaceName, p.ChunkCount = d.Name, d.Title, d.SpaceName, d.ChunkCount
	p.URL = PassageURL(spaceID, docID, seq)
	return p, nil
}
