package spaces

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// URLScheme is the scheme of a document passage's address:
//
//	sova://spaces/<space id>/documents/<document id>#chunk-<seq>
//
// The path mirrors the API (/api/spaces/{id}/documents/{docId}), and the
// fragment names the chunk, 1-based, so a citation points at the passage.
const URLScheme = "sova"

// PassageURL is the citable address of a chunk.
func PassageURL(spaceID, docID string, seq int) string {
	return fmt.Sprintf("%s://spaces/%s/documents/%s#chunk-%d", URLScheme, url.PathEscape(spaceID), url.PathEscape(docID), seq)
}

// ParsePassageURL reads an address made by PassageURL.
func ParsePassageURL(raw string) (spaceID, docID string, seq int, err error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != URLScheme || u.Host != "spaces" {
		return "", "", 0, fmt.Errorf("not a %s://spaces address: %q", URLScheme, raw)
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/"), "/")
	if len(parts) != 3 || parts[1] != "documents" || parts[0] == "" || parts[2] == "" {
		return "", "", 0, fmt.Errorf("malformed passage address %q", raw)
	}
	n, ok := strings.CutPrefix(u.Fragment, "chunk-")
	seq, convErr := strconv.Atoi(n)
	if !ok || convErr != nil || seq < 1 {
		return "", "", 0, fmt.Errorf("passage address %q names no chunk", raw)
	}
	return parts[0], parts[2], seq, nil
}

// ErrEmptyQuery is returned for a search without words.
var ErrEmptyQuery = errors.New("the search query is empty")

// DefaultSearchLimit is the number of hits when none is asked for.
const DefaultSearchLimit = 10

// snippetChars is the length of a hit's snippet.
const snippetChars = 240

// Search finds passages in the given spaces (IDs). Only documents that
// belong to the user and that the store currently lists are returned: an
// index ahead of the store (a change whose commit failed, or a crash)
// shows nothing the space does not hold. Each hit has its document,
// position, a snippet around the words of the query and its URL.
func (s *Service) Search(ctx context.Context, userID string, spaceIDs []string, text string, limit int) ([]Hit, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, ErrEmptyQuery
	}
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	if len(spaceIDs) == 0 {
		return []Hit{}, nil
	}
	var vec []float32
	if s.embed != nil {
		vs, err := s.embed.Embed(ctx, []string{text})
		switch {
		case err == nil && len(vs) == 1:
			vec = vs[0]
		case ctx.Err() != nil:
			return nil, ctx.Err()
		default:
			// Keyword search still answers when the embedding model does not.
			s.log.Warn("embedding the query failed; searching by keywords only", "err", err)
		}
	}
	// A few extra hits make up for any the store check drops.
	hits, err := s.index.Search(ctx, Query{Spaces: spaceIDs, Text: text, Vector: vec, Limit: limit + 5})
	if err != nil {
		return nil, err
	}
	if len(hits) == 0 {
		return []Hit{}, nil
	}
	ids := make([]string, 0, len(hits))
	seen := map[string]bool{}
	for _, h := range hits {
		if !seen[h.DocumentID] {
			seen[h.DocumentID] = true
			ids = append(ids, h.DocumentID)
		}
	}
	docs, err := s.store.LookupDocuments(ctx, userID, ids)
	if err != nil {
		return nil, err
	}
	byID := make(map[string]int, len(docs))
	for i, d := range docs {
		byID[d.ID] = i
	}
	terms := s.queryTerms(text)
	out := make([]Hit, 0, min(limit, len(hits)))
	for _, h := range hits {
		i, ok := byID[h.DocumentID]
		if !ok || docs[i].SpaceID != h.SpaceID || docs[i].Version != h.Version {
			continue
		}
		d := docs[i]
		h.Document, h.Title, h.SpaceName, h.ChunkCount = d.Name, d.Title, d.SpaceName, d.ChunkCount
		h.Snippet = s.snippet(h.Text, terms)
		h.URL = PassageURL(h.SpaceID, h.DocumentID, h.Seq)
		out = append(out, h)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// Position describes where a hit sits, for people: "chunk 3 of 12,
// page 4, Part > Section".
func (h Hit) Position() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chunk %d", h.Seq)
	if h.ChunkCount > 0 {
		fmt.Fprintf(&b, " of %d", h.ChunkCount)
	}
	if h.Page > 0 {
		fmt.Fprintf(&b, ", page %d", h.Page)
	}
	if h.Heading != "" {
		b.WriteString(", " + h.Heading)
	}
	return b.String()
}

// queryTerms is the set of index terms of a query.
func (s *Service) queryTerms(q string) map[string]bool {
	terms := map[string]bool{}
	s.terms.terms([]byte(q), func(_, _, _ int, t []byte) { terms[string(t)] = true })
	return terms
}

// snippet returns the stretch of text of about snippetChars characters
// that holds the most distinct query terms, cut at word boundaries.
func (s *Service) snippet(text string, terms map[string]bool) string {
	type match struct {
		start, end int
		term       string
	}
	var matches []match
	s.terms.terms([]byte(text), func(a, b, _ int, t []byte) {
		if terms[string(t)] {
			matches = append(matches, match{a, b, string(t)})
		}
	})
	width := snippetChars * 2 // bytes: most text is one or two bytes a character
	start := 0
	if len(matches) > 0 {
		best, bestDistinct, bestCount := 0, 0, 0
		for i := range matches {
			distinct := map[string]bool{}
			count := 0
			for j := i; j < len(matches) && matches[j].end-matches[i].start <= width; j++ {
				distinct[matches[j].term] = true
				count++
			}
			if len(distinct) > bestDistinct || (len(distinct) == bestDistinct && count > bestCount) {
				best, bestDistinct, bestCount = i, len(distinct), count
			}
		}
		// Some words of context before the first match.
		start = max(0, matches[best].start-width/6)
	}
	return window(text, start, snippetChars)
}

// window returns about n characters of text from byte offset start,
// widened to word boundaries, with ellipses where text was cut.
func window(text string, start, n int) string {
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	if start > 0 {
		// Back to the start of the word.
		for start > 0 {
			r, size := utf8.DecodeLastRuneInString(text[:start])
			if unicode.IsSpace(r) {
				break
			}
			start -= size
		}
	}
	end, count := start, 0
	for end < len(text) && count < n {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
		count++
	}
	if end < len(text) {
		if i := strings.LastIndexFunc(text[start:end], unicode.IsSpace); i > 0 {
			end = start + i
		}
	}
	out := strings.Join(strings.Fields(text[start:end]), " ")
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "…"
	}
	return out
}
