package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sova-ai/sova"
)

// dialect is where SQLite and PostgreSQL differ, so that every query is
// written once, with ? placeholders, in the SQL both engines accept:
// ON CONFLICT upserts, RETURNING, COALESCE, LIMIT/OFFSET, octet_length.
// The rest is here.
type dialect struct {
	// engine is "sqlite" or "postgres".
	engine string
	// numbered turns the ? placeholders into $1, $2, ... (PostgreSQL).
	numbered bool
	// time encodes a timestamp as its columns keep it: Unix milliseconds
	// in SQLite's INTEGER columns (the format of every existing database
	// file), a time.Time for PostgreSQL's timestamptz. scanTime reads both.
	time func(time.Time) any
	// greatest is the scalar maximum of two values: MAX(a, b) in SQLite,
	// greatest(a, b) in PostgreSQL.
	greatest string
	// bytewise follows a text column in ORDER BY to sort it by its bytes,
	// as SQLite's default BINARY collation does; PostgreSQL's default
	// collation follows the locale, so it is COLLATE "C" there. Names are
	// unique as they are, case included, in both (UNIQUE constraints on
	// the plain columns).
	bytewise string
	// forUpdate follows a SELECT in a transaction to lock the rows it
	// reads until the commit (PostgreSQL). SQLite needs none: its
	// transactions are immediate and hold the database's one write lock.
	forUpdate string
	// insertOrder is a column that grows as rows of a table without a
	// sequence are inserted, to break ties in time: SQLite's rowid;
	// PostgreSQL has none, and the time-ordered (UUIDv7) id stands in.
	insertOrder string
	// errorCode returns the engine's code for an error from its driver
	// (nil for any other error); errorKinds maps the codes of constraint
	// violations to the sova errors they stand for.
	errorCode  func(error) any
	errorKinds map[any]error
}

// rebind returns query with its ? placeholders numbered for PostgreSQL.
// Queries never contain a ? other than a placeholder.
func (d *dialect) rebind(query string) string {
	if !d.numbered || !strings.Contains(query, "?") {
		return query
	}
	var b strings.Builder
	b.Grow(len(query) + 16)
	n := 0
	for {
		i := strings.IndexByte(query, '?')
		if i < 0 {
			b.WriteString(query)
			return b.String()
		}
		n++
		b.WriteString(query[:i])
		b.WriteByte('$')
		b.WriteString(strconv.Itoa(n))
		query = query[i+1:]
	}
}

// mapErr puts the sova error a constraint violation stands for in front of
// err, keeping the driver's error in the chain.
func (d *dialect) mapErr(err error) error {
	if err == nil {
		return nil
	}
	if kind, ok := d.errorKinds[d.errorCode(err)]; ok {
		return fmt.Errorf("%w: %w", kind, err)
	}
	return err
}

// querier is what *sql.DB and *sql.Tx have in common.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// conn runs queries written with ? placeholders on a database or in a
// transaction, in the dialect's terms, and maps constraint violations to
// sova errors.
type conn struct {
	q querier
	d *dialect
}

func (c conn) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := c.q.ExecContext(ctx, c.d.rebind(query), args...)
	return res, c.d.mapErr(err)
}

func (c conn) query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	rows, err := c.q.QueryContext(ctx, c.d.rebind(query), args...)
	return rows, c.d.mapErr(err)
}

func (c conn) queryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return c.q.QueryRowContext(ctx, c.d.rebind(query), args...)
}

// execOne runs a statement that must change exactly one row of what; a
// statement that changes none reports what as ErrNotFound.
func (c conn) execOne(ctx context.Context, what, query string, args ...any) error {
	res, err := c.exec(ctx, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s %w", what, sova.ErrNotFound)
	}
	return nil
}

// scanTime scans a timestamp column as either engine keeps it (see
// dialect.time) into *t, in UTC.
func scanTime(t *time.Time) sql.Scanner { return timeScanner{t} }

type timeScanner struct{ t *time.Time }

func (s timeScanner) Scan(src any) error {
	switch v := src.(type) {
	case int64:
		*s.t = time.UnixMilli(v).UTC()
	case time.Time:
		*s.t = v.UTC()
	default:
		return fmt.Errorf("store: timestamp column holds %T", src)
	}
	return nil
}

// jsonArg binds a JSON document: as text, which SQLite's STRICT TEXT
// columns need (a []byte would be a BLOB) and PostgreSQL's jsonb accepts;
// nil or empty is SQL NULL.
func jsonArg(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return string(b)
}

// nullString binds an empty string as NULL (for optional references).
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// noLimit stands for "no LIMIT" in a LIMIT ? OFFSET ? both engines accept.
const noLimit = int64(1<<63 - 1)

// limitArg is the LIMIT of a list: limit <= 0 means all.
func limitArg(limit int) int64 {
	if limit <= 0 {
		return noLimit
	}
	return int64(limit)
}

// inChunk is how many values an IN (...) list takes at most: SQLite
// limits a statement's parameters.
const inChunk = 500

// inList returns "(?, ?, ...)" for n values.
func inList(n int) string {
	return "(?" + strings.Repeat(", ?", n-1) + ")"
}

// isNoRows reports whether err is a query that found no row.
func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }

// rowsChanged returns how many rows a statement changed.
func rowsChanged(res sql.Result, err error) (int64, error) {
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
