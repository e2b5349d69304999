package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
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

const runColumns = `id, user_id, chat_id, mode, state, question, input, pause, error, report, message_id, usage, last_seq, retry_of, origin_id, node_id, lease_until, created_at, updated_at`

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
	_, err = s.exec(ctx, `INSERT INTO runs (`+runColumns+`) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		r.ID, r.UserID, nullString(r.ChatID), r.Mode, r.State, r.Question, jsonArg(r.Input), jsonArg(r.Pause),
		r.Error, r.Report, r.MessageID, jsonArg(u), r.LastSeq, r.RetryOf, r.OriginID, r.NodeID, s.d.time(storedTime(r.LeaseUntil)), s.d.time(r.CreatedAt), s.d.time(r.UpdatedAt))
	if err != nil {
		return fmt.Errorf("store: create run: %w", err)
	}
	return nil
}

// UpdateRun implements sova.RunStore.
func (s *DB) UpdateRun(ctx context.Context, r *sova.Run) error {
	if err := s.updateRun(ctx, r, ""); err != nil {
		return fmt.Errorf("store: update run %s: %w", r.ID, err)
	}
	return nil
}

// ResumeRun implements sova.RunStore.
func (s *DB) ResumeRun(ctx context.Context, r *sova.Run) error {
	err := s.updateRun(ctx, r, sova.RunWaiting)
	if errors.Is(err, sova.ErrNotFound) {
		err = fmt.Errorf("it no longer waits: %w", sova.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("store: resume run %s: %w", r.ID, err)
	}
	return nil
}

// updateRun saves r; with from set, only while the run is in that state
// (ErrNotFound otherwise).
func (s *DB) updateRun(ctx context.Context, r *sova.Run, from string) error {
	u, err := usageJSON(r.Usage)
	if err != nil {
		return err
	}
	r.UpdatedAt = storedTime(time.Now())
	args := []any{r.State, jsonArg(r.Pause), r.Error, r.Report, r.MessageID, jsonArg(u), r.LastSeq, jsonArg(r.Input), s.d.time(r.UpdatedAt),
		r.NodeID, s.d.time(storedTime(r.LeaseUntil)), r.ID, r.UserID}
	cond := ""
	if from != "" {
		cond, args = " AND state=?", append(args, from)
	}
	if err := s.execOne(ctx, "run", `UPDATE runs SET state=?, pause=?, error=?, report=?, message_id=?, usage=?, last_seq=?, input=?, updated_at=?,
		node_id=?, lease_until=?
		WHERE id=? AND user_id=?`+cond, args...); err != nil {
		return err
	}
	r.HasReport = r.Report != ""
	return nil
}

func scanRun(row interface{ Scan(...any) error }) (*sova.Run, error) {
	var r sova.Run
	var rr runRow
	if err := row.Scan(&r.ID, &r.UserID, &rr.chatID, &r.Mode, &r.State, &r.Question, &rr.input, &rr.pause, &r.Error, &r.Report,
		&r.MessageID, &rr.usage, &r.LastSeq, &r.RetryOf, &r.OriginID, &r.NodeID, scanTime(&r.LeaseUntil), scanTime(&r.CreatedAt), scanTime(&r.UpdatedAt)); err != nil {
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

// RestartOf implements sova.RunStore.
func (s *DB) RestartOf(ctx context.Context, userID, runID string) (*sova.Run, error) {
	r, err := scanRun(s.queryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE retry_of=? AND user_id=?`, runID, userID))
	if err != nil {
		return nil, fmt.Errorf("store: restart of run %s: %w", runID, err)
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

// RenewLeases implements sova.RunStore. Only the runs the node names are
// renewed: a run whose executor ended without storing its end (a full
// disk, a lost database) is left for its lease to pass, so that a node
// closes or continues it, instead of staying running with no executor.
func (s *DB) RenewLeases(ctx context.Context, nodeID string, runIDs []string, until time.Time) ([]string, error) {
	if len(runIDs) == 0 {
		// Nothing to renew; the node still learns whether the store
		// answers (readiness reports a node cut off from it).
		var one int
		if err := s.queryRow(ctx, `SELECT 1`).Scan(&one); err != nil {
			return nil, fmt.Errorf("store: renew leases of node %s: %w", nodeID, err)
		}
		return nil, nil
	}
	var held []string
	for len(runIDs) > 0 {
		part := runIDs[:min(len(runIDs), inChunk)]
		runIDs = runIDs[len(part):]
		args := []any{s.d.time(storedTime(until)), nodeID}
		for _, id := range part {
			args = append(args, id)
		}
		if _, err := s.exec(ctx, `UPDATE runs SET lease_until=? WHERE node_id=? AND state='running' AND id IN `+inList(len(part)), args...); err != nil {
			return nil, fmt.Errorf("store: renew leases of node %s: %w", nodeID, err)
		}
		ids, err := s.heldOf(ctx, args[1:])
		if err != nil {
			return nil, fmt.Errorf("store: runs of node %s: %w", nodeID, err)
		}
		held = append(held, ids...)
	}
	return held, nil
}

// heldOf returns which of the runs (args: the node, then the run ids) the
// node holds.
func (s *DB) heldOf(ctx context.Context, args []any) ([]string, error) {
	rows, err := s.query(ctx, `SELECT id FROM runs WHERE node_id=? AND state='running' AND id IN `+inList(len(args)-1), args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// ClaimRun implements sova.RunStore. The claim is one conditional UPDATE:
// the database serialises concurrent updates of a row and re-checks the
// condition for the second, so of several nodes one changes the row.
func (s *DB) ClaimRun(ctx context.Context, runID, nodeID string, now, until time.Time) error {
	res, err := s.exec(ctx, `UPDATE runs SET node_id=?, lease_until=?
		WHERE id=? AND state='running' AND (node_id=? OR lease_until<?)`,
		nodeID, s.d.time(storedTime(until)), runID, nodeID, s.d.time(storedTime(now)))
	if err != nil {
		return fmt.Errorf("store: claim run %s: %w", runID, err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 1 {
		return err
	}
	var state string
	if err := s.queryRow(ctx, `SELECT state FROM runs WHERE id=?`, runID).Scan(&state); err != nil || state != sova.RunRunning {
		return fmt.Errorf("store: claim run %s: not running: %w", runID, sova.ErrNotFound)
	}
	return fmt.Errorf("store: claim run %s: another node holds it: %w", runID, sova.ErrConflict)
}

// ReleaseRun implements sova.RunStore.
func (s *DB) ReleaseRun(ctx context.Context, runID, nodeID string) error {
	if _, err := s.exec(ctx, `UPDATE runs SET node_id='', lease_until=? WHERE id=? AND node_id=? AND state='running'`,
		s.d.time(storedTime(time.UnixMilli(0))), runID, nodeID); err != nil {
		return fmt.Errorf("store: release run %s: %w", runID, err)
	}
	return nil
}

// OrphanedRuns implements sova.RunStore.
func (s *DB) OrphanedRuns(ctx context.Context, nodeID string, now time.Time) ([]sova.Run, error) {
	rows, err := s.query(ctx, `SELECT `+runColumns+` FROM runs WHERE state='running' AND (lease_until<? OR node_id=?) ORDER BY created_at`,
		s.d.time(storedTime(now)), nodeID)
	if err != nil {
		return nil, fmt.Errorf("store: orphaned runs: %w", err)
	}
	defer rows.Close()
	out := []sova.Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("store: orphaned runs: %w", err)
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
	evs := make([]sova.RunEvent, len(events))
	for i, e := range events {
		evs[i] = sova.RunEvent{RunID: runID, Seq: e.Seq, Event: e.Event}
	}
	if err := s.AppendEvents(ctx, evs); err != nil {
		return fmt.Errorf("store: run %s: %w", runID, err)
	}
	return nil
}

// AppendEvents implements sova.RunStore: multi-row INSERTs of up to
// eventRows events, in one transaction when there is more than one.
func (s *DB) AppendEvents(ctx context.Context, events []sova.RunEvent) error {
	if len(events) == 0 {
		return nil
	}
	insert := func(c conn, evs []sova.RunEvent) error {
		args := make([]any, 0, 3*len(evs))
		for _, e := range evs {
			args = append(args, e.RunID, e.Seq, string(e.Event))
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
		return fmt.Errorf("store: append %d run events: %w", len(events), err)
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
	_, err := s.exec(ctx, `INSERT INTO run_files (run_id, path, content, data, content_type, updated_at) VALUES (?,?,?,NULL,?,?)
		ON CONFLICT (run_id, path) DO UPDATE SET content=excluded.content, data=NULL, content_type=excluded.content_type, updated_at=excluded.updated_at`,
		runID, path, content, sova.TextFileType, s.d.time(storedTime(time.Now())))
	if err != nil {
		return fmt.Errorf("store: put run file %s: %w", path, err)
	}
	return nil
}

// PutRunFileBytes implements sova.RunStore: the bytes go to the data
// column (BLOB, bytea), the text column stays empty.
func (s *DB) PutRunFileBytes(ctx context.Context, runID, path, contentType string, data []byte) error {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	if data == nil {
		data = []byte{} // NULL marks a text file
	}
	_, err := s.exec(ctx, `INSERT INTO run_files (run_id, path, content, data, content_type, updated_at) VALUES (?,?,'',?,?,?)
		ON CONFLICT (run_id, path) DO UPDATE SET content='', data=excluded.data, content_type=excluded.content_type, updated_at=excluded.updated_at`,
		runID, path, data, contentType, s.d.time(storedTime(time.Now())))
	if err != nil {
		return fmt.Errorf("store: put run file %s: %w", path, err)
	}
	return nil
}

// RunFile implements sova.RunStore; a file of bytes comes back as a
// string of them.
func (s *DB) RunFile(ctx context.Context, runID, path string) (string, error) {
	data, _, err := s.RunFileBytes(ctx, runID, path)
	return string(data), err
}

// RunFileBytes implements sova.RunStore.
func (s *DB) RunFileBytes(ctx context.Context, runID, path string) ([]byte, string, error) {
	var (
		content, ctype string
		data           []byte
	)
	err := s.queryRow(ctx, `SELECT content, data, content_type FROM run_files WHERE run_id=? AND path=?`, runID, path).Scan(&content, &data, &ctype)
	if isNoRows(err) {
		return nil, "", fmt.Errorf("store: run file %s: %w", path, sova.ErrNotFound)
	}
	if err != nil {
		return nil, "", fmt.Errorf("store: run file %s: %w", path, err)
	}
	if data == nil {
		data = []byte(content)
	}
	return data, ctype, nil
}

// RunFiles implements sova.RunStore.
func (s *DB) RunFiles(ctx context.Context, runID string) ([]sova.RunFile, error) {
	rows, err := s.query(ctx, `SELECT path, octet_length(content) + COALESCE(octet_length(data), 0), content_type, updated_at
		FROM run_files WHERE run_id=? ORDER BY path`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: run files: %w", err)
	}
	defer rows.Close()
	out := []sova.RunFile{}
	for rows.Next() {
		var f sova.RunFile
		if err := rows.Scan(&f.Path, &f.Size, &f.ContentType, scanTime(&f.UpdatedAt)); err != nil {
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
