package store

import (
	"context"
	"database/sql"
	"fmt"
)

// DB is the store on a SQL database: SQLite or PostgreSQL, through
// database/sql. Open, OpenSQLite and OpenPostgres return one.
type DB struct {
	conn // the pool
	db   *sql.DB
	// release frees what the engine holds beyond db (PostgreSQL's pool).
	release func()
	// conns reports the connections open and the most there may be.
	conns func() (open, most int)
	// writes, on SQLite, lets one write at a time take a connection
	// (nil on PostgreSQL): see writeGate.
	writes *writeGate
}

func newDB(db *sql.DB, d *dialect, release func()) *DB {
	if release == nil {
		release = func() {}
	}
	return &DB{conn: conn{q: db, d: d}, db: db, release: release, conns: func() (int, int) {
		st := db.Stats()
		return st.OpenConnections, st.MaxOpenConnections
	}}
}

// writeGate serialises SQLite's writers in the process. SQLite has one
// writer at a time; without the gate, hundreds of writers at once each
// hold a pooled connection while SQLite's busy handler sleeps them in
// steps of up to 100 ms, so readers wait for connections and a new
// request's writes wait behind the sleeping ones. Behind the gate a
// writer waits without a connection and starts the moment the one before
// it ends.
type writeGate struct {
	db   *sql.DB
	turn chan struct{} // holds a token while a write runs
}

func newWriteGate(db *sql.DB) *writeGate {
	return &writeGate{db: db, turn: make(chan struct{}, 1)}
}

func (g *writeGate) enter(ctx context.Context) error {
	select {
	case g.turn <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g *writeGate) leave() { <-g.turn }

// ExecContext runs a statement outside a transaction, in its turn.
func (g *writeGate) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := g.enter(ctx); err != nil {
		return nil, err
	}
	defer g.leave()
	return g.db.ExecContext(ctx, query, args...)
}

// QueryContext and QueryRowContext read; SQLite's WAL lets them run
// beside the writer.
func (g *writeGate) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return g.db.QueryContext(ctx, query, args...)
}

func (g *writeGate) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return g.db.QueryRowContext(ctx, query, args...)
}

// Engine names the database engine: "sqlite" or "postgres".
func (s *DB) Engine() string { return s.d.engine }

// Ping checks that the database can be reached.
func (s *DB) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("store: ping %s: %w", s.d.engine, err)
	}
	return nil
}

// Close closes the database.
func (s *DB) Close() error {
	err := s.db.Close()
	s.release()
	if err != nil {
		return fmt.Errorf("store: close %s: %w", s.d.engine, err)
	}
	return nil
}

// inTx runs fn in a transaction, committing when it returns nil. On SQLite
// the transaction takes the write lock when it begins (_txlock=immediate),
// so it never fails half way for want of it.
func (s *DB) inTx(ctx context.Context, fn func(tx conn) error) (err error) {
	if s.writes != nil {
		if err := s.writes.enter(ctx); err != nil {
			return err
		}
		defer s.writes.leave()
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback() // the error that made it roll back is the one to report
		}
	}()
	if err := fn(conn{q: tx, d: s.d}); err != nil {
		return err
	}
	return s.d.mapErr(tx.Commit())
}
