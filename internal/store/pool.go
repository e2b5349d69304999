package store

import (
	"context"
	"path/filepath"
)

// Connection budget. Every node opens at most Pool connections to its
// database, so that N nodes take a known share of PostgreSQL's
// max_connections (docs/scaling.md), and SQLite a bounded number of
// connections to its file: unbounded, hundreds of runs at once opened
// hundreds of connections that fought over the write lock until some
// gave up with SQLITE_BUSY. Requests beyond the pool wait in it for a
// connection instead.

// Default pool sizes (SOVA_DATABASE_MAX_CONNS, SOVA_SQLITE_MAX_CONNS).
const (
	DefaultPostgresConns = 16
	DefaultSQLiteConns   = 8
)

// Pool sizes the connection pools; zero values are the defaults.
type Pool struct {
	// Postgres is the most connections to PostgreSQL; pool_max_conns in
	// the URL wins over it.
	Postgres int
	// SQLite is the most connections open to the SQLite file. SQLite has
	// one writer at a time: more connections add readers, not writers.
	SQLite int
}

func (p Pool) postgres() int {
	if p.Postgres > 0 {
		return p.Postgres
	}
	return DefaultPostgresConns
}

func (p Pool) sqlite() int {
	if p.SQLite > 0 {
		return p.SQLite
	}
	return DefaultSQLiteConns
}

// OpenPool is Open with the pools sized by p.
func OpenPool(ctx context.Context, databaseURL, dataDir string, p Pool) (*DB, error) {
	if databaseURL == "" && dataDir != "" {
		return openSQLite(ctx, filepath.Join(dataDir, SQLiteFileName), p)
	}
	if databaseURL != "" {
		if s, ok := postgresURL(databaseURL); ok {
			return openPostgres(ctx, s, p)
		}
	}
	return Open(ctx, databaseURL, dataDir)
}

// Conns reports the connections open to the database and the most the
// pool opens (0: no bound).
func (s *DB) Conns() (open, most int) { return s.conns() }
