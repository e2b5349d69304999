package store

import (
	"context"
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

var _ sova.SpaceStore = (*DB)(nil)

const spaceColumns = `s.id, s.user_id, s.name, s.description, s.created_at, s.updated_at,
	COUNT(d.id), COALESCE(SUM(d.chunk_count), 0), COALESCE(SUM(d.size), 0)`

const spaceFrom = ` FROM spaces s LEFT JOIN documents d ON d.space_id = s.id `

func scanSpace(row interface{ Scan(...any) error }) (sova.Space, error) {
	var s sova.Space
	err := row.Scan(&s.ID, &s.UserID, &s.Name, &s.Description, scanTime(&s.CreatedAt), scanTime(&s.UpdatedAt),
		&s.DocumentCount, &s.ChunkCount, &s.TotalBytes)
	return s, err
}

// CreateSpace implements sova.SpaceStore.
func (s *DB) CreateSpace(ctx context.Context, sp *sova.Space) error {
	if err := prepareSpace(sp, time.Now()); err != nil {
		return fmt.Errorf("store: create space: %w", err)
	}
	_, err := s.exec(ctx,
		`INSERT INTO spaces (id, user_id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		sp.ID, sp.UserID, sp.Name, sp.Description, s.d.time(sp.CreatedAt), s.d.time(sp.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: create space %q: %w", sp.Name, err)
	}
	return nil
}

// GetSpace implements sova.SpaceStore.
func (s *DB) GetSpace(ctx context.Context, userID, spaceID string) (*sova.Space, error) {
	return s.oneSpace(ctx, "space "+spaceID, `s.id = ?`, spaceID, userID)
}

// GetSpaceByName implements sova.SpaceStore.
func (s *DB) GetSpaceByName(ctx context.Context, userID, name string) (*sova.Space, error) {
	return s.oneSpace(ctx, fmt.Sprintf("space %q", name), `s.name = ?`, name, userID)
}

// oneSpace returns the user's space where cond holds for arg.
func (s *DB) oneSpace(ctx context.Context, what, cond, arg, userID string) (*sova.Space, error) {
	sp, err := scanSpace(s.queryRow(ctx, `SELECT `+spaceColumns+spaceFrom+
		`WHERE `+cond+` AND s.user_id = ? GROUP BY s.id`, arg, userID))
	if isNoRows(err) {
		return nil, fmt.Errorf("store: %s: %w", what, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %s: %w", what, err)
	}
	return &sp, nil
}

// ListSpaces implements sova.SpaceStore.
func (s *DB) ListSpaces(ctx context.Context, userID string) ([]sova.Space, error) {
	rows, err := s.query(ctx, `SELECT `+spaceColumns+spaceFrom+
		`WHERE s.user_id = ? GROUP BY s.id ORDER BY s.name`+s.d.bytewise+`, s.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("store: list spaces: %w", err)
	}
	defer rows.Close()
	out := []sova.Space{}
	for rows.Next() {
		sp, err := scanSpace(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list spaces: %w", err)
		}
		out = append(out, sp)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list spaces: %w", err)
	}
	return out, nil
}

// UpdateSpace implements sova.SpaceStore.
func (s *DB) UpdateSpace(ctx context.Context, userID, spaceID, name, description string) error {
	name, err := checkSpaceName(name)
	if err != nil {
		return fmt.Errorf("store: update space %s: %w", spaceID, err)
	}
	err = s.execOne(ctx, "space", `UPDATE spaces SET name = ?, description = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
		name, description, s.d.time(storedTime(time.Now())), spaceID, userID)
	if err != nil {
		return fmt.Errorf("store: update space %s: %w", spaceID, err)
	}
	return nil
}

// DeleteSpace implements sova.SpaceStore.
func (s *DB) DeleteSpace(ctx context.Context, userID, spaceID string) error {
	if err := s.execOne(ctx, "space", `DELETE FROM spaces WHERE id = ? AND user_id = ?`, spaceID, userID); err != nil {
		return fmt.Errorf("store: delete space %s: %w", spaceID, err)
	}
	return nil
}

const documentColumns = `id, space_id, name, title, format, size, sha256, chunk_count, version, notice, created_at, updated_at`

// scanDocument scans documentColumns and then extra.
func scanDocument(row interface{ Scan(...any) error }, extra ...any) (sova.Document, error) {
	var d sova.Document
	dest := append([]any{&d.ID, &d.SpaceID, &d.Name, &d.Title, &d.Format, &d.Size, &d.SHA256, &d.ChunkCount, &d.Version, &d.Notice,
		scanTime(&d.CreatedAt), scanTime(&d.UpdatedAt)}, extra...)
	err := row.Scan(dest...)
	return d, err
}

// ownSpace returns ErrNotFound unless spaceID is one of the user's spaces.
// With lock, in a transaction, it locks the space's row where the engine
// locks rows, so that concurrent changes to one space's documents take
// turns (SQLite's immediate transactions already do).
func ownSpace(ctx context.Context, c conn, userID, spaceID string, lock bool) error {
	q := `SELECT 1 FROM spaces WHERE id = ? AND user_id = ?`
	if lock {
		q += c.d.forUpdate
	}
	var one int
	err := c.queryRow(ctx, q, spaceID, userID).Scan(&one)
	if isNoRows(err) {
		return fmt.Errorf("space %s: %w", spaceID, sova.ErrNotFound)
	}
	return err
}

// ListDocuments implements sova.SpaceStore.
func (s *DB) ListDocuments(ctx context.Context, userID, spaceID string) ([]sova.Document, error) {
	if err := ownSpace(ctx, s.conn, userID, spaceID, false); err != nil {
		return nil, fmt.Errorf("store: list documents: %w", err)
	}
	rows, err := s.query(ctx, `SELECT `+documentColumns+` FROM documents WHERE space_id = ? ORDER BY name`+s.d.bytewise, spaceID)
	if err != nil {
		return nil, fmt.Errorf("store: list documents of space %s: %w", spaceID, err)
	}
	defer rows.Close()
	out := []sova.Document{}
	for rows.Next() {
		d, err := scanDocument(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list documents of space %s: %w", spaceID, err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list documents of space %s: %w", spaceID, err)
	}
	return out, nil
}

// GetDocument implements sova.SpaceStore.
func (s *DB) GetDocument(ctx context.Context, userID, spaceID, docID string) (*sova.Document, error) {
	d, err := scanDocument(s.queryRow(ctx, `SELECT `+prefixed("d.", documentColumns)+`
		FROM documents d JOIN spaces s ON s.id = d.space_id
		WHERE d.id = ? AND d.space_id = ? AND s.user_id = ?`, docID, spaceID, userID))
	if isNoRows(err) {
		return nil, fmt.Errorf("store: document %s: %w", docID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get document %s: %w", docID, err)
	}
	return &d, nil
}

// LookupDocuments implements sova.SpaceStore.
func (s *DB) LookupDocuments(ctx context.Context, userID string, docIDs []string) ([]sova.Document, error) {
	out := []sova.Document{}
	err := inChunks(docIDs, func(ids []any) error {
		rows, err := s.query(ctx, `SELECT `+prefixed("d.", documentColumns)+`, s.name
			FROM documents d JOIN spaces s ON s.id = d.space_id
			WHERE s.user_id = ? AND d.id IN `+inList(len(ids)), append([]any{userID}, ids...)...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var spaceName string
			d, err := scanDocument(rows, &spaceName)
			if err != nil {
				return err
			}
			d.SpaceName = spaceName
			out = append(out, d)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: look up documents: %w", err)
	}
	return out, nil
}

// PutDocuments implements sova.SpaceStore.
func (s *DB) PutDocuments(ctx context.Context, userID, spaceID string, docs []*sova.Document, apply func([]sova.Document) error) error {
	if err := prepareDocuments(docs, time.Now()); err != nil {
		return fmt.Errorf("store: put documents: %w", err)
	}
	err := s.inTx(ctx, func(tx conn) error {
		if err := ownSpace(ctx, tx, userID, spaceID, true); err != nil {
			return err
		}
		var replaced []sova.Document
		for _, d := range docs {
			d.SpaceID = spaceID
			old, err := scanDocument(tx.queryRow(ctx,
				`SELECT `+documentColumns+` FROM documents WHERE space_id = ? AND name = ?`, spaceID, d.Name))
			switch {
			case err == nil:
				d.ID, d.CreatedAt = old.ID, old.CreatedAt
				replaced = append(replaced, old)
				_, err = tx.exec(ctx, `UPDATE documents SET title = ?, format = ?, size = ?, sha256 = ?,
					chunk_count = ?, version = ?, notice = ?, updated_at = ? WHERE id = ?`,
					d.Title, d.Format, d.Size, d.SHA256, d.ChunkCount, d.Version, d.Notice, s.d.time(d.UpdatedAt), d.ID)
			case isNoRows(err):
				_, err = tx.exec(ctx, `INSERT INTO documents (`+documentColumns+`)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					d.ID, spaceID, d.Name, d.Title, d.Format, d.Size, d.SHA256, d.ChunkCount, d.Version, d.Notice,
					s.d.time(d.CreatedAt), s.d.time(d.UpdatedAt))
			}
			if err != nil {
				return fmt.Errorf("document %q: %w", d.Name, err)
			}
		}
		if err := s.touchSpace(ctx, tx, spaceID); err != nil {
			return err
		}
		if apply != nil {
			return apply(replaced)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: put documents into space %s: %w", spaceID, err)
	}
	return nil
}

