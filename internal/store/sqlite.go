package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// SQLiteBusyTimeout is how long a connection waits for another writer
// before failing with "database is locked".
const SQLiteBusyTimeout = 10 * time.Second

// sqliteDialect is SQLite's part of the queries. Timestamps are Unix
// milliseconds and JSON is TEXT, as migrations/sqlite made them.
var sqliteDialect = &dialect{
	engine:      "sqlite",
	time:        func(t time.Time) any { return t.UnixMilli() },
	greatest:    "MAX",
	insertOrder: "rowid",
	errorCode: func(err error) any {
		var se *sqlite.Error
		if errors.As(err, &se) {
			return se.Code() // the extended result code
		}
		return nil
	},
	errorKinds: map[any]error{
		sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY: sova.ErrConflict,
		sqlite3.SQLITE_CONSTRAINT_UNIQUE:     sova.ErrConflict,
		sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY: sova.ErrNotFound, // what the row refers to does not exist
		sqlite3.SQLITE_CONSTRAINT_CHECK:      sova.ErrInvalid,
		sqlite3.SQLITE_CONSTRAINT_NOTNULL:    sova.ErrInvalid,
		sqlite3.SQLITE_CONSTRAINT_DATATYPE:   sova.ErrInvalid,
	},
}

// OpenSQLite opens (creating it and its directory if needed) the SQLite
// database at path and brings its schema up to date.
func OpenSQLite(ctx context.Context, path string) (*DB, error) {
	return openSQLite(ctx, path, Pool{})
}

func openSQLite(ctx context.Context, path string, p Pool) (*DB, error) {
	if path == "" {
		return nil, fmt.Errorf("store: open sqlite: %w: empty path", sova.ErrInvalid)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("store: open sqlite: create directory: %w", err)
	}
	db, err := sql.Open("sqlite", sqliteDSN(abs))
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite %s: %w", abs, err)
	}
	// Bounded (pool.go): beyond it, requests wait for a connection in the
	// pool rather than for the write lock in SQLite's busy handler. Idle
	// ones are kept, as opening one re-reads the schema.
	db.SetMaxOpenConns(p.sqlite())
	db.SetMaxIdleConns(p.sqlite())
	if err := migrateSQLite(ctx, db); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open sqlite %s: %w", abs, err)
	}
	// One connection of its own for the writer: behind the gate a write
	// never waits for the readers' pool, which hundreds of runs keep busy.
	wdb, err := sql.Open("sqlite", sqliteDSN(abs))
	if err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("store: open sqlite %s: %w", abs, err)
	}
	wdb.SetMaxOpenConns(1)
	wdb.SetMaxIdleConns(1)
	s := newDB(db, sqliteDialect, func() { _ = wdb.Close() })
	s.writes = newWriteGate(wdb, db)
	s.conn.q = s.writes
	return s, nil
}

// migrateSQLite checks the connection and applies the migrations, retrying
// a few times: SQLite has no lock goose can hold across migrations, so when
// two processes open a new database at once both may try the same
// migration. Each migration runs in
// its own transaction, so the loser's attempt rolls back and its retry finds
// the migration applied.
func migrateSQLite(ctx context.Context, db *sql.DB) error {
	const attempts = 8
	var err error
	for i := range attempts {
		// The first connection switches a new file to WAL, which takes an
		// exclusive lock that busy_timeout does not wait for: a process
		// opening the file at that moment gets SQLITE_BUSY and tries again.
		if err = db.PingContext(ctx); err == nil {
			if err = migrate(ctx, goose.DialectSQLite3, db, "sqlite"); err == nil {
				return nil
			}
		}
		if i == attempts-1 {
			break
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(time.Duration(i+1) * 50 * time.Millisecond):
		}
	}
	return err
}

// sqliteDSN returns the DSN for the database file at the absolute path abs.
// The settings are DSN parameters, so the driver applies them to every
// connection the pool opens: WAL lets readers run alongside the writer,
// busy_timeout makes writers queue instead of failing, foreign_keys makes
// deleting a chat delete its messages, synchronous=NORMAL is safe with WAL,
// and immediate transactions take the write lock up front so a transaction
// never fails half way when upgrading from read to write.
func sqliteDSN(abs string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", SQLiteBusyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // a Windows drive path: file:///C:/...
	}
	u := url.URL{Scheme: "file", Path: p, RawQuery: q.Encode()}
	return u.String()
}
