package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sova-ai/sova"
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

var _ sova.RunStore = (*DB)(nil)

// CreateRun implements sova.RunStore.
func (s *DB) CreateRun(ctx context.Context, r *sova.Run) error {
	if err := prepareRun(r, time.Now()); err != nil {
		return fmt.Errorf("store: create run: %w", err)
	}
	u, err := usageJSON(r.Usage)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `INSERT INTO runs (`+runColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID, r.UserID, nullString(r.ChatID), r.Mode, r.State, r.Question, jsonArg(r.Input), jsonArg(r.Pause),
		r.Error, r.Report, r.MessageID, jsonArg(u), r.LastSeq, s.d.time(r.CreatedAt), s.d.time(r.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: create run: %w", err)
	}
	return nil
}

// UpdateRun implements sova.RunStore.
func (s *DB) UpdateRun(ctx context.Context, r *sova.Run) error {
	u, err := usageJSON(r.Usage)
	if err != nil {
		return err
	}
	r.UpdatedAt = storedTime(time.Now())
	err = s.execOne(ctx, "run", `UPDATE runs SET state=?, pause=?, error=?, report=?, message_id=?, usage=?, last_seq=?, input=?, updated_at=?
		WHERE id=? AND user_id=?`,
		r.State, jsonArg(r.Pause), r.Error, r.Report, r.MessageID, jsonArg(u), r.LastSeq, jsonArg(r.Input), s.d.time(r.UpdatedAt), r.ID, r.UserID)
	if err != nil {
		return fmt.Errorf("store: update run %s: %w", r.ID, err)
	}
	r.HasReport = r.Report != ""
	return nil
}

func scanRun(row interface{ Scan(...any) error }) (*sova.Run, error) {
	var r sova.Run
	var rr runRow
	if err := row.Scan(&r.ID, &r.UserID, &rr.chatID, &r.Mode, &r.State, &r.Question, &rr.input, &rr.pause, &r.Error, &r.Report,
		&r.MessageID, &rr.usage, &r.LastSeq, scanTime(&r.CreatedAt), scanTime(&r.UpdatedAt)); err != nil {
		if isNoRows(err) {
			return nil, sova.ErrNotFound
		}
		return nil, err
	}
	return &r, rr.decode(&r)
}

// GetRun implements sova.RunStore.
func (s *DB) GetRun(ctx context.Context, userID, runID string) (*sova.Run, error) {
	r, err := scanRun(s.queryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id=? AND user_id=?`, runID, userID))
	if err != nil {
		return nil, fmt.Errorf("store: get run %s: %w", runID, err)
	}
	return r, nil
}

// LatestRun implements sova.RunStore.
func (s *DB) LatestRun(ctx context.Context, userID, chatID string) (*sova.Run, error) {
	r, err := scanRun(s.queryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE chat_id=? AND user_id=?
		ORDER BY created_at DESC, `+s.d.insertOrder+` DESC LIMIT 1`, chatID, userID))
	if err != nil {
		return nil, fmt.Errorf("store: latest run of chat %s: %w", chatID, err)
	}
	return r, nil
}

// RunsInState implements sova.RunStore.
func (s *DB) RunsInState(ctx context.Context, state string) ([]sova.Run, error) {
	rows, err := s.query(ctx, `SELECT `+runColumns+` FROM runs WHERE state=? ORDER BY created_at`, state)
	if err != nil {
		return nil, fmt.Errorf("store: runs in state %s: %w", state, err)
	}
	defer rows.Close()
	out := []sova.Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("store: runs in state %s: %w", state, err)
		}
		out = append(out, *r)
	}
	return out, rows.Err()
}

// eventRows is how many events one INSERT writes: three parameters each,
// within SQLite's oldest limit of 999.
const eventRows = 300

// AppendRunEvents implements sova.RunStore. The batch is one multi-row
// INSERT (one round trip to PostgreSQL), or one transaction of several for
// a batch longer than eventRows: all of it is stored or none.
func (s *DB) AppendRunEvents(ctx context.Context, runID string, events []sova.RunEvent) error {
	if len(events) == 0 {
		return nil
	}
	insert := func(c conn, evs []sova.RunEvent) error {
		args := make([]any, 0, 3*len(evs))
		for _, e := range evs {
			args = append(args, runID, e.Seq, string(e.Event))
		}
		_, err := c.exec(ctx, `INSERT INTO run_events (run_id, seq, event) VALUES (?,?,?)`+
			strings.Repeat(`,(?,?,?)`, len(evs)-1), args...)
		return err
	}
	var err error
	if len(events) <= eventRows {
		err = insert(s.conn, events)
	} else {
		err = s.inTx(ctx, func(tx conn) error {
			for start := 0; start < len(events); start += eventRows {
				if err := insert(tx, events[start:min(start+eventRows, len(events))]); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return fmt.Errorf("store: append %d events of run %s: %w", len(events), runID, err)
	}
	return nil
}

// RunEvents implements sova.RunStore.
func (s *DB) RunEvents(ctx context.Context, runID string, after int64) ([]sova.RunEvent, error) {
	rows, err := s.query(ctx, `SELECT seq, event FROM run_events WHERE run_id=? AND seq>? ORDER BY seq`, runID, after)
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

// PutRunFile implements sova.RunStore.
func (s *DB) PutRunFile(ctx context.Context, runID, path, content string) error {
	_, err := s.exec(ctx, `INSERT INTO run_files (run_id, path, content, updated_at) VALUES (?,?,?,?)
		ON CONFLICT (run_id, path) DO UPDATE SET content=excluded.content, updated_at=excluded.updated_at`,
		runID, path, content, s.d.time(storedTime(time.Now())))
	if err != nil {
		return fmt.Errorf("store: put run file %s: %w", path, err)
	}
	return nil
}

// RunFile implements sova.RunStore.
func (s *DB) RunFile(ctx context.Context, runID, path string) (string, error) {
	var content string
	err := s.queryRow(ctx, `SELECT content FROM run_files WHERE run_id=? AND path=?`, runID, path).Scan(&content)
	if isNoRows(err) {
		return "", fmt.Errorf("store: run file %s: %w", path, sova.ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: run file %s: %w", path, err)
	}
	return content, nil
}

// RunFiles implements sova.RunStore.
func (s *DB) RunFiles(ctx context.Context, runID string) ([]sova.RunFile, error) {
	rows, err := s.query(ctx, `SELECT path, octet_length(content), updated_at FROM run_files WHERE run_id=? ORDER BY path`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: run files: %w", err)
	}
	defer rows.Close()
	out := []sova.RunFile{}
	for rows.Next() {
		var f sova.RunFile
		if err := rows.Scan(&f.Path, &f.Size, scanTime(&f.UpdatedAt)); err != nil {
			return nil, fmt.Errorf("store: run files: %w", err)
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// DeleteRunFiles implements sova.RunStore.
func (s *DB) DeleteRunFiles(ctx context.Context, runID string) error {
	if _, err := s.exec(ctx, `DELETE FROM run_files WHERE run_id=?`, runID); err != nil {
		return fmt.Errorf("store: delete run files: %w", err)
	}
	return nil
}
