package inflight

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestConcurrentCallsShareOne(t *testing.T) {
	var g Group[string, int]
	var calls atomic.Int32
	release := make(chan struct{})
	fn := func(ctx context.Context) (int, error) {
		calls.Add(1)
		<-release
		return 42, nil
	}
	const n = 20
	var wg sync.WaitGroup
	var shared atomic.Int32
	started := make(chan struct{}, n)
	for range n {
		wg.Go(func() {
			started <- struct{}{}
			v, sh, err := g.Do(context.Background(), "k", fn)
			if v != 42 || err != nil {
				t.Errorf("got %d, %v", v, err)
			}
			if sh {
				shared.Add(1)
			}
		})
	}
	for range n {
		<-started
	}
	time.Sleep(20 * time.Millisecond) // let every caller join
	close(release)
	wg.Wait()
	if c := calls.Load(); c != 1 {
		t.Errorf("fn ran %d times, want 1", c)
	}
	if s := shared.Load(); s != n-1 {
		t.Errorf("%d callers shared, want %d", s, n-1)
	}
	// Once done, a later call runs again.
	release = make(chan struct{})
	close(release)
	if _, sh, _ := g.Do(context.Background(), "k", fn); sh || calls.Load() != 2 {
		t.Errorf("a call after the first finished was shared (%v) or not made (%d calls)", sh, calls.Load())
	}
}

func TestOneCallerLeavingDoesNotFailTheOthers(t *testing.T) {
	var g Group[string, string]
	release := make(chan struct{})
	var cancelled atomic.Bool
	fn := func(ctx context.Context) (string, error) {
		select {
		case <-release:
			return "page", nil
		case <-ctx.Done():
			cancelled.Store(true)
			return "", ctx.Err()
		}
	}
	first, cancelFirst := context.WithCancel(context.Background())
	errFirst := make(chan error, 1)
	go func() {
		_, _, err := g.Do(first, "u", fn)
		errFirst <- err
	}()
	time.Sleep(10 * time.Millisecond)
	got := make(chan string, 1)
	go func() {
		v, _, _ := g.Do(context.Background(), "u", fn)
		got <- v
	}()
	time.Sleep(10 * time.Millisecond)
	cancelFirst()
	if err := <-errFirst; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled caller got %v", err)
	}
	close(release)
	if v := <-got; v != "page" {
		t.Errorf("the remaining caller got %q", v)
	}
	if cancelled.Load() {
		t.Error("the shared call was cancelled while a caller still waited")
	}
}

func TestCallStopsWhenEveryCallerLeft(t *testing.T) {
	var g Group[string, int]
	stopped := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(10 * time.Millisecond)
		cancel()
	}()
	_, _, err := g.Do(ctx, "k", func(ctx context.Context) (int, error) {
		<-ctx.Done()
		close(stopped)
		return 0, ctx.Err()
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
	select {
	case <-stopped:
	case <-time.After(time.Second):
		t.Fatal("the call went on with no caller left")
	}
}
