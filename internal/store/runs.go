package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/sova-ai/sova"

	"github.com/jackc/pgx/v5"
)

func prepareRun(r *sova.Run, now time.Time) error {
	if r.UserID == "" || r.Mode == "" || r.State == "" {
		return fmt.Errorf("%w: a run needs a user, a mode and a state", sova.ErrInvalid)
	}
	if r.ID == "" {
		id, err := newID()
		if err != nil {
			return err
		}
		r.ID = id
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = now
	}
	r.CreatedAt = storedTime(r.CreatedAt)
	r.UpdatedAt = storedTime(now)
	return nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func usageJSON(u *sova.Usage) ([]byte, error) {
	if u == nil {
		return nil, nil
	}
	return json.Marshal(u)
}

// runRow holds the columns that need decoding.
type runRow struct {
	chatID       sql.NullString
	input, pause []byte
	usage        []byte
}

func (rr runRow) decode(r *sova.Run) error {
	r.ChatID = rr.chatID.String
	if len(rr.input) > 0 {
		r.Input = json.RawMessage(rr.input)
	}
	if len(rr.pause) > 0 {
		r.Pause = json.RawMessage(rr.pause)
	}
	if len(rr.usage) > 0 {
		r.Usage = &sova.Usage{}
		if err := json.Unmarshal(rr.usage, r.Usage); err != nil {
			return fmt.Errorf("decode usage of run %s: %w", r.ID, err)
		}
	}
	r.HasReport = r.Report != ""
	return nil
}

const runColumns = `id, user_id, chat_id, mode, state, question, input, pause, error, report, message_id, usage, last_seq, created_at, updated_at`

// --- SQLite ---

var _ sova.RunStore = (*SQLite)(nil)

// CreateRun implements RunStore.
func (s *SQLite) CreateRun(ctx context.Context, r *sova.Run) error {
	if err := prepareRun(r, time.Now()); err != nil {
		return fmt.Errorf("store: create run: %w", err)
	}
	u, err := usageJSON(r.Usage)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO runs (`+runColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID, r.UserID, nullString(r.ChatID), r.Mode, r.State, r.Question, sqliteText(r.Input), sqliteText(r.Pause),
		r.Error, r.Report, r.MessageID, sqliteText(u), r.LastSeq, r.CreatedAt.UnixMilli(), r.UpdatedAt.UnixMilli())
	if err != nil {
		return fmt.Errorf("store: create run: %w", sqliteErr(err))
	}
	return nil
}

// UpdateRun implements RunStore.
func (s *SQLite) UpdateRun(ctx context.Context, r *sova.Run) error {
	u, err := usageJSON(r.Usage)
	if err != nil {
		return err
	}
	r.UpdatedAt = storedTime(time.Now())
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET state=?, pause=?, error=?, report=?, message_id=?, usage=?, last_seq=?, input=?, updated_at=?
		WHERE id=? AND user_id=?`,
		r.State, sqliteText(r.Pause), r.Error, r.Report, r.MessageID, sqliteText(u), r.LastSeq, sqliteText(r.Input), r.UpdatedAt.UnixMilli(), r.ID, r.UserID)
	if err != nil {
		return fmt.Errorf("store: update run: %w", sqliteErr(err))
	}
	if err := oneRow(res); err != nil {
		return fmt.Errorf("store: update run %s: %w", r.ID, err)
	}
	r.HasReport = r.Report != ""
	return nil
}

func scanSQLiteRun(row interface{ Scan(...any) error }) (*sova.Run, error) {
	var r sova.Run
	var rr runRow
	var input, pause, usage sql.NullString
	var created, updated int64
	if err := row.Scan(&r.ID, &r.UserID, &rr.chatID, &r.Mode, &r.State, &r.Question, &input, &pause, &r.Error, &r.Report,
		&r.MessageID, &usage, &r.LastSeq, &created, &updated); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, sova.ErrNotFound
		}
		return nil, err
	}
	rr.input, rr.pause, rr.usage = []byte(input.String), []byte(pause.String), []byte(usage.String)
	r.CreatedAt, r.UpdatedAt = time.UnixMilli(created).UTC(), time.UnixMilli(updated).UTC()
	return &r, rr.decode(&r)
}

