package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"time"

	"github.com/sova-ai/sova"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

// postgresDialect is PostgreSQL's part of the queries. Timestamps are
// timestamptz and JSON is jsonb, as migrations/postgres made them.
var postgresDialect = &dialect{
	engine:      "postgres",
	numbered:    true,
	time:        func(t time.Time) any { return t },
	greatest:    "greatest",
	bytewise:    ` COLLATE "C"`,
	forUpdate:   ` FOR UPDATE`,
	insertOrder: "id",
	errorCode: func(err error) any {
		var pe *pgconn.PgError
		if errors.As(err, &pe) {
			return pe.Code // the SQLSTATE
		}
		return nil
	},
	errorKinds: map[any]error{
		"23505": sova.ErrConflict, // unique_violation
		"23503": sova.ErrNotFound, // foreign_key_violation: what the row refers to does not exist
		"23514": sova.ErrInvalid,  // check_violation
		"23502": sova.ErrInvalid,  // not_null_violation
	},
}

// OpenPostgres connects to the PostgreSQL database at databaseURL, in the
// first schema of the connection's search_path, and brings its schema up
// to date. Servers that start at the same time take turns migrating.
//
// Queries go through database/sql on pgx's stdlib driver over a pgxpool:
// the pool is configured from the URL as before (pool_max_conns, ...) and
// pgx caches each connection's prepared statements.
func OpenPostgres(ctx context.Context, databaseURL string) (*DB, error) {
	return openPostgres(ctx, databaseURL, Pool{})
}

func openPostgres(ctx context.Context, databaseURL string, p Pool) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	if !strings.Contains(databaseURL, "pool_max_conns") {
		// A known number per node (pool.go), so that the nodes' sum
		// stays under max_connections: pgx's default follows the CPUs.
		cfg.MaxConns = int32(p.postgres())
	}
	if err := migratePostgres(ctx, cfg.ConnConfig.Copy()); err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	// A lane of its own for the work a person waits for (Urgent: storing a
	// new question): with hundreds of runs at once, the main pool's
	// connections are all taken, held by runs between their statements,
	// and a new question's first byte waited seconds for one.
	ucfg := cfg.Copy()
	ucfg.MaxConns, ucfg.MinConns = UrgentPostgresConns, 0
	upool, err := pgxpool.NewWithConfig(ctx, ucfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("store: open postgres: %w", err)
	}
	udb := stdlib.OpenDBFromPool(upool)
	db := newDB(stdlib.OpenDBFromPool(pool), postgresDialect, func() {
		_ = udb.Close()
		upool.Close()
		pool.Close()
	})
	db.urgent = udb
	db.conn.q = lanes{normal: db.db, urgent: udb}
	db.conns = func() (int, int) {
		st := pool.Stat()
		return int(st.TotalConns()), int(st.MaxConns())
	}
	return db, nil
}

// migratePostgres runs the migrations over database/sql, holding an
// advisory lock named after the database and schema being migrated.
func migratePostgres(ctx context.Context, cc *pgx.ConnConfig) (err error) {
	db := stdlib.OpenDB(*cc)
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close migration connection: %w", cerr)
		}
	}()
	var target string
	if err := db.QueryRowContext(ctx,
		`SELECT current_database() || '.' || coalesce(current_schema(), '')`).Scan(&target); err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte("sova store migrations " + target))
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(int64(h.Sum64())),
		lock.WithLockTimeout(1, 300), // retry every second for up to five minutes
	)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	return migrate(ctx, goose.DialectPostgres, db, "postgres", goose.WithSessionLocker(locker))
}
