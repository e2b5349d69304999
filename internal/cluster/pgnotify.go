// Package cluster connects the Sova nodes that share one PostgreSQL
// database: it tells the nodes following a run that the node executing it
// has stored new events (LISTEN/NOTIFY), so a client on any node streams
// any run live.
package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// channel is the NOTIFY channel; the payload is a run id.
const channel = "sova_run_events"

// PGNotifier publishes and receives "run has new events" notices through
// PostgreSQL's LISTEN/NOTIFY. One connection listens for the node; each
// follower subscribes to the runs it follows. A notice only says "read
// the store": followers read events from the run's log, so a notice lost
// while the listening connection is re-established costs latency, not
// events (every subscriber is woken when it is back).
type PGNotifier struct {
	pool   *pgxpool.Pool
	logger *slog.Logger

	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}

	cancel context.CancelFunc
	done   chan struct{}
	ready  chan struct{} // closed once the first LISTEN is in place
	once   sync.Once
}

// NewPGNotifier connects to the database at databaseURL and starts
// listening; Close stops it.
func NewPGNotifier(ctx context.Context, databaseURL string, logger *slog.Logger) (*PGNotifier, error) {
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
	n := &PGNotifier{pool: pool, logger: logger, subs: map[string]map[chan struct{}]struct{}{},
		cancel: cancel, done: make(chan struct{}), ready: make(chan struct{})}
	go n.listen(lctx)
	select {
	case <-n.ready:
		return n, nil
	case <-ctx.Done():
		n.Close()
		return nil, fmt.Errorf("cluster: listening for run events: %w", ctx.Err())
	case <-time.After(10 * time.Second):
		n.Close()
		return nil, fmt.Errorf("cluster: listening for run events: no connection within 10s")
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

// Publish tells every node that the runs have new events stored.
func (n *PGNotifier) Publish(ctx context.Context, runIDs []string) error {
	if len(runIDs) == 0 {
		return nil
	}
	_, err := n.pool.Exec(ctx, `SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id`, channel, runIDs)
	if err != nil {
		return fmt.Errorf("cluster: notify: %w", err)
	}
	return nil
}

// Subscribe returns a channel that receives a token (coalesced) whenever
// the run has new events, and a function that ends the subscription.
func (n *PGNotifier) Subscribe(runID string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	n.mu.Lock()
	if n.subs[runID] == nil {
		n.subs[runID] = map[chan struct{}]struct{}{}
	}
	n.subs[runID][ch] = struct{}{}
	n.mu.Unlock()
	return ch, func() {
		n.mu.Lock()
		delete(n.subs[runID], ch)
		if len(n.subs[runID]) == 0 {
			delete(n.subs, runID)
		}
		n.mu.Unlock()
	}
}

func (n *PGNotifier) wake(runID string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for ch := range n.subs[runID] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (n *PGNotifier) wakeAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, chans := range n.subs {
		for ch := range chans {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

// listen holds one connection in LISTEN, re-establishing it when it
// breaks.
func (n *PGNotifier) listen(ctx context.Context) {
	defer close(n.done)
	pause := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := n.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		n.logger.Warn("listening for run events failed; reconnecting", "err", err, "in", pause)
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return
		}
		pause = min(2*pause, 5*time.Second)
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
	if _, err := pc.Exec(ctx, "LISTEN "+channel); err != nil {
		return err
	}
	select {
	case <-n.ready:
		n.wakeAll() // notices may have been missed while reconnecting
	default:
		close(n.ready)
	}
	for {
		note, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		n.wake(note.Payload)
	}
}
