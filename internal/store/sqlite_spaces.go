package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sova-ai/sova"
)

var _ sova.SpaceStore = (*SQLite)(nil)

const sqliteSpaceColumns = `s.id, s.user_id, s.name, s.description, s.created_at, s.updated_at,
	COUNT(d.id), COALESCE(SUM(d.chunk_count), 0), COALESCE(SUM(d.size), 0)`

const sqliteSpaceFrom = ` FROM spaces s LEFT JOIN documents d ON d.space_id = s.id `

func scanSQLiteSpace(row interface{ Scan(...any) error }) (sova.Space, error) {
	var (
		s                sova.Space
		created, updated int64
		docs, chunks     int64
	)
	if err := row.Scan(&s.ID, &s.UserID, &s.Name, &s.Description, &created, &updated, &docs, &chunks, &s.TotalBytes); err != nil {
		return sova.Space{}, err
	}
	s.CreatedAt = time.UnixMilli(created).UTC()
	s.UpdatedAt = time.UnixMilli(updated).UTC()
	s.DocumentCount, s.ChunkCount = int(docs), int(chunks)
	return s, nil
}

// CreateSpace implements SpaceStore.
func (s *SQLite) CreateSpace(ctx context.Context, sp *sova.Space) error {
	if err := prepareSpace(sp, time.Now()); err != nil {
		return fmt.Errorf("store: create space: %w", err)
	}
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO spaces (id, user_id, name, description, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)`,
		sp.ID, sp.UserID, sp.Name, sp.Description, sp.CreatedAt.UnixMilli(), sp.UpdatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: create space %q: %w", sp.Name, sqliteErr(err))
	}
	return nil
}

// GetSpace implements SpaceStore.
func (s *SQLite) GetSpace(ctx context.Context, userID, spaceID string) (*sova.Space, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+sqliteSpaceColumns+sqliteSpaceFrom+
		`WHERE s.id = ? AND s.user_id = ? GROUP BY s.id`, spaceID, userID)
	return sqliteOneSpace(row, "space "+spaceID)
}

// GetSpaceByName implements SpaceStore.
func (s *SQLite) GetSpaceByName(ctx context.Context, userID, name string) (*sova.Space, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+sqliteSpaceColumns+sqliteSpaceFrom+
		`WHERE s.name = ? AND s.user_id = ? GROUP BY s.id`, name, userID)
	return sqliteOneSpace(row, fmt.Sprintf("space %q", name))
}

func sqliteOneSpace(row *sql.Row, what string) (*sova.Space, error) {
	sp, err := scanSQLiteSpace(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: %s: %w", what, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %s: %w", what, err)
	}
	return &sp, nil
}

// ListSpaces implements SpaceStore.
func (s *SQLite) ListSpaces(ctx context.Context, userID string) ([]sova.Space, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+sqliteSpaceColumns+sqliteSpaceFrom+
		`WHERE s.user_id = ? GROUP BY s.id ORDER BY s.name, s.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("store: list spaces: %w", err)
	}
	defer rows.Close()
	out := []sova.Space{}
	for rows.Next() {
		sp, err := scanSQLiteSpace(rows)
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

// UpdateSpace implements SpaceStore.
func (s *SQLite) UpdateSpace(ctx context.Context, userID, spaceID, name, description string) error {
	name, err := checkSpaceName(name)
	if err != nil {
		return fmt.Errorf("store: update space %s: %w", spaceID, err)
	}
	res, err := s.db.ExecContext(ctx,
		`UPDATE spaces SET name = ?, description = ?, updated_at = ? WHERE id = ? AND user_id = ?`,
		name, description, time.Now().UnixMilli(), spaceID, userID)
	if err != nil {
		return fmt.Errorf("store: update space %s: %w", spaceID, sqliteErr(err))
	}
	if err := oneSpaceRow(res); err != nil {
		return fmt.Errorf("store: update space %s: %w", spaceID, err)
	}
	return nil
}

// DeleteSpace implements SpaceStore.
func (s *SQLite) DeleteSpace(ctx context.Context, userID, spaceID string) error {
	res, err := s.db.ExecContext(ctx, `DELETE FROM spaces WHERE id = ? AND user_id = ?`, spaceID, userID)
	if err != nil {
		return fmt.Errorf("store: delete space %s: %w", spaceID, err)
	}
	if err := oneSpaceRow(res); err != nil {
		return fmt.Errorf("store: delete space %s: %w", spaceID, err)
	}
	return nil
}

func oneSpaceRow(res sql.Result) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("space %w", sova.ErrNotFound)
	}
	return nil
}

