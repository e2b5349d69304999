package search

import (
	"context"
	"errors"
	"sync"
)

// wikipediaSlots is how many places of a keyless answer Wikipedia may take
// when the web results would fill them all.
const wikipediaSlots = 2

// Keyless searches the web with DuckDuckGo and Wikipedia at once, neither
// of which needs an account, so that Sova finds something out of the box.
// The web results come first; up to two Wikipedia articles are kept even
// when the web results alone would fill the answer. The answer is an
// error only when both fail.
type Keyless struct {
	Web       Provider // DuckDuckGo, normally
	Reference Provider // Wikipedia, normally
}

// NewKeyless returns the keyless provider over the two given providers.
func NewKeyless(web, reference Provider) *Keyless {
	return &Keyless{Web: web, Reference: reference}
}

// Name returns "keyless".
func (k *Keyless) Name() string { return "keyless" }

// Search queries both providers in parallel and merges their results.
func (k *Keyless) Search(ctx context.Context, q Query) ([]Result, error) {
	var (
		wg             sync.WaitGroup
		web, ref       []Result
		webErr, refErr error
	)
	wg.Add(2)
	go func() {
		defer wg.Done()
		web, webErr = k.Web.Search(ctx, q)
	}()
	go func() {
		defer wg.Done()
		ref, refErr = k.Reference.Search(ctx, q)
	}()
	wg.Wait()
	if webErr != nil && refErr != nil {
		return nil, errors.Join(named(k.Web.Name(), webErr), named(k.Reference.Name(), refErr))
	}
	limit := q.maxResults()
	keepRef := min(len(ref), wikipediaSlots, limit)
	if room := limit - len(web); room > keepRef {
		keepRef = min(len(ref), room)
	}
	if len(web) > limit-keepRef {
		web = web[:limit-keepRef]
	}
	return Dedupe(append(web, ref[:keepRef]...)), nil
}
