package run

import (
	"context"
	"slices"
	"sync"
	"time"
)

// admission bounds the runs that execute at once on this node
// (Options.MaxRunning, SOVA_MAX_RUNNING). A run beyond the bound waits in a
// first-come queue after its start event, and its stream says how many runs
// are ahead of it: hundreds of runs sharing two cores all slow down
// together, and every new request's first byte waits behind them, while a
// queue lets the admitted runs finish at their usual speed. Storing the
// question and sending the stream's start never wait on the queue.
type admission struct {
	limit int // 0: no bound

	mu      sync.Mutex
	running int
	queue   []*ticket // in arrival order
}

type ticket struct {
	admitted chan struct{} // closed when the run may execute
}

// queueReport is how often a waiting run says again where it is in the
// queue, when that has changed.
const queueReport = 2 * time.Second

// acquire returns once the run may execute, calling ahead with the number
// of runs before it whenever it waits and that number changes (at most
// every queueReport), or with ctx's error when it ends first. release
// frees the slot.
func (a *admission) acquire(ctx context.Context, ahead func(n int)) (release func(), err error) {
	if a == nil || a.limit <= 0 {
		return func() {}, nil
	}
	a.mu.Lock()
	if a.running < a.limit && len(a.queue) == 0 {
		a.running++
		a.mu.Unlock()
		return a.releaser(), nil
	}
	t := &ticket{admitted: make(chan struct{})}
	a.queue = append(a.queue, t)
	n := len(a.queue) - 1
	a.mu.Unlock()
	ahead(n)
	tick := time.NewTicker(queueReport)
	defer tick.Stop()
	for {
		select {
		case <-t.admitted:
			return a.releaser(), nil
		case <-ctx.Done():
			a.mu.Lock()
			if i := slices.Index(a.queue, t); i >= 0 {
				a.queue = slices.Delete(a.queue, i, i+1)
				a.mu.Unlock()
				return nil, ctx.Err()
			}
			a.mu.Unlock()
			// Admitted meanwhile: the slot is this run's to give back.
			a.releaser()()
			return nil, ctx.Err()
		case <-tick.C:
			a.mu.Lock()
			i := slices.Index(a.queue, t)
			a.mu.Unlock()
			if i >= 0 && i != n {
				n = i
				ahead(n)
			}
		}
	}
}

// releaser returns the function that frees one slot, once.
func (a *admission) releaser() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.running--
			for a.running < a.limit && len(a.queue) > 0 {
				t := a.queue[0]
				a.queue = slices.Delete(a.queue, 0, 1)
				a.running++
				close(t.admitted)
			}
		})
	}
}

// waiting reports the runs in the queue and those executing.
func (a *admission) counts() (running, waiting int) {
	if a == nil {
		return 0, 0
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running, len(a.queue)
}