const documentColumns = `id, space_id, name, title, format, size, sha256, chunk_count, version, created_at, updated_at`

func scanSQLiteDocument(row interface{ Scan(...any) error }) (sova.Document, error) {
	var (
		d                sova.Document
		chunks           int64
		created, updated int64
	)
	if err := row.Scan(&d.ID, &d.SpaceID, &d.Name, &d.Title, &d.Format, &d.Size, &d.SHA256, &chunks, &d.Version, &created, &updated); err != nil {
		return sova.Document{}, err
	}
	d.ChunkCount = int(chunks)
	d.CreatedAt = time.UnixMilli(created).UTC()
	d.UpdatedAt = time.UnixMilli(updated).UTC()
	return d, nil
}

// ownSpace returns ErrNotFound unless spaceID is one of the user's spaces.
func sqliteOwnSpace(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, userID, spaceID string) error {
	var one int
	err := q.QueryRowContext(ctx, `SELECT 1 FROM spaces WHERE id = ? AND user_id = ?`, spaceID, userID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("space %s: %w", spaceID, sova.ErrNotFound)
	}
	return err
}

// ListDocuments implements SpaceStore.
func (s *SQLite) ListDocuments(ctx context.Context, userID, spaceID string) ([]sova.Document, error) {
	if err := sqliteOwnSpace(ctx, s.db, userID, spaceID); err != nil {
		return nil, fmt.Errorf("store: list documents: %w", err)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+documentColumns+` FROM documents WHERE space_id = ? ORDER BY name`, spaceID)
	if err != nil {
		return nil, fmt.Errorf("store: list documents of space %s: %w", spaceID, err)
	}
	defer rows.Close()
	out := []sova.Document{}
	for rows.Next() {
		d, err := scanSQLiteDocument(rows)
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

// GetDocument implements SpaceStore.
func (s *SQLite) GetDocument(ctx context.Context, userID, spaceID, docID string) (*sova.Document, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+prefixed("d.", documentColumns)+`
		FROM documents d JOIN spaces s ON s.id = d.space_id
		WHERE d.id = ? AND d.space_id = ? AND s.user_id = ?`, docID, spaceID, userID)
	d, err := scanSQLiteDocument(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: document %s: %w", docID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get document %s: %w", docID, err)
	}
	return &d, nil
}

