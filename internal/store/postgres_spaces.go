package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sova-ai/sova"

	"github.com/jackc/pgx/v5"
)

var _ sova.SpaceStore = (*Postgres)(nil)

const postgresSpaceColumns = `s.id, s.user_id, s.name, s.description, s.created_at, s.updated_at,
	count(d.id), coalesce(sum(d.chunk_count), 0), coalesce(sum(d.size), 0)`

const postgresSpaceFrom = ` FROM spaces s LEFT JOIN documents d ON d.space_id = s.id `

func scanPostgresSpace(row pgx.Row) (sova.Space, error) {
	var (
		s            sova.Space
		docs, chunks int64
	)
	if err := row.Scan(&s.ID, &s.UserID, &s.Name, &s.Description, &s.CreatedAt, &s.UpdatedAt, &docs, &chunks, &s.TotalBytes); err != nil {
		return sova.Space{}, err
	}
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	s.DocumentCount, s.ChunkCount = int(docs), int(chunks)
	return s, nil
}

// CreateSpace implements SpaceStore.
func (s *Postgres) CreateSpace(ctx context.Context, sp *sova.Space) error {
	if err := prepareSpace(sp, time.Now()); err != nil {
		return fmt.Errorf("store: create space: %w", err)
	}
	_, err := s.pool.Exec(ctx,
		`INSERT INTO spaces (id, user_id, name, description, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)`,
		sp.ID, sp.UserID, sp.Name, sp.Description, sp.CreatedAt, sp.UpdatedAt)
	if err != nil {
		return fmt.Errorf("store: create space %q: %w", sp.Name, postgresErr(err))
	}
	return nil
}

// GetSpace implements SpaceStore.
func (s *Postgres) GetSpace(ctx context.Context, userID, spaceID string) (*sova.Space, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+postgresSpaceColumns+postgresSpaceFrom+
		`WHERE s.id = $1 AND s.user_id = $2 GROUP BY s.id`, spaceID, userID)
	return postgresOneSpace(row, "space "+spaceID)
}

// GetSpaceByName implements SpaceStore.
func (s *Postgres) GetSpaceByName(ctx context.Context, userID, name string) (*sova.Space, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+postgresSpaceColumns+postgresSpaceFrom+
		`WHERE s.name = $1 AND s.user_id = $2 GROUP BY s.id`, name, userID)
	return postgresOneSpace(row, fmt.Sprintf("space %q", name))
}

func postgresOneSpace(row pgx.Row, what string) (*sova.Space, error) {
	sp, err := scanPostgresSpace(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: %s: %w", what, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %s: %w", what, err)
	}
	return &sp, nil
}

