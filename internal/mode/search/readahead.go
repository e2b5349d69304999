package search

import (
	"context"
	"sync"

	"github.com/sova-ai/sova/internal/fetch"
)

// readAhead reads pages before the run knows it will read them: the best
// pages of the iteration before the last are fetched and summarised while
// the last iteration searches (seed 001 §2 reads the top pages after it;
// they usually are the same pages). Nothing of a page read ahead is shown
// or kept until readPages takes it; what is not taken is cancelled when
// the run leaves (stop). It is owned by one Run.
type readAhead struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	mu     sync.Mutex
	reads  map[string]*aheadRead
}

// aheadRead is one page read ahead: its fetch, then its excerpt and
// summary for the focus known when it started.
type aheadRead struct {
	fetched chan struct{}
	pg      *fetch.Page
	err     error

	summarised chan struct{}
	ex         fetch.Excerpt
	sum        string
	sumErr     error
}

func newReadAhead(ctx context.Context) *readAhead {
	ctx, cancel := context.WithCancel(ctx)
	return &readAhead{ctx: ctx, cancel: cancel, reads: map[string]*aheadRead{}}
}

// start reads url ahead, once.
func (a *readAhead) start(url string, fetchPage func(context.Context) (*fetch.Page, error),
	summarise func(context.Context, *fetch.Page) (fetch.Excerpt, string, error)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.reads[url]; ok || a.ctx.Err() != nil {
		return
	}
	r := &aheadRead{fetched: make(chan struct{}), summarised: make(chan struct{})}
	a.reads[url] = r
	a.wg.Go(func() {
		r.pg, r.err = fetchPage(a.ctx)
		close(r.fetched)
		if r.err == nil {
			r.ex, r.sum, r.sumErr = summarise(a.ctx, r.pg)
		}
		close(r.summarised)
	})
}

// take returns the read of url made ahead, if there is one; nil
// otherwise. A page is taken at most once.
func (a *readAhead) take(url string) *aheadRead {
	a.mu.Lock()
	defer a.mu.Unlock()
	r := a.reads[url]
	delete(a.reads, url)
	return r
}

// stop cancels what was not taken and waits for it.
func (a *readAhead) stop() {
	a.cancel()
	a.wg.Wait()
}

// page waits for the fetch.
func (r *aheadRead) page(ctx context.Context) (*fetch.Page, error) {
	select {
	case <-r.fetched:
		return r.pg, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// summary waits for the excerpt and summary made ahead.
func (r *aheadRead) summary(ctx context.Context) (fetch.Excerpt, string, error) {
	select {
	case <-r.summarised:
		if r.err != nil {
			return fetch.Excerpt{}, "", r.err
		}
		return r.ex, r.sum, r.sumErr
	case <-ctx.Done():
		return fetch.Excerpt{}, "", ctx.Err()
	}
}