// LookupDocuments implements SpaceStore.
func (s *SQLite) LookupDocuments(ctx context.Context, userID string, docIDs []string) ([]sova.Document, error) {
	out := []sova.Document{}
	// SQLite limits the number of parameters; search hits are far fewer.
	for start := 0; start < len(docIDs); start += 500 {
		ids := docIDs[start:min(start+500, len(docIDs))]
		args := make([]any, 0, len(ids)+1)
		args = append(args, userID)
		for _, id := range ids {
			args = append(args, id)
		}
		rows, err := s.db.QueryContext(ctx, `SELECT `+prefixed("d.", documentColumns)+`, s.name
			FROM documents d JOIN spaces s ON s.id = d.space_id
			WHERE s.user_id = ? AND d.id IN (?`+strings.Repeat(", ?", len(ids)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("store: look up documents: %w", err)
		}
		for rows.Next() {
			var (
				d                sova.Document
				chunks           int64
				created, updated int64
			)
			if err := rows.Scan(&d.ID, &d.SpaceID, &d.Name, &d.Title, &d.Format, &d.Size, &d.SHA256, &chunks, &d.Version, &created, &updated, &d.SpaceName); err != nil {
				rows.Close()
				return nil, fmt.Errorf("store: look up documents: %w", err)
			}
			d.ChunkCount = int(chunks)
			d.CreatedAt = time.UnixMilli(created).UTC()
			d.UpdatedAt = time.UnixMilli(updated).UTC()
			out = append(out, d)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("store: look up documents: %w", err)
		}
	}
	return out, nil
}

// PutDocuments implements SpaceStore.
func (s *SQLite) PutDocuments(ctx context.Context, userID, spaceID string, docs []*sova.Document, apply func([]sova.Document) error) error {
	if err := prepareDocuments(docs, time.Now()); err != nil {
		return fmt.Errorf("store: put documents: %w", err)
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := sqliteOwnSpace(ctx, tx, userID, spaceID); err != nil {
			return err
		}
		var replaced []sova.Document
		for _, d := range docs {
			d.SpaceID = spaceID
			old, err := scanSQLiteDocument(tx.QueryRowContext(ctx,
				`SELECT `+documentColumns+` FROM documents WHERE space_id = ? AND name = ?`, spaceID, d.Name))
			switch {
			case err == nil:
				d.ID, d.CreatedAt = old.ID, old.CreatedAt
				replaced = append(replaced, old)
				_, err = tx.ExecContext(ctx, `UPDATE documents SET title = ?, format = ?, size = ?, sha256 = ?,
					chunk_count = ?, version = ?, updated_at = ? WHERE id = ?`,
					d.Title, d.Format, d.Size, d.SHA256, d.ChunkCount, d.Version, d.UpdatedAt.UnixMilli(), d.ID)
			case errors.Is(err, sql.ErrNoRows):
				_, err = tx.ExecContext(ctx, `INSERT INTO documents (`+documentColumns+`)
					VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
					d.ID, spaceID, d.Name, d.Title, d.Format, d.Size, d.SHA256, d.ChunkCount, d.Version,
					d.CreatedAt.UnixMilli(), d.UpdatedAt.UnixMilli())
			}
			if err != nil {
				return fmt.Errorf("document %q: %w", d.Name, sqliteErr(err))
			}
		}
		if _, err := tx.ExecContext(ctx, `UPDATE spaces SET updated_at = MAX(updated_at, ?) WHERE id = ?`,
			time.Now().UnixMilli(), spaceID); err != nil {
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

// DeleteDocuments implements SpaceStore.
func (s *SQLite) DeleteDocuments(ctx context.Context, userID, spaceID string, docIDs []string, apply func([]sova.Document) error) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := sqliteOwnSpace(ctx, tx, userID, spaceID); err != nil {
			return err
		}
		var deleted []sova.Document
		for _, id := range docIDs {
			d, err := scanSQLiteDocument(tx.QueryRowContext(ctx,
				`SELECT `+documentColumns+` FROM documents WHERE id = ? AND space_id = ?`, id, spaceID))
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("document %s: %w", id, sova.ErrNotFound)
			}
			if err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE id = ?`, id); err != nil {
				return err
			}
			deleted = append(deleted, d)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE spaces SET updated_at = MAX(updated_at, ?) WHERE id = ?`,
			time.Now().UnixMilli(), spaceID); err != nil {
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

// ForgetDocumentContent implements SpaceStore.
func (s *SQLite) ForgetDocumentContent(ctx context.Context, userID, spaceID string, docIDs []string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := sqliteOwnSpace(ctx, tx, userID, spaceID); err != nil {
			return err
		}
		for _, id := range docIDs {
			if _, err := tx.ExecContext(ctx, `UPDATE documents SET sha256 = '', chunk_count = 0 WHERE id = ? AND space_id = ?`, id, spaceID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: forget content of documents in space %s: %w", spaceID, err)
	}
	return nil
}

// inTx runs fn in a transaction, committing when it returns nil.
func (s *SQLite) inTx(ctx context.Context, fn func(*sql.Tx) error) (err error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// prefixed qualifies each column of a comma-separated list.
func prefixed(prefix, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
