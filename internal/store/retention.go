package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sova-ai/sova"
)

// finishedIn is the condition on runs whose logs no longer grow: a
// waiting run resumes and an interrupted one can be restarted, both
// adding to their log, so theirs are left alone.
func finishedIn() (string, []any) {
	return "state IN (?,?,?)", []any{sova.RunCompleted, sova.RunFailed, sova.RunCancelled}
}

// CompactRunEvents compacts the event logs of up to limit finished runs
// last updated before `before` and not compacted yet: each run of
// consecutive text deltas becomes one event, stored under the last of
// their numbers, with their texts joined, and progress that a later event
// supersedes goes (a query's "started" once it completed or failed, a
// page's "reading" once it was read or failed). A replay shows the same
// answer and the same final state of every query and page from fewer
// rows (a model's answer streams as hundreds of deltas); a client resuming
// after an event inside a merged run of deltas gets the whole merged text
// again. It reports how many runs it compacted and how
// many event rows it removed.
func (s *DB) CompactRunEvents(ctx context.Context, before time.Time, limit int) (runs int, removed int64, err error) {
	in, args := finishedIn()
	rows, err := s.query(ctx, `SELECT id FROM runs WHERE events_compacted=0 AND `+in+` AND updated_at<? ORDER BY updated_at LIMIT ?`,
		append(args, s.d.time(before), limit)...)
	if err != nil {
		return 0, 0, fmt.Errorf("store: runs to compact: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, 0, fmt.Errorf("store: runs to compact: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, 0, fmt.Errorf("store: runs to compact: %w", err)
	}
	for _, id := range ids {
		n, err := s.compactRun(ctx, id)
		if err != nil {
			return runs, removed, err
		}
		runs++
		removed += n
	}
	return runs, removed, nil
}

// compactRun merges one run's text deltas, in one transaction.
func (s *DB) compactRun(ctx context.Context, runID string) (int64, error) {
	var removed int64
	err := s.inTx(ctx, func(tx conn) error {
		evs, err := runEventsIn(ctx, tx, runID)
		if err != nil {
			return err
		}
		var del []any
		flush := func(group []sova.RunEvent, texts []string) error {
			if len(group) < 2 {
				return nil
			}
			last := group[len(group)-1]
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(last.Event, &fields); err != nil {
				return fmt.Errorf("run %s event %d: %w", runID, last.Seq, err)
			}
			text, err := json.Marshal(strings.Join(texts, ""))
			if err != nil {
				return err
			}
			fields["text"] = text
			// The last row may itself hold several deltas merged by the
			// run's event writer (pieces, dt, the first one's seq): the
			// compacted row is one delta under the last number.
			delete(fields, "pieces")
			delete(fields, "dt")
			fields["seq"] = json.RawMessage(strconv.FormatInt(last.Seq, 10))
			merged, err := json.Marshal(fields)
			if err != nil {
				return err
			}
			if _, err := tx.exec(ctx, `UPDATE run_events SET event=? WHERE run_id=? AND seq=?`, string(merged), runID, last.Seq); err != nil {
				return err
			}
			for _, e := range group[:len(group)-1] {
				del = append(del, e.Seq)
			}
			return nil
		}
		// Progress a later event of the same query or page supersedes:
		// "started" once the query completed or failed, "reading" once
		// the page was read or failed.
		superseded := map[int64]bool{}
		open := map[string]int64{}
		var group []sova.RunEvent
		var texts []string
		for _, e := range evs {
			var head struct {
				Type  string `json:"type"`
				Text  string `json:"text"`
				Query *struct {
					Query     string `json:"query"`
					Index     int    `json:"index"`
					Iteration int    `json:"iteration"`
					Status    string `json:"status"`
				} `json:"query"`
				Page *struct {
					URL   string `json:"url"`
					State string `json:"state"`
				} `json:"page"`
			}
			if err := json.Unmarshal(e.Event, &head); err == nil && head.Type == "text-delta" {
				group = append(group, e)
				texts = append(texts, head.Text)
				continue
			}
			if err := flush(group, texts); err != nil {
				return err
			}
			group, texts = group[:0], texts[:0]
			switch {
			case head.Type == "query" && head.Query != nil:
				k := fmt.Sprintf("q\x1f%d\x1f%d\x1f%s", head.Query.Iteration, head.Query.Index, head.Query.Query)
				if head.Query.Status == "started" {
					open[k] = e.Seq
				} else if seq, ok := open[k]; ok {
					superseded[seq] = true
					delete(open, k)
				}
			case head.Type == "page" && head.Page != nil:
				k := "p\x1f" + head.Page.URL
				if head.Page.State == "reading" {
					open[k] = e.Seq
				} else if seq, ok := open[k]; ok {
					superseded[seq] = true
					delete(open, k)
				}
			}
		}
		if err := flush(group, texts); err != nil {
			return err
		}
		for seq := range superseded {
			del = append(del, seq)
		}
		for start := 0; start < len(del); start += eventRows {
			part := del[start:min(start+eventRows, len(del))]
			res, err := tx.exec(ctx, `DELETE FROM run_events WHERE run_id=? AND seq IN (?`+strings.Repeat(",?", len(part)-1)+`)`,
				append([]any{runID}, part...)...)
			if err != nil {
				return err
			}
			n, _ := res.RowsAffected()
			removed += n
		}
		_, err = tx.exec(ctx, `UPDATE runs SET events_compacted=1 WHERE id=?`, runID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: compact the events of run %s: %w", runID, err)
	}
	return removed, nil
}

func runEventsIn(ctx context.Context, c conn, runID string) ([]sova.RunEvent, error) {
	rows, err := c.query(ctx, `SELECT seq, event FROM run_events WHERE run_id=? ORDER BY seq`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []sova.RunEvent
	for rows.Next() {
		var e sova.RunEvent
		var data []byte
		if err := rows.Scan(&e.Seq, &data); err != nil {
			return nil, err
		}
		e.Event = json.RawMessage(data)
		out = append(out, e)
	}
	return out, rows.Err()
}

// PurgeRunEvents deletes the event logs of finished runs last updated
// before `before` (the retention setting): their answers, sources and
// steps stay with the chat's messages, their reports and files with the
// run. It reports how many event rows it deleted.
func (s *DB) PurgeRunEvents(ctx context.Context, before time.Time) (int64, error) {
	in, args := finishedIn()
	res, err := s.exec(ctx, `DELETE FROM run_events WHERE run_id IN (SELECT id FROM runs WHERE `+in+` AND updated_at<?)`,
		append(args, s.d.time(before))...)
	if err != nil {
		return 0, fmt.Errorf("store: purge run events: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
