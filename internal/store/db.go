package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"sync"
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
	// urgent, on PostgreSQL, is the pool of the work under Urgent (nil on
	// SQLite, where the gate puts urgent writes first).
	urgent *sql.DB
}

// UrgentPostgresConns is how many connections to PostgreSQL a node keeps
// for the work a person waits for (Urgent), beyond SOVA_DATABASE_MAX_CONNS.
const UrgentPostgresConns = 2

// lanes sends each statement to the pool of its context: Urgent work to
// its own, the rest to the main pool.
type lanes struct{ normal, urgent *sql.DB }

func (l lanes) pick(ctx context.Context) *sql.DB {
	if isUrgent(ctx) {
		return l.urgent
	}
	return l.normal
}

func (l lanes) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return l.pick(ctx).ExecContext(ctx, query, args...)
}

func (l lanes) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return l.pick(ctx).QueryContext(ctx, query, args...)
}

func (l lanes) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return l.pick(ctx).QueryRowContext(ctx, query, args...)
}

func isUrgent(ctx context.Context) bool {
	u, _ := ctx.Value(urgentKey{}).(bool)
	return u
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
// it ends; writes made under Urgent go before the others waiting.
type writeGate struct {
	db   *sql.DB // the writer's one connection
	read *sql.DB // the readers' pool

	mu      sync.Mutex
	busy    bool
	waiting [2][]chan struct{} // urgent first, then the rest; in arrival order
}

func newWriteGate(writer, read *sql.DB) *writeGate { return &writeGate{db: writer, read: read} }

type urgentKey struct{}

// Urgent marks the work under ctx as work a person waits for (a new
// question being stored): on SQLite its writes take their turn before
// background writes (run events, caches) waiting at the same time, on
// PostgreSQL it has connections of its own (UrgentPostgresConns).
func Urgent(ctx context.Context) context.Context { return context.WithValue(ctx, urgentKey{}, true) }

func (g *writeGate) enter(ctx context.Context) error {
	g.mu.Lock()
	if !g.busy {
		g.busy = true
		g.mu.Unlock()
		return nil
	}
	class := 1
	if isUrgent(ctx) {
		class = 0
	}
	turn := make(chan struct{})
	g.waiting[class] = append(g.waiting[class], turn)
	g.mu.Unlock()
	select {
	case <-turn:
		return nil
	case <-ctx.Done():
		g.mu.Lock()
		if i := slices.Index(g.waiting[class], turn); i >= 0 {
			g.waiting[class] = slices.Delete(g.waiting[class], i, i+1)
			g.mu.Unlock()
			return ctx.Err()
		}
		g.mu.Unlock()
		g.leave() // given the turn meanwhile: pass it on
		return ctx.Err()
	}
}

func (g *writeGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for class := range g.waiting {
		if q := g.waiting[class]; len(q) > 0 {
			next := q[0]
			g.waiting[class] = slices.Delete(q, 0, 1)
			close(next)
			return
		}
	}
	g.busy = false
}

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
	return g.read.QueryContext(ctx, query, args...)
}

func (g *writeGate) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return g.read.QueryRowContext(ctx, query, args...)
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
	db := s.db
	if s.urgent != nil && isUrgent(ctx) {
		db = s.urgent
	}
	if s.writes != nil {
		db = s.writes.db // SQLite: the writer's connection, in its turn
	}
	tx, err := db.BeginTx(ctx, nil)
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
