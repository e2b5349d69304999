package search

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// slowProvider answers after a pause, counting the queries it receives.
type slowProvider struct {
	calls atomic.Int32
	delay time.Duration
}

func (p *slowProvider) Name() string { return "slow" }

func (p *slowProvider) Search(ctx context.Context, q Query) ([]Result, error) {
	p.calls.Add(1)
	select {
	case <-time.After(p.delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return []Result{{URL: "https://example.com/" + q.Text, Title: q.Text}}, nil
}

func TestSharedSendsAQueryInFlightOnce(t *testing.T) {
	for _, tc := range []struct {
		name    string
		queries []string
		want    int32
	}{
		{"same query, case and spaces aside", []string{"Gold standard", "gold  standard", "GOLD standard", "gold standard"}, 1},
		{"different queries", []string{"gold", "silver", "copper"}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &slowProvider{delay: 50 * time.Millisecond}
			s := Shared(p)
			var wg sync.WaitGroup
			results := make([][]Result, len(tc.queries))
			for i, q := range tc.queries {
				wg.Go(func() {
					res, err := s.Search(context.Background(), Query{Text: q})
					if err != nil || len(res) != 1 {
						t.Errorf("%q: %v, %d results", q, err, len(res))
					}
					results[i] = res
				})
			}
			wg.Wait()
			if got := p.calls.Load(); got != tc.want {
				t.Errorf("provider asked %d times, want %d", got, tc.want)
			}
			// Each caller owns its results.
			results[0][0].Title = "changed"
			for i := 1; i < len(results); i++ {
				if results[i][0].Title == "changed" {
					t.Errorf("caller %d sees another caller's change", i)
				}
			}
		})
	}
}

func TestSharedDoesNotCacheFinishedQueries(t *testing.T) {
	p := &slowProvider{}
	s := Shared(p)
	for range 2 {
		if _, err := s.Search(context.Background(), Query{Text: "q"}); err != nil {
			t.Fatal(err)
		}
	}
	if p.calls.Load() != 2 {
		t.Errorf("provider asked %d times, want 2", p.calls.Load())
	}
}

// A shared provider still searches images when its provider does, and
// says it cannot when it does not; a chain of such wrappers finds the one
// that can.
func TestSharedPassesImageSearchThrough(t *testing.T) {
	withImages := &imageFake{}
	c := &Chain{Providers: []Provider{Shared(plainFake{}), Shared(withImages)}}
	imgs, err := c.SearchImages(t.Context(), Query{Text: "tide"})
	if err != nil || len(imgs) != 1 || withImages.calls != 1 {
		t.Fatalf("images %v, err %v, calls %d", imgs, err, withImages.calls)
	}
	if _, err := Shared(plainFake{}).(ImageSearcher).SearchImages(t.Context(), Query{Text: "x"}); !errors.Is(err, ErrNoImageSearch) {
		t.Errorf("a provider without images: %v", err)
	}
}

type plainFake struct{}

func (plainFake) Name() string { return "plain" }
func (plainFake) Search(context.Context, Query) ([]Result, error) {
	return []Result{{URL: "https://example.com/", Title: "x"}}, nil
}

type imageFake struct{ calls int }

func (*imageFake) Name() string { return "pictures" }
func (*imageFake) Search(context.Context, Query) ([]Result, error) {
	return nil, nil
}
func (f *imageFake) SearchImages(context.Context, Query) ([]Image, error) {
	f.calls++
	return []Image{{URL: "https://example.com/a.png"}}, nil
}
