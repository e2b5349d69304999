package store

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

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
