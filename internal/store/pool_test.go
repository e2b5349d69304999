package store_test

import (
	"fmt"
	neturl "net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/store"
	"github.com/sova-ai/sova/internal/store/storetest"
)

// Many requests at once open no more connections than the pool's size:
// on SQLite they wait in the pool rather than in SQLite's busy handler
// (where some gave up with SQLITE_BUSY), and on PostgreSQL N nodes take a
// known share of max_connections. Every write succeeds.
func TestConnectionsBounded(t *testing.T) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			const size = 3
			url := ""
			if engine == "postgres" {
				// The setting, not the test URL's own pool_max_conns.
				u, err := neturl.Parse(storetest.PostgresDSN(t))
				if err != nil {
					t.Fatal(err)
				}
				q := u.Query()
				q.Del("pool_max_conns")
				u.RawQuery = q.Encode()
				url = u.String()
			}
			s, err := store.OpenPool(t.Context(), url, t.TempDir(), store.Pool{Postgres: size, SQLite: size})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			var peak atomic.Int64
			stop := make(chan struct{})
			var watch sync.WaitGroup
			watch.Go(func() {
				for {
					open, most := s.Conns()
					if most != size {
						t.Errorf("pool bound %d, want %d", most, size)
						return
					}
					if int64(open) > peak.Load() {
						peak.Store(int64(open))
					}
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
				}
			})
			var wg sync.WaitGroup
			var failed atomic.Int64
			for i := range 200 {
				wg.Go(func() {
					ctx := t.Context()
					c := &sova.Chat{UserID: "ann", Mode: "search"}
					if err := s.CreateChat(ctx, c); err != nil {
						failed.Add(1)
						t.Log(err)
						return
					}
					m := &sova.Message{ChatID: c.ID, Role: "user", Content: fmt.Sprint("question ", i)}
					if err := s.AddMessage(ctx, "ann", m); err != nil {
						failed.Add(1)
						t.Log(err)
						return
					}
					if _, err := s.ListMessages(ctx, "ann", c.ID); err != nil {
						failed.Add(1)
						t.Log(err)
					}
				})
			}
			wg.Wait()
			close(stop)
			watch.Wait()
			if failed.Load() != 0 || peak.Load() > size {
				t.Errorf("%d of 200 failed; %d connections open at most, want ≤ %d", failed.Load(), peak.Load(), size)
			}
		})
	}
}
