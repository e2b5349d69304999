// Package inflight shares work in flight: concurrent calls for the same
// key (a page's normalised URL, a provider and query) make one call and
// all get its result. Unlike golang.org/x/sync/singleflight, each caller
// waits under its own context, and the shared call runs under a context
// of its own that ends only when every caller waiting for it has left, so
// one caller's cancel neither fails the others nor leaves a call nobody
// waits for running.
package inflight

import (
	"context"
	"sync"
)

// Group shares calls by key. The zero value is ready; a Group must not be
// copied after first use.
type Group[K comparable, V any] struct {
	mu    sync.Mutex
	calls map[K]*call[V]
}

type call[V any] struct {
	done    chan struct{}
	val     V
	err     error
	waiters int
	cancel  context.CancelFunc
}

// Do returns the result of fn for key: fn's own, or that of a call for the
// same key already running, in which case shared is true. fn runs with a
// context that carries ctx's values but not its deadline or cancel; it is
// cancelled when every caller has left. A caller whose ctx ends first gets
// ctx's error and leaves the call to the others.
func (g *Group[K, V]) Do(ctx context.Context, key K, fn func(ctx context.Context) (V, error)) (v V, shared bool, err error) {
	g.mu.Lock()
	if g.calls == nil {
		g.calls = map[K]*call[V]{}
	}
	c, ok := g.calls[key]
	if ok {
		c.waiters++
	} else {
		cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &call[V]{done: make(chan struct{}), waiters: 1, cancel: cancel}
		g.calls[key] = c
		go func() {
			defer cancel()
			c.val, c.err = fn(cctx)
			g.mu.Lock()
			if g.calls[key] == c {
				delete(g.calls, key)
			}
			g.mu.Unlock()
			close(c.done)
		}()
	}
	g.mu.Unlock()

	select {
	case <-c.done:
		return c.val, ok, c.err
	case <-ctx.Done():
		g.mu.Lock()
		c.waiters--
		if c.waiters == 0 {
			// Nobody waits any more: stop the call, and let the next
			// caller for this key start afresh rather than join a call
			// being cancelled.
			c.cancel()
			if g.calls[key] == c {
				delete(g.calls, key)
			}
		}
		g.mu.Unlock()
		var zero V
		return zero, ok, ctx.Err()
	}
}
