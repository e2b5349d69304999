package search

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fakeProvider answers with fixed results or a fixed error.
type fakeProvider struct {
	name  string
	res   []Result
	err   error
	calls int
}

func (f *fakeProvider) Name() string { return f.name }

func (f *fakeProvider) Search(ctx context.Context, q Query) ([]Result, error) {
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	return append([]Result(nil), f.res...), nil
}

type failover struct {
	failed, next string
	err          error
}

func TestChainFailoverToHTTPProviders(t *testing.T) {
	searx := newScriptServer(t, reply{status: 403, body: "Forbidden"})
	tavily := newScriptServer(t, reply{status: 200, body: tavilyBody})
	var events []failover
	chain := NewChain(
		NewSearXNG(searx.URL, searx.Client(), fast()),
		nil, // skipped
		NewTavily(tavilyKey, tavily.URL, tavily.Client(), fast()),
	).WithFailover(func(failed string, err error, next string) {
		events = append(events, failover{failed, next, err})
	})

	got, err := chain.Search(t.Context(), Query{Text: "messi"})
	if err != nil {
		t.Fatalf("Search: %v", err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d results, want 2", len(got))
	}
	for _, r := range got {
		if r.Provider != "tavily" {
			t.Errorf("Provider = %q, want tavily", r.Provider)
		}
	}
	if len(events) != 1 || events[0].failed != "searxng" || events[0].next != "tavily" || !errors.Is(events[0].err, ErrJSONDisabled) {
		t.Errorf("failover events = %+v, want one searxng -> tavily with ErrJSONDisabled", events)
	}
	if chain.Name() != "chain(searxng,tavily)" {
		t.Errorf("Name = %q", chain.Name())
	}
}

func TestChain(t *testing.T) {
	errA := errors.New("boom")
	tests := []struct {
		name       string
		providers  []*fakeProvider
		wantErrIn  []string
		wantFrom   string
		wantEvents []string // "failed>next"
		wantCalls  []int
	}{
		{
			name:      "first succeeds, no failover",
			providers: []*fakeProvider{{name: "a", res: []Result{{URL: "u"}}}, {name: "b"}},
			wantFrom:  "a",
			wantCalls: []int{1, 0},
		},
		{
			name: "second answers and is named",
			providers: []*fakeProvider{
				{name: "a", err: errA},
				{name: "b", res: []Result{{URL: "u1"}, {URL: "u2"}}},
			},
			wantFrom:   "b",
			wantEvents: []string{"a>b"},
			wantCalls:  []int{1, 1},
		},
		{
			name: "provider name set by the provider is kept",
			providers: []*fakeProvider{
				{name: "a", err: errA},
				{name: "b", res: []Result{{URL: "u", Provider: "inner"}}},
			},
			wantFrom:   "inner",
			wantEvents: []string{"a>b"},
			wantCalls:  []int{1, 1},
		},
		{
			name: "empty answer is a success",
			providers: []*fakeProvider{
				{name: "a", res: nil},
				{name: "b", res: []Result{{URL: "u"}}},
			},
			wantCalls: []int{1, 0},
		},
		{
			name: "all fail, each named",
			providers: []*fakeProvider{
				{name: "a", err: errA},
				{name: "b", err: errors.New("b: quota exceeded")},
				{name: "c", err: &Error{Provider: "c", Message: "HTTP 500"}},
			},
			wantErrIn:  []string{"all 3 search providers failed", "a: boom", "b: quota exceeded", "c: HTTP 500"},
			wantEvents: []string{"a>b", "b>c"},
			wantCalls:  []int{1, 1, 1},
		},
		{
			name:      "no providers",
			wantErrIn: []string{"no search provider is configured"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := make([]Provider, len(tt.providers))
			for i, p := range tt.providers {
				ps[i] = p
			}
			var events []string
			c := &Chain{Providers: ps, OnFailover: func(failed string, err error, next string) {
				if err == nil {
					t.Error("OnFailover got a nil error")
				}
				events = append(events, failed+">"+next)
			}}
			got, err := c.Search(t.Context(), Query{Text: "q"})
			if len(tt.wantErrIn) > 0 {
				if err == nil {
					t.Fatalf("Search succeeded, want an error")
				}
				for _, s := range tt.wantErrIn {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				if len(tt.providers) > 0 && !errors.Is(err, errA) {
					t.Errorf("errors.Is(err, errA) = false for %v", err)
				}
			} else if err != nil {
				t.Fatalf("Search: %v", err)
			}
			for _, r := range got {
				if r.Provider != tt.wantFrom {
					t.Errorf("Provider = %q, want %q", r.Provider, tt.wantFrom)
				}
			}
			if strings.Join(events, ",") != strings.Join(tt.wantEvents, ",") {
				t.Errorf("events = %v, want %v", events, tt.wantEvents)
			}
			for i, p := range tt.providers {
				if p.calls != tt.wantCalls[i] {
					t.Errorf("provider %s called %d times, want %d", p.name, p.calls, tt.wantCalls[i])
				}
			}
		})
	}
}

func TestChainStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	b := &fakeProvider{name: "b", res: []Result{{URL: "u"}}}
	a := &cancelProvider{cancel: cancel}
	hooked := false
	c := NewChain(a, b).WithFailover(func(string, error, string) { hooked = true })
	_, err := c.Search(ctx, Query{Text: "q"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if b.calls != 0 || hooked {
		t.Errorf("fallback called %d times, hook %v; want neither after cancellation", b.calls, hooked)
	}
}

// cancelProvider cancels the run while "searching" and fails with the
// context's error, as a real provider would.
type cancelProvider struct{ cancel context.CancelFunc }

func (c *cancelProvider) Name() string { return "a" }

func (c *cancelProvider) Search(ctx context.Context, q Query) ([]Result, error) {
	c.cancel()
	<-ctx.Done()
	return nil, ctx.Err()
}
