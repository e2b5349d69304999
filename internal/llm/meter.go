package llm

import (
	"context"
	"sync"
)

// Meter sums the token usage of the calls made during one run. The zero
// value is ready to use, and a nil *Meter ignores Add, so code can meter
// unconditionally.
type Meter struct {
	mu    sync.Mutex
	total Usage
	calls int
}

// Add records the usage of one successful call.
func (m *Meter) Add(u Usage) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total.PromptTokens += u.PromptTokens
	m.total.CompletionTokens += u.CompletionTokens
	m.total.TotalTokens += u.TotalTokens
	m.calls++
}

// Total is the usage summed over all recorded calls.
func (m *Meter) Total() Usage {
	if m == nil {
		return Usage{}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.total
}

// Calls is the number of recorded calls.
func (m *Meter) Calls() int {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls
}

type meterKey struct{}

// WithMeter returns a context whose model calls are recorded in m.
func WithMeter(ctx context.Context, m *Meter) context.Context {
	return context.WithValue(ctx, meterKey{}, m)
}

// MeterFrom returns the meter set by WithMeter, or nil.
func MeterFrom(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}
