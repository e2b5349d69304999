package memory_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/sova-ai/sova/internal/memory"
	"github.com/sova-ai/sova/internal/store"
)

// BenchmarkBuiltinSearch searches a person who keeps the most memories
// allowed by default (5000): read from SQLite and ranked with BM25.
func BenchmarkBuiltinSearch(b *testing.B) {
	st, err := store.OpenSQLite(b.Context(), filepath.Join(b.TempDir(), "sova.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s := &memory.Builtin{Store: st}
	for i := range memory.DefaultMaxPerUser {
		if _, err := s.Add(b.Context(), "u", fmt.Sprintf("Memory %d: my colleague number %d lives in city %d and likes tea sort %d", i, i, i%97, i%13)); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Search(b.Context(), "u", "which colleague lives in city 42", 10); err != nil {
			b.Fatal(err)
		}
	}
}
