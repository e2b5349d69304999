package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sova-ai/sova"
)

var _ sova.ConnectorStore = (*DB)(nil)

const connectorColumns = `id, user_id, space_id, kind, location, username, password, created_at, last_sync_at, last_result, last_error`

func scanConnector(row interface{ Scan(...any) error }) (sova.Connector, error) {
	var (
		c      sova.Connector
		result []byte
	)
	err := row.Scan(&c.ID, &c.UserID, &c.SpaceID, &c.Kind, &c.Location, &c.Username, &c.Password,
		scanTime(&c.CreatedAt), nullTime{&c.LastSyncAt}, &result, &c.LastError)
	if err != nil {
		return c, err
	}
	if len(result) > 0 {
		if err := json.Unmarshal(result, &c.LastResult); err != nil {
			return c, fmt.Errorf("connector %s: last result: %w", c.ID, err)
		}
	}
	c.HasPassword = c.Password != ""
	return c, nil
}

// PutConnector implements sova.ConnectorStore.
func (s *DB) PutConnector(ctx context.Context, c *sova.Connector) error {
	if c == nil || c.UserID == "" || c.SpaceID == "" || c.Location == "" {
		return fmt.Errorf("store: put connector: %w: a connector needs a user, a space and a location", sova.ErrInvalid)
	}
	if c.Kind != sova.ConnectorFolder && c.Kind != sova.ConnectorWebDAV {
		return fmt.Errorf("store: put connector: %w: unknown kind %q", sova.ErrInvalid, c.Kind)
	}
	id, err := newID()
	if err != nil {
		return fmt.Errorf("store: put connector: %w", err)
	}
	c.ID, c.CreatedAt = id, storedTime(time.Now())
	c.LastSyncAt, c.LastResult, c.LastError = time.Time{}, sova.SyncResult{}, ""
	c.HasPassword = c.Password != ""
	err = s.inTx(ctx, func(tx conn) error {
		if err := ownSpace(ctx, tx, c.UserID, c.SpaceID, true); err != nil {
			return err
		}
		// A new source replaces the old one with what it saw: the next
		// sync compares the space's documents with the new source.
		if _, err := tx.exec(ctx, `DELETE FROM connectors WHERE space_id = ?`, c.SpaceID); err != nil {
			return err
		}
		_, err := tx.exec(ctx, `INSERT INTO connectors (id, user_id, space_id, kind, location, username, password, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			c.ID, c.UserID, c.SpaceID, c.Kind, c.Location, c.Username, c.Password, s.d.time(c.CreatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: connect space %s: %w", c.SpaceID, err)
	}
	return nil
}

// GetConnector implements sova.ConnectorStore.
func (s *DB) GetConnector(ctx context.Context, userID, spaceID string) (*sova.Connector, error) {
	c, err := scanConnector(s.queryRow(ctx, `SELECT `+connectorColumns+` FROM connectors WHERE space_id = ? AND user_id = ?`, spaceID, userID))
	if isNoRows(err) {
		return nil, fmt.Errorf("store: connector of space %s: %w", spaceID, sova.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: connector of space %s: %w", spaceID, err)
	}
	return &c, nil
}

// ListConnectors implements sova.ConnectorStore.
func (s *DB) ListConnectors(ctx context.Context, userID string) ([]sova.Connector, error) {
	return s.connectors(ctx, "list connectors", `SELECT `+connectorColumns+` FROM connectors WHERE user_id = ? ORDER BY created_at, id`, userID)
}

// DueConnectors implements sova.ConnectorStore.
func (s *DB) DueConnectors(ctx context.Context, before time.Time, limit int) ([]sova.Connector, error) {
	return s.connectors(ctx, "due connectors", `SELECT `+connectorColumns+` FROM connectors
		WHERE last_sync_at IS NULL OR last_sync_at < ? ORDER BY COALESCE(last_sync_at, created_at), id LIMIT ?`,
		s.d.time(storedTime(before)), limitArg(limit))
}

func (s *DB) connectors(ctx context.Context, what, q string, args ...any) ([]sova.Connector, error) {
	rows, err := s.query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	defer rows.Close()
	out := []sova.Connector{}
	for rows.Next() {
		c, err := scanConnector(rows)
		if err != nil {
			return nil, fmt.Errorf("store: %s: %w", what, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: %s: %w", what, err)
	}
	return out, nil
}

// DeleteConnector implements sova.ConnectorStore.
func (s *DB) DeleteConnector(ctx context.Context, userID, spaceID string) error {
	if err := s.execOne(ctx, "connector", `DELETE FROM connectors WHERE space_id = ? AND user_id = ?`, spaceID, userID); err != nil {
		return fmt.Errorf("store: disconnect space %s: %w", spaceID, err)
	}
	return nil
}

// SetConnectorSynced implements sova.ConnectorStore.
func (s *DB) SetConnectorSynced(ctx context.Context, connectorID string, at time.Time, res sova.SyncResult, syncErr string) error {
	b, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("store: connector %s: %w", connectorID, err)
	}
	err = s.execOne(ctx, "connector", `UPDATE connectors SET last_sync_at = ?, last_result = ?, last_error = ? WHERE id = ?`,
		s.d.time(storedTime(at)), jsonArg(b), syncErr, connectorID)
	if err != nil {
		return fmt.Errorf("store: record sync of connector %s: %w", connectorID, err)
	}
	return nil
}

// SyncedFiles implements sova.ConnectorStore.
func (s *DB) SyncedFiles(ctx context.Context, connectorID string) ([]sova.SyncedFile, error) {
	rows, err := s.query(ctx, `SELECT path, etag, size, mod_time FROM connector_files WHERE connector_id = ? ORDER BY path`+s.d.bytewise, connectorID)
	if err != nil {
		return nil, fmt.Errorf("store: synced files of connector %s: %w", connectorID, err)
	}
	defer rows.Close()
	out := []sova.SyncedFile{}
	for rows.Next() {
		var f sova.SyncedFile
		if err := rows.Scan(&f.Path, &f.ETag, &f.Size, scanTime(&f.ModTime)); err != nil {
			return nil, fmt.Errorf("store: synced files of connector %s: %w", connectorID, err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: synced files of connector %s: %w", connectorID, err)
	}
	return out, nil
}

// PutSyncedFiles implements sova.ConnectorStore.
func (s *DB) PutSyncedFiles(ctx context.Context, connectorID string, put []sova.SyncedFile, removed []string) error {
	err := s.inTx(ctx, func(tx conn) error {
		for _, f := range put {
			_, err := tx.exec(ctx, `INSERT INTO connector_files (connector_id, path, etag, size, mod_time) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (connector_id, path) DO UPDATE SET etag = excluded.etag, size = excluded.size, mod_time = excluded.mod_time`,
				connectorID, f.Path, f.ETag, f.Size, s.d.time(storedTime(f.ModTime)))
			if err != nil {
				return fmt.Errorf("file %q: %w", f.Path, err)
			}
		}
		return inChunks(removed, func(paths []any) error {
			_, err := tx.exec(ctx, `DELETE FROM connector_files WHERE connector_id = ? AND path IN `+inList(len(paths)),
				append([]any{connectorID}, paths...)...)
			return err
		})
	})
	if err != nil {
		return fmt.Errorf("store: record files of connector %s: %w", connectorID, err)
	}
	return nil
}
