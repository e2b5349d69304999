package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisNotifier carries the notices through Redis pub/sub. One connection
// is subscribed for the node; notices are published on the client's pool.
// Redis pub/sub channels are not scoped by database number, so the
// channels name it: installations on one Redis with different database
// numbers do not hear each other.
type RedisNotifier struct {
	*hub
	client         *redis.Client
	logger         *slog.Logger
	events, cancel string        // channel names
	quiet          time.Duration // quietTime

	stop  context.CancelFunc
	done  chan struct{}
	ready chan struct{} // closed once the first subscription is in place
	once  sync.Once
}

// NewRedisNotifier connects to the Redis server at rawURL (redis:// or
// rediss://) and subscribes; Close stops it.
func NewRedisNotifier(ctx context.Context, rawURL string, logger *slog.Logger) (*RedisNotifier, error) {
	return newRedisNotifier(ctx, rawURL, logger, quietTime)
}

// newRedisNotifier is NewRedisNotifier with the subscribed connection's
// quiet time before a ping.
func newRedisNotifier(ctx context.Context, rawURL string, logger *slog.Logger, quiet time.Duration) (*RedisNotifier, error) {
	opt, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("SOVA_REDIS_URL: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client := redis.NewClient(opt)
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := client.Ping(pctx).Err(); err != nil {
		_ = client.Close()
		return nil, fmt.Errorf("SOVA_REDIS_URL: the Redis server does not answer: %w", err)
	}
	prefix := "sova:" + strconv.Itoa(opt.DB) + ":"
	lctx, stop := context.WithCancel(context.Background())
	n := &RedisNotifier{hub: newHub(), client: client, logger: logger,
		events: prefix + "run-events", cancel: prefix + "run-cancel", quiet: quiet,
		stop: stop, done: make(chan struct{}), ready: make(chan struct{})}
	go func() {
		defer close(n.done)
		retry(lctx, n.logger, "Redis", n.subscribeOnce)
	}()
	if err := awaitReady(ctx, n.ready); err != nil {
		n.Close()
		return nil, fmt.Errorf("cluster: subscribing to Redis (SOVA_REDIS_URL): %w", err)
	}
	return n, nil
}

// Close ends the subscription and closes the connections.
func (n *RedisNotifier) Close() {
	n.once.Do(func() {
		n.stop()
		<-n.done
		_ = n.client.Close()
	})
}

// Publish tells every node that the runs have new events stored: one
// message naming them all, separated by spaces (run ids have none).
func (n *RedisNotifier) Publish(ctx context.Context, runIDs []string) error {
	if len(runIDs) == 0 {
		return nil
	}
	if err := n.client.Publish(ctx, n.events, strings.Join(runIDs, " ")).Err(); err != nil {
		return fmt.Errorf("cluster: publish to Redis: %w", err)
	}
	return nil
}

// RequestCancel asks every node to stop the run; the one executing it
// does.
func (n *RedisNotifier) RequestCancel(ctx context.Context, runID string) error {
	if err := n.client.Publish(ctx, n.cancel, runID).Err(); err != nil {
		return fmt.Errorf("cluster: publish cancel of run %s to Redis: %w", runID, err)
	}
	return nil
}

// subscribeOnce holds one subscribed connection until it fails. Its own
// PubSub each time: go-redis would re-subscribe a broken one by itself,
// silently, and the followers must be woken after a gap.
func (n *RedisNotifier) subscribeOnce(ctx context.Context) error {
	ps := n.client.Subscribe(ctx, n.events, n.cancel)
	// A receive waits on the connection, not on ctx: closing it ends the
	// wait when the notifier closes.
	unhook := context.AfterFunc(ctx, func() { _ = ps.Close() })
	defer func() {
		unhook()
		_ = ps.Close()
	}()
	confirmed := 0
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, n.quiet)
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() || pinged {
				return err
			}
			// Quiet for a while: is the connection still there?
			if err := ps.Ping(ctx); err != nil {
				return err
			}
			pinged = true
			continue
		}
		pinged = false
		switch m := msg.(type) {
		case *redis.Message:
			switch m.Channel {
			case n.events:
				n.wakeIDs(m.Payload)
			case n.cancel:
				n.cancelled(m.Payload)
			}
		case *redis.Subscription:
			if m.Kind != "subscribe" {
				continue
			}
			if confirmed++; confirmed < 2 {
				continue
			}
			select {
			case <-n.ready:
				n.wakeAll() // notices may have been missed while reconnecting
			default:
				close(n.ready)
			}
		}
	}
}