// GetRun implements RunStore.
func (s *SQLite) GetRun(ctx context.Context, userID, runID string) (*sova.Run, error) {
	r, err := scanSQLiteRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id=? AND user_id=?`, runID, userID))
	if err != nil {
		return nil, fmt.Errorf("store: get run %s: %w", runID, err)
	}
	return r, nil
}

// LatestRun implements RunStore.
func (s *SQLite) LatestRun(ctx context.Context, userID, chatID string) (*sova.Run, error) {
	r, err := scanSQLiteRun(s.db.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE chat_id=? AND user_id=?
		ORDER BY created_at DESC, rowid DESC LIMIT 1`, chatID, userID))
	if err != nil {
		return nil, fmt.Errorf("store: latest run of chat %s: %w", chatID, err)
	}
	return r, nil
}

// RunsInState implements RunStore.
func (s *SQLite) RunsInState(ctx context.Context, state string) ([]sova.Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE state=? ORDER BY created_at`, state)
	if err != nil {
		return nil, fmt.Errorf("store: runs in state %s: %w", state, err)
	}
	defer rows.Close()
	out := []sova.Run{}
	for rows.Next() {
		r, err := scanSQLiteRun(rows)
		if err != nil {
			return nil, fmt.Errorf("store: runs in state %s: %w", state, err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// AppendRunEvents implements RunStore.
func (s *SQLite) AppendRunEvents(ctx context.Context, runID string, events []sova.RunEvent) error {
	if len(events) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: append run events: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO run_events (run_id, seq, event) VALUES (?,?,?)`)
	if err != nil {
		return fmt.Errorf("store: append run events: %w", err)
	}
	defer stmt.Close()
	for _, e := range events {
		if _, err := stmt.ExecContext(ctx, runID, e.Seq, string(e.Event)); err != nil {
			return fmt.Errorf("store: append run event %d: %w", e.Seq, sqliteErr(err))
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: append run events: %w", err)
	}
	return nil
}

// RunEvents implements RunStore.
func (s *SQLite) RunEvents(ctx context.Context, runID string, after int64) ([]sova.RunEvent, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, event FROM run_events WHERE run_id=? AND seq>? ORDER BY seq`, runID, after)
	if err != nil {
		return nil, fmt.Errorf("store: run events: %w", err)
	}
	defer rows.Close()
	out := []sova.RunEvent{}
	for rows.Next() {
		var e sova.RunEvent
		var data string
		if err := rows.Scan(&e.Seq, &data); err != nil {
			return nil, fmt.Errorf("store: run events: %w", err)
		}
		e.Event = json.RawMessage(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

// PutRunFile implements RunStore.
func (s *SQLite) PutRunFile(ctx context.Context, runID, path, content string) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO run_files (run_id, path, content, updated_at) VALUES (?,?,?,?)
		ON CONFLICT (run_id, path) DO UPDATE SET content=excluded.content, updated_at=excluded.updated_at`,
		runID, path, content, time.Now().UnixMilli())
	if err != nil {
		return fmt.Errorf("store: put run file %s: %w", path, sqliteErr(err))
	}
	return nil
}

// RunFile implements RunStore.
func (s *SQLite) RunFile(ctx context.Context, runID, path string) (string, error) {
	var content string
	err := s.db.QueryRowContext(ctx, `SELECT content FROM run_files WHERE run_id=? AND path=?`, runID, path).Scan(&content)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: run file %s: %w", path, sova.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: run file %s: %w", path, err)
	}
	return content, nil
}

