package redislimit

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// Cluster is one node's handle on the limits shared through Redis: the
// search providers' query slots and rates (search.Coordinator) and the
// places of users' long runs (limits.Places).
type Cluster struct {
	sem  *Semaphore
	rate *Rate
}

// New returns the shared limits on c.
func New(c redis.UniversalClient, o Options) *Cluster {
	return &Cluster{sem: NewSemaphore(c, o), rate: NewRate(c, o)}
}

// Semaphore is the cluster's semaphore.
func (c *Cluster) Semaphore() *Semaphore { return c.sem }

// Acquire waits for one of key's n slots and returns what frees it.
func (c *Cluster) Acquire(ctx context.Context, key string, n int) (func(), error) {
	l, err := c.sem.Acquire(ctx, key, n)
	if err != nil {
		return nil, err
	}
	return l.Release, nil
}

// Wait waits until key's shared rate allows one more query.
func (c *Cluster) Wait(ctx context.Context, key string, perSecond float64, burst int) error {
	return c.rate.Wait(ctx, key, perSecond, burst)
}

// TryHold takes one of key's n places at once; ok is false when none is
// free.
func (c *Cluster) TryHold(ctx context.Context, key string, n int) (release func(), ok bool, err error) {
	l, err := c.sem.TryAcquire(ctx, key, n)
	if err != nil || l == nil {
		return nil, false, err
	}
	return l.Release, true, nil
}

// Held returns how many of key's places are taken.
func (c *Cluster) Held(ctx context.Context, key string) (int, error) {
	return c.sem.Held(ctx, key)
}