// ListSpaces implements SpaceStore.
func (s *Postgres) ListSpaces(ctx context.Context, userID string) ([]sova.Space, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+postgresSpaceColumns+postgresSpaceFrom+
		`WHERE s.user_id = $1 GROUP BY s.id ORDER BY s.name COLLATE "C", s.id`, userID)
	if err != nil {
		return nil, fmt.Errorf("store: list spaces: %w", err)
	}
	defer rows.Close()
	out := []sova.Space{}
	for rows.Next() {
		sp, err := scanPostgresSpace(rows)
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
func (s *Postgres) UpdateSpace(ctx context.Context, userID, spaceID, name, description string) error {
	name, err := checkSpaceName(name)
	if err != nil {
		return fmt.Errorf("store: update space %s: %w", spaceID, err)
	}
	tag, err := s.pool.Exec(ctx,
		`UPDATE spaces SET name = $1, description = $2, updated_at = $3 WHERE id = $4 AND user_id = $5`,
		name, description, storedTime(time.Now()), spaceID, userID)
	if err != nil {
		return fmt.Errorf("store: update space %s: %w", spaceID, postgresErr(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: update space %s: space %w", spaceID, sova.ErrNotFound)
	}
	return nil
}

// DeleteSpace implements SpaceStore.
func (s *Postgres) DeleteSpace(ctx context.Context, userID, spaceID string) error {
	tag, err := s.pool.Exec(ctx, `DELETE FROM spaces WHERE id = $1 AND user_id = $2`, spaceID, userID)
	if err != nil {
		return fmt.Errorf("store: delete space %s: %w", spaceID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: delete space %s: space %w", spaceID, sova.ErrNotFound)
	}
	return nil
}

func scanPostgresDocument(row pgx.Row) (sova.Document, error) {
	var (
		d      sova.Document
		chunks int32
	)
	if err := row.Scan(&d.ID, &d.SpaceID, &d.Name, &d.Title, &d.Format, &d.Size, &d.SHA256, &chunks, &d.Version, &d.CreatedAt, &d.UpdatedAt); err != nil {
		return sova.Document{}, err
	}
	d.ChunkCount = int(chunks)
	d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
	return d, nil
}

// postgresOwnSpace returns ErrNotFound unless spaceID is one of the
// user's spaces. In a transaction it locks the space's row, so that
// concurrent changes to one space's documents take turns.
func postgresOwnSpace(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, userID, spaceID string, lock bool) error {
	sql := `SELECT 1 FROM spaces WHERE id = $1 AND user_id = $2`
	if lock {
		sql += ` FOR UPDATE`
	}
	var one int
	err := q.QueryRow(ctx, sql, spaceID, userID).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("space %s: %w", spaceID, sova.ErrNotFound)
	}
	return err
}

// ListDocuments implements SpaceStore.
func (s *Postgres) ListDocuments(ctx context.Context, userID, spaceID string) ([]sova.Document, error) {
	if err := postgresOwnSpace(ctx, s.pool, userID, spaceID, false); err != nil {
		return nil, fmt.Errorf("store: list documents: %w", err)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+documentColumns+` FROM documents WHERE space_id = $1 ORDER BY name COLLATE "C"`, spaceID)
	if err != nil {
		return nil, fmt.Errorf("store: list documents of space %s: %w", spaceID, err)
	}
	defer rows.Close()
	out := []sova.Document{}
	for rows.Next() {
		d, err := scanPostgresDocument(rows)
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
func (s *Postgres) GetDocument(ctx context.Context, userID, spaceID, docID string) (*sova.Document, error) {
	row := s.pool.QueryRow(ctx, `SELECT `+prefixed("d.", documentColumns)+`
		FROM documents d JOIN spaces s ON s.id = d.space_id
		WHERE d.id = $1 AND d.space_id = $2 AND s.user_id = $3`, docID, spaceID, userID)
	d, err := scanPostgresDocument(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: document %s: %w", docID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get document %s: %w", docID, err)
	}
	return &d, nil
}

// LookupDocuments implements SpaceStore.
func (s *Postgres) LookupDocuments(ctx context.Context, userID string, docIDs []string) ([]sova.Document, error) {
	out := []sova.Document{}
	if len(docIDs) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+prefixed("d.", documentColumns)+`, s.name
		FROM documents d JOIN spaces s ON s.id = d.space_id
		WHERE s.user_id = $1 AND d.id = ANY($2)`, userID, docIDs)
	if err != nil {
		return nil, fmt.Errorf("store: look up documents: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			d      sova.Document
			chunks int32
		)
		if err := rows.Scan(&d.ID, &d.SpaceID, &d.Name, &d.Title, &d.Format, &d.Size, &d.SHA256, &chunks, &d.Version, &d.CreatedAt, &d.UpdatedAt, &d.SpaceName); err != nil {
			return nil, fmt.Errorf("store: look up documents: %w", err)
		}
		d.ChunkCount = int(chunks)
		d.CreatedAt, d.UpdatedAt = d.CreatedAt.UTC(), d.UpdatedAt.UTC()
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: look up documents: %w", err)
	}
	return out, nil
}

// PutDocuments implements SpaceStore.
func (s *Postgres) PutDocuments(ctx context.Context, userID, spaceID string, docs []*sova.Document, apply func([]sova.Document) error) error {
	if err := prepareDocuments(docs, time.Now()); err != nil {
		return fmt.Errorf("store: put documents: %w", err)
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := postgresOwnSpace(ctx, tx, userID, spaceID, true); err != nil {
			return err
		}
		var replaced []sova.Document
		for _, d := range docs {
			d.SpaceID = spaceID
			old, err := scanPostgresDocument(tx.QueryRow(ctx,
				`SELECT `+documentColumns+` FROM documents WHERE space_id = $1 AND name = $2`, spaceID, d.Name))
			switch {
			case err == nil:
				d.ID, d.CreatedAt = old.ID, old.CreatedAt
				replaced = append(replaced, old)
				_, err = tx.Exec(ctx, `UPDATE documents SET title = $1, format = $2, size = $3, sha256 = $4,
					chunk_count = $5, version = $6, updated_at = $7 WHERE id = $8`,
					d.Title, d.Format, d.Size, d.SHA256, d.ChunkCount, d.Version, d.UpdatedAt, d.ID)
			case errors.Is(err, pgx.ErrNoRows):
				_, err = tx.Exec(ctx, `INSERT INTO documents (`+documentColumns+`)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
					d.ID, spaceID, d.Name, d.Title, d.Format, d.Size, d.SHA256, d.ChunkCount, d.Version,
					d.CreatedAt, d.UpdatedAt)
			}
			if err != nil {
				return fmt.Errorf("document %q: %w", d.Name, postgresErr(err))
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE spaces SET updated_at = greatest(updated_at, $1) WHERE id = $2`,
			storedTime(time.Now()), spaceID); err != nil {
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
func (s *Postgres) DeleteDocuments(ctx context.Context, userID, spaceID string, docIDs []string, apply func([]sova.Document) error) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := postgresOwnSpace(ctx, tx, userID, spaceID, true); err != nil {
			return err
		}
		var deleted []sova.Document
		for _, id := range docIDs {
			d, err := scanPostgresDocument(tx.QueryRow(ctx,
				`DELETE FROM documents WHERE id = $1 AND space_id = $2 RETURNING `+documentColumns, id, spaceID))
			if errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("document %s: %w", id, sova.ErrNotFound)
			}
			if err != nil {
				return err
			}
			deleted = append(deleted, d)
		}
		if _, err := tx.Exec(ctx, `UPDATE spaces SET updated_at = greatest(updated_at, $1) WHERE id = $2`,
			storedTime(time.Now()), spaceID); err != nil {
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
func (s *Postgres) ForgetDocumentContent(ctx context.Context, userID, spaceID string, docIDs []string) error {
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := postgresOwnSpace(ctx, tx, userID, spaceID, true); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE documents SET sha256 = '', chunk_count = 0 WHERE space_id = $1 AND id = ANY($2)`, spaceID, docIDs)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: forget content of documents in space %s: %w", spaceID, err)
	}
	return nil
}
