package store

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sova-ai/sova"
)

// While a write transaction runs, the writers queued behind it hold no
// pooled connection, so a read still gets one at once; and every queued
// write succeeds once the transaction ends.
func TestWritersWaitingForSQLiteHoldNoConnection(t *testing.T) {
	s, err := openSQLite(t.Context(), filepath.Join(t.TempDir(), "sova.db"), Pool{SQLite: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	seed := &sova.Chat{UserID: "ann", Mode: "search"}
	if err := s.CreateChat(t.Context(), seed); err != nil {
		t.Fatal(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- s.inTx(t.Context(), func(tx conn) error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			c := &sova.Chat{UserID: "ann", Mode: "search", Title: fmt.Sprint("chat ", i)}
			if err := s.CreateChat(t.Context(), c); err != nil {
				errs <- err
			}
		})
	}
	time.Sleep(200 * time.Millisecond) // the writers queue
	start := time.Now()
	if _, err := s.GetChat(t.Context(), "ann", seed.ID); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("a read waited %s behind queued writers", took)
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if chats, err := s.ListChats(t.Context(), "ann", 100, 0); err != nil || len(chats) != 21 {
		t.Errorf("%d chats (%v), want 21", len(chats), err)
	}
}

// Writes a person waits for take their turn before background writes
// that were waiting first.
func TestUrgentWritesGoFirst(t *testing.T) {
	g := newWriteGate(nil, nil)
	if err := g.enter(t.Context()); err != nil {
		t.Fatal(err)
	}
	order := make(chan string, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		if g.enter(t.Context()) == nil {
			order <- "background"
			g.leave()
		}
	})
	waitQueued(t, g, 1, 1)
	wg.Go(func() {
		if g.enter(Urgent(t.Context())) == nil {
			order <- "urgent"
			g.leave()
		}
	})
	waitQueued(t, g, 0, 1)
	g.leave()
	wg.Wait()
	if first := <-order; first != "urgent" {
		t.Errorf("%s went first, want the urgent write", first)
	}
	if g.busy {
		t.Error("the gate is still taken")
	}
}

func waitQueued(t *testing.T, g *writeGate, class, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		g.mu.Lock()
		got := len(g.waiting[class])
		g.mu.Unlock()
		if got == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writers waiting in class %d, want %d", got, class, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// On PostgreSQL, work under Urgent has connections of its own: with every
// connection of the main pool held by other work, a new question is still
// stored at once.
func TestUrgentWorkHasItsOwnPostgresConnections(t *testing.T) {
	base := os.Getenv("SOVA_TEST_DATABASE_URL")
	if base == "" {
		t.Skip("PostgreSQL tests skipped: set SOVA_TEST_DATABASE_URL")
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	schema := fmt.Sprintf("sova_test_urgent_%d", time.Now().UnixNano())
	admin, err := pgx.Connect(t.Context(), base)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(context.Background())
	if _, err := admin.Exec(t.Context(), "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "DROP SCHEMA "+schema+" CASCADE") })
	q := u.Query()
	q.Set("search_path", schema)
	q.Del("pool_max_conns")
	u.RawQuery = q.Encode()
	s, err := openPostgres(t.Context(), u.String(), Pool{Postgres: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	inside, release := make(chan struct{}), make(chan struct{})
	held := make(chan error, 1)
	go func() {
		held <- s.inTx(t.Context(), func(tx conn) error {
			close(inside)
			<-release
			return nil
		})
	}()
	<-inside
	ctx, cancel := context.WithTimeout(Urgent(t.Context()), 5*time.Second)
	defer cancel()
	c := &sova.Chat{UserID: "ann", Mode: "search"}
	if err := s.CreateChat(ctx, c); err != nil {
		t.Errorf("an urgent write with the main pool taken: %v", err)
	}
	if _, err := s.GetChat(ctx, "ann", c.ID); err != nil {
		t.Errorf("an urgent read with the main pool taken: %v", err)
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatal(err)
	}
}
