package auth_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sova-ai/sova"
	"github.com/sova-ai/sova/internal/auth"
)

// slowCount counts accounts (none) and, once blocked, waits until released,
// as a store whose connections are all busy.
type slowCount struct {
	block   atomic.Bool
	entered chan struct{}
	release chan struct{}
}

func (s *slowCount) CountAccounts(ctx context.Context) (int, error) {
	if s.block.Load() {
		close(s.entered)
		select {
		case <-s.release:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return 0, nil
}

// While one request rechecks whether an account exists and the store is
// slow to answer, the other requests are answered from the last check
// instead of waiting for it.
func TestAutoRecheckHoldsNoOtherRequest(t *testing.T) {
	st := &slowCount{entered: make(chan struct{}), release: make(chan struct{})}
	a := &auth.Auto{Store: st}
	req := httptest.NewRequest("GET", "/api/chats", nil)
	if u, err := a.Authenticate(req); err != nil || u.ID != sova.LocalUserID {
		t.Fatalf("first check: %+v, %v", u, err)
	}
	time.Sleep(2100 * time.Millisecond) // past the recheck interval
	st.block.Store(true)
	rechecked := make(chan error, 1)
	go func() {
		_, err := a.Authenticate(req)
		rechecked <- err
	}()
	<-st.entered
	done := make(chan struct{})
	go func() {
		defer close(done)
		if u, err := a.Authenticate(req); err != nil || u.ID != sova.LocalUserID {
			t.Errorf("during the recheck: %+v, %v", u, err)
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("a request waited for another's recheck")
	}
	close(st.release)
	if err := <-rechecked; err != nil {
		t.Fatal(err)
	}
	<-done
}
