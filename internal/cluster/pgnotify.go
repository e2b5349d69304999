package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The NOTIFY channels; the payload is a run id.
const (
	pgEvents = "sova_run_events"
	pgCancel = "sova_run_cancel"
)

// PGNotifier carries the notices through PostgreSQL's LISTEN/NOTIFY. One
// connection listens for the node; notices are sent on the others.
type PGNotifier struct {
	*hub
	pool   *pgxpool.Pool
	logger *slog.Logger
	quiet  time.Duration // quietTime

	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{} // closed once the first LISTEN is in place
	once   sync.Once
}

// NewPGNotifier connects to the database at databaseURL and starts
// listening; Close stops it.
func NewPGNotifier(ctx context.Context, databaseURL string, logger *slog.Logger) (*PGNotifier, error) {
	return newPGNotifier(ctx, databaseURL, logger, quietTime)
}

// newPGNotifier is NewPGNotifier with the listening connection's quiet
// time before a ping.
func newPGNotifier(ctx context.Context, databaseURL string, logger *slog.Logger, quiet time.Duration) (*PGNotifier, error) {
	cfg, err := pgxpool.ParseConfig(databaseURL)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	cfg.MaxConns = 4 // one listens; the others publish
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	lctx, cancel := context.WithCancel(context.Background())
	n := &PGNotifier{hub: newHub(), pool: pool, logger: logger, quiet: quiet,
		cancel: cancel, done: make(chan struct{}), ready: make(chan struct{})}
	go n.listen(lctx)
	if err := awaitReady(ctx, n.ready); err != nil {
		n.Close()
		return nil, fmt.Errorf("cluster: listening for PostgreSQL notices: %w", err)
	}
	return n, nil
}

// awaitReady waits for the first subscription of a notifier.
func awaitReady(ctx context.Context, ready <-chan struct{}) error {
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("no connection within 10s")
	}
}

// Close stops listening and closes the connections.
func (n *PGNotifier) Close() {
	n.once.Do(func() {
		n.cancel()
		<-n.done
		n.pool.Close()
	})
}

// Publish tells every node that the runs have new events stored: one
// statement, one notice per run.
func (n *PGNotifier) Publish(ctx context.Context, runIDs []string) error {
	if len(runIDs) == 0 {
		return nil
	}
	_, err := n.pool.Exec(ctx, `SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id`, pgEvents, runIDs)
	if err != nil {
		return fmt.Errorf("cluster: notify: %w", err)
	}
	return nil
}

// RequestCancel asks every node to stop the run; the one executing it
// does.
func (n *PGNotifier) RequestCancel(ctx context.Context, runID string) error {
	if _, err := n.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, pgCancel, runID); err != nil {
		return fmt.Errorf("cluster: notify cancel of run %s: %w", runID, err)
	}
	return nil
}

// listen holds one connection in LISTEN, re-establishing it when it
// breaks.
func (n *PGNotifier) listen(ctx context.Context) {
	defer close(n.done)
	retry(ctx, n.logger, "PostgreSQL", n.listenOnce)
}

// retry runs session until ctx ends, pausing after each failure with a
// growing backoff (100 ms to 5 s; back to 100 ms after a session that
// lasted).
func retry(ctx context.Context, logger *slog.Logger, what string, session func(context.Context) error) {
	const first, most = 100 * time.Millisecond, 5 * time.Second
	pause := first
	for ctx.Err() == nil {
		began := time.Now()
		err := session(ctx)
		if ctx.Err() != nil {
			return
		}
		if time.Since(began) > most {
			pause = first
		}
		logger.Warn("listening for other nodes' notices failed; reconnecting", "via", what, "err", err, "in", pause)
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return
		}
		pause = min(2*pause, most)
	}
}

func (n *PGNotifier) listenOnce(ctx context.Context) error {
	conn, err := n.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection is in LISTEN: it is not given back to the pool.
	pc := conn.Hijack()
	defer func() { _ = pc.Close(context.Background()) }()
	if _, err := pc.Exec(ctx, "LISTEN "+pgEvents+"; LISTEN "+pgCancel); err != nil {
		return err
	}
	select {
	case <-n.ready:
		n.wakeAll() // notices may have been missed while reconnecting
	default:
		close(n.ready)
	}
	for {
		wctx, cancel := context.WithTimeout(ctx, n.quiet)
		note, err := pc.WaitForNotification(wctx)
		cancel()
		switch {
		case err == nil:
			n.dispatch(note)
		case ctx.Err() == nil && pgconn.Timeout(err):
			// Quiet for a while: is the connection still there? (A
			// timeout leaves it usable; notices that arrive during the
			// query are kept for the next wait.)
			pctx, cancel := context.WithTimeout(ctx, n.quiet)
			_, err := pc.Exec(pctx, "SELECT 1")
			cancel()
			if err != nil {
				return fmt.Errorf("the listening connection does not answer: %w", err)
			}
		default:
			return err
		}
	}
}

func (n *PGNotifier) dispatch(note *pgconn.Notification) {
	switch note.Channel {
	case pgEvents:
		n.wake(note.Payload)
	case pgCancel:
		n.cancelled(note.Payload)
	}
}