// RunFiles implements RunStore.
func (s *SQLite) RunFiles(ctx context.Context, runID string) ([]sova.RunFile, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT path, length(CAST(content AS BLOB)), updated_at FROM run_files WHERE run_id=? ORDER BY path`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: run files: %w", err)
	}
	defer rows.Close()
	out := []sova.RunFile{}
	for rows.Next() {
		var f sova.RunFile
		var updated int64
		if err := rows.Scan(&f.Path, &f.Size, &updated); err != nil {
			return nil, fmt.Errorf("store: run files: %w", err)
		}
		f.UpdatedAt = time.UnixMilli(updated).UTC()
		out = append(out, f)
	}
	return out, rows.Err()
}

// DeleteRunFiles implements RunStore.
func (s *SQLite) DeleteRunFiles(ctx context.Context, runID string) error {
	if _, err := s.db.ExecContext(ctx, `DELETE FROM run_files WHERE run_id=?`, runID); err != nil {
		return fmt.Errorf("store: delete run files: %w", err)
	}
	return nil
}

// --- PostgreSQL ---

var _ sova.RunStore = (*Postgres)(nil)

// CreateRun implements RunStore.
func (s *Postgres) CreateRun(ctx context.Context, r *sova.Run) error {
	if err := prepareRun(r, time.Now()); err != nil {
		return fmt.Errorf("store: create run: %w", err)
	}
	u, err := usageJSON(r.Usage)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO runs (`+runColumns+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)`,
		r.ID, r.UserID, nullString(r.ChatID), r.Mode, r.State, r.Question, jsonb(r.Input), jsonb(r.Pause),
		r.Error, r.Report, r.MessageID, jsonb(u), r.LastSeq, r.CreatedAt, r.UpdatedAt)
	if err != nil {
		return fmt.Errorf("store: create run: %w", postgresErr(err))
	}
	return nil
}

// jsonb passes nil for empty JSON so the column stays NULL.
func jsonb(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// UpdateRun implements RunStore.
func (s *Postgres) UpdateRun(ctx context.Context, r *sova.Run) error {
	u, err := usageJSON(r.Usage)
	if err != nil {
		return err
	}
	r.UpdatedAt = storedTime(time.Now())
	tag, err := s.pool.Exec(ctx, `UPDATE runs SET state=$1, pause=$2, error=$3, report=$4, message_id=$5, usage=$6, last_seq=$7, input=$8, updated_at=$9
		WHERE id=$10 AND user_id=$11`,
		r.State, jsonb(r.Pause), r.Error, r.Report, r.MessageID, jsonb(u), r.LastSeq, jsonb(r.Input), r.UpdatedAt, r.ID, r.UserID)
	if err != nil {
		return fmt.Errorf("store: update run: %w", postgresErr(err))
	}
	if err := oneRowTag(tag); err != nil {
		return fmt.Errorf("store: update run %s: %w", r.ID, err)
	}
	r.HasReport = r.Report != ""
	return nil
}

func scanPostgresRun(row pgx.Row) (*sova.Run, error) {
	var r sova.Run
	var rr runRow
	if err := row.Scan(&r.ID, &r.UserID, &rr.chatID, &r.Mode, &r.State, &r.Question, &rr.input, &rr.pause, &r.Error, &r.Report,
		&r.MessageID, &rr.usage, &r.LastSeq, &r.CreatedAt, &r.UpdatedAt); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, sova.ErrNotFound
		}
		return nil, err
	}
	r.CreatedAt, r.UpdatedAt = r.CreatedAt.UTC(), r.UpdatedAt.UTC()
	return &r, rr.decode(&r)
}

// GetRun implements RunStore.
func (s *Postgres) GetRun(ctx context.Context, userID, runID string) (*sova.Run, error) {
	r, err := scanPostgresRun(s.pool.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id=$1 AND user_id=$2`, runID, userID))
	if err != nil {
		return nil, fmt.Errorf("store: get run %s: %w", runID, err)
	}
	return r, nil
}