// DeleteDocuments implements sova.SpaceStore.
func (s *DB) DeleteDocuments(ctx context.Context, userID, spaceID string, docIDs []string, apply func([]sova.Document) error) error {
	err := s.inTx(ctx, func(tx conn) error {
		if err := ownSpace(ctx, tx, userID, spaceID, true); err != nil {
			return err
		}
		var deleted []sova.Document
		for _, id := range docIDs {
			d, err := scanDocument(tx.queryRow(ctx,
				`DELETE FROM documents WHERE id = ? AND space_id = ? RETURNING `+documentColumns, id, spaceID))
			if isNoRows(err) {
				return fmt.Errorf("document %s: %w", id, sova.ErrNotFound)
			}
			if err != nil {
				return err
			}
			deleted = append(deleted, d)
		}
		if err := s.touchSpace(ctx, tx, spaceID); err != nil {
			return err
		}
		if apply != nil {
			return apply(deleted)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: delete documents of space %s: %w", spaceID, err)
	}
	return nil
}

// touchSpace moves a space's UpdatedAt forward to now.
func (s *DB) touchSpace(ctx context.Context, tx conn, spaceID string) error {
	_, err := tx.exec(ctx, `UPDATE spaces SET updated_at = `+s.d.greatest+`(updated_at, ?) WHERE id = ?`,
		s.d.time(storedTime(time.Now())), spaceID)
	return err
}

// ForgetDocumentContent implements sova.SpaceStore.
func (s *DB) ForgetDocumentContent(ctx context.Context, userID, spaceID string, docIDs []string) error {
	err := s.inTx(ctx, func(tx conn) error {
		if err := ownSpace(ctx, tx, userID, spaceID, true); err != nil {
			return err
		}
		return inChunks(docIDs, func(ids []any) error {
			_, err := tx.exec(ctx, `UPDATE documents SET sha256 = '', chunk_count = 0 WHERE space_id = ? AND id IN `+inList(len(ids)),
				append([]any{spaceID}, ids...)...)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("store: forget content of documents in space %s: %w", spaceID, err)
	}
	return nil
}

// inChunks calls fn with the values in slices of at most inChunk, as
// arguments for an IN list; never with none.
func inChunks(values []string, fn func([]any) error) error {
	for start := 0; start < len(values); start += inChunk {
		part := values[start:min(start+inChunk, len(values))]
		args := make([]any, len(part))
		for i, v := range part {
			args[i] = v
		}
		if err := fn(args); err != nil {
			return err
		}
	}
	return nil
}

// prefixed qualifies each column of a comma-separated list.
func prefixed(prefix, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
