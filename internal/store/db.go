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