// LatestRun implements RunStore.
func (s *Postgres) LatestRun(ctx context.Context, userID, chatID string) (*sova.Run, error) {
	r, err := scanPostgresRun(s.pool.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE chat_id=$1 AND user_id=$2
		ORDER BY created_at DESC, id DESC LIMIT 1`, chatID, userID))
	if err != nil {
		return nil, fmt.Errorf("store: latest run of chat %s: %w", chatID, err)
	}
	return r, nil
}

// RunsInState implements RunStore.
func (s *Postgres) RunsInState(ctx context.Context, state string) ([]sova.Run, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+runColumns+` FROM runs WHERE state=$1 ORDER BY created_at`, state)
	if err != nil {
		return nil, fmt.Errorf("store: runs in state %s: %w", state, err)
	}
	defer rows.Close()
	out := []sova.Run{}
	for rows.Next() {
		r, err := scanPostgresRun(rows)
		if err != nil {
			return nil, fmt.Errorf("store: runs in state %s: %w", state, err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// AppendRunEvents implements RunStore.
func (s *Postgres) AppendRunEvents(ctx context.Context, runID string, events []sova.RunEvent) error {
	if len(events) == 0 {
		return nil
	}
	batch := &pgx.Batch{}
	for _, e := range events {
		batch.Queue(`INSERT INTO run_events (run_id, seq, event) VALUES ($1,$2,$3)`, runID, e.Seq, string(e.Event))
	}
	if err := s.pool.SendBatch(ctx, batch).Close(); err != nil {
		return fmt.Errorf("store: append run events: %w", postgresErr(err))
	}
	return nil
}

// RunEvents implements RunStore.
func (s *Postgres) RunEvents(ctx context.Context, runID string, after int64) ([]sova.RunEvent, error) {
	rows, err := s.pool.Query(ctx, `SELECT seq, event FROM run_events WHERE run_id=$1 AND seq>$2 ORDER BY seq`, runID, after)
	if err != nil {
		return nil, fmt.Errorf("store: run events: %w", err)
	}
	defer rows.Close()
	out := []sova.RunEvent{}
	for rows.Next() {
		var e sova.RunEvent
		var data []byte
		if err := rows.Scan(&e.Seq, &data); err != nil {
			return nil, fmt.Errorf("store: run events: %w", err)
		}
		e.Event = json.RawMessage(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

// PutRunFile implements RunStore.
func (s *Postgres) PutRunFile(ctx context.Context, runID, path, content string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO run_files (run_id, path, content, updated_at) VALUES ($1,$2,$3,$4)
		ON CONFLICT (run_id, path) DO UPDATE SET content=excluded.content, updated_at=excluded.updated_at`,
		runID, path, content, storedTime(time.Now()))
	if err != nil {
		return fmt.Errorf("store: put run file %s: %w", path, postgresErr(err))
	}
	return nil
}

// RunFile implements RunStore.
func (s *Postgres) RunFile(ctx context.Context, runID, path string) (string, error) {
	var content string
	err := s.pool.QueryRow(ctx, `SELECT content FROM run_files WHERE run_id=$1 AND path=$2`, runID, path).Scan(&content)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("store: run file %s: %w", path, sova.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: run file %s: %w", path, err)
	}
	return content, nil
}

// RunFiles implements RunStore.
func (s *Postgres) RunFiles(ctx context.Context, runID string) ([]sova.RunFile, error) {
	rows, err := s.pool.Query(ctx, `SELECT path, octet_length(content), updated_at FROM run_files WHERE run_id=$1 ORDER BY path`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: run files: %w", err)
	}
	defer rows.Close()
	out := []sova.RunFile{}
	for rows.Next() {
		var f sova.RunFile
		if err := rows.Scan(&f.Path, &f.Size, &f.UpdatedAt); err != nil {
			return nil, fmt.Errorf("store: run files: %w", err)
		}
		f.UpdatedAt = f.UpdatedAt.UTC()
		out = append(out, f)
	}
	return out, rows.Err()
}

// DeleteRunFiles implements RunStore.
func (s *Postgres) DeleteRunFiles(ctx context.Context, runID string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM run_files WHERE run_id=$1`, runID); err != nil {
		return fmt.Errorf("store: delete run files: %w", err)
	}
	return nil
}
