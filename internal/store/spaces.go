package store

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/sova-ai/sova"
)

// prepareSpace validates s and fills in its ID and timestamps.
func prepareSpace(s *sova.Space, now time.Time) error {
	if s == nil {
		return fmt.Errorf("%w: nil space", sova.ErrInvalid)
	}
	if s.UserID == "" {
		return fmt.Errorf("%w: space has no user", sova.ErrInvalid)
	}
	name, err := checkSpaceName(s.Name)
	if err != nil {
		return err
	}
	s.Name = name
	if s.ID == "" {
		if s.ID, err = newID(); err != nil {
			return err
		}
	}
	if s.CreatedAt.IsZero() {
		s.CreatedAt = now
	}
	if s.UpdatedAt.IsZero() {
		s.UpdatedAt = s.CreatedAt
	}
	s.CreatedAt = storedTime(s.CreatedAt)
	s.UpdatedAt = storedTime(s.UpdatedAt)
	s.DocumentCount, s.ChunkCount, s.TotalBytes = 0, 0, 0
	return nil
}

// checkSpaceName trims a space name and rejects empty or overlong ones.
func checkSpaceName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", fmt.Errorf("%w: a space needs a name", sova.ErrInvalid)
	}
	if utf8.RuneCountInString(name) > sova.MaxSpaceNameChars {
		return "", fmt.Errorf("%w: a space name has at most %d characters", sova.ErrInvalid, sova.MaxSpaceNameChars)
	}
	return name, nil
}

// prepareDocuments validates docs, fills in missing IDs and sets their
// times to now, and rejects two documents with the same name.
func prepareDocuments(docs []*sova.Document, now time.Time) error {
	now = storedTime(now)
	seen := make(map[string]bool, len(docs))
	for _, d := range docs {
		if d == nil {
			return fmt.Errorf("%w: nil document", sova.ErrInvalid)
		}
		if d.Name == "" || utf8.RuneCountInString(d.Name) > sova.MaxDocumentNameChars {
			return fmt.Errorf("%w: a document name has 1 to %d characters", sova.ErrInvalid, sova.MaxDocumentNameChars)
		}
		if seen[d.Name] {
			return fmt.Errorf("%w: document %q given twice", sova.ErrInvalid, d.Name)
		}
		seen[d.Name] = true
		if d.Size < 0 || d.ChunkCount < 0 {
			return fmt.Errorf("%w: document %q has a negative size or chunk count", sova.ErrInvalid, d.Name)
		}
		if d.Version == "" {
			return fmt.Errorf("%w: document %q has no version", sova.ErrInvalid, d.Name)
		}
		if d.ID == "" {
			id, err := newID()
			if err != nil {
				return err
			}
			d.ID = id
		}
		d.CreatedAt, d.UpdatedAt = now, now
	}
	return nil
}
