package cluster_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"

	"github.com/sova-ai/sova/internal/cluster"
	"github.com/sova-ai/sova/internal/store/storetest"
)

func uniqueName() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "sova-test-" + hex.EncodeToString(b[:])
}

// severable is a notifier and a way to cut its subscribed connection, as
// a network failure or a server restart would.
type severable struct {
	notifier
	cut func(t *testing.T)
}

var severables = []struct {
	name string
	open func(t *testing.T) severable
}{
	{"postgres", func(t *testing.T) severable {
		dsn := storetest.PostgresDSN(t)
		name := uniqueName()
		n, err := cluster.NewPGNotifier(t.Context(), dsn+"&application_name="+name, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Close)
		return severable{n, func(t *testing.T) {
			c, err := pgx.Connect(t.Context(), dsn)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close(t.Context())
			var killed int
			err = c.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE application_name=$1 AND query LIKE 'LISTEN%'`, name).Scan(&killed)
			if err != nil || killed != 1 {
				t.Fatalf("terminating the listening connection: %d, %v", killed, err)
			}
		}}
	}},
	{"redis", func(t *testing.T) severable {
		url := os.Getenv(redisURLEnv)
		if url == "" {
			t.Skipf("Redis tests skipped: set %s (e.g. redis://127.0.0.1:6379/0)", redisURLEnv)
		}
		name := uniqueName()
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		n, err := cluster.NewRedisNotifier(t.Context(), url+sep+"client_name="+name, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(n.Close)
		return severable{n, func(t *testing.T) {
			opt, _ := redis.ParseURL(url)
			c := redis.NewClient(opt)
			defer c.Close()
			list, err := c.ClientList(t.Context()).Result()
			if err != nil {
				t.Fatal(err)
			}
			killed := 0
			for line := range strings.Lines(list) {
				if strings.Contains(line, " name="+name+" ") && strings.Contains(line, " sub=2 ") {
					id := strings.TrimPrefix(strings.Fields(line)[0], "id=")
					if err := c.Do(t.Context(), "CLIENT", "KILL", "ID", id).Err(); err != nil {
						t.Fatal(err)
					}
					killed++
				}
			}
			if killed != 1 {
				t.Fatalf("%d subscribed connections named %s", killed, name)
			}
		}}
	}},
}

// token waits for a token on ch.
func token(ch <-chan struct{}, within time.Duration) bool {
	select {
	case <-ch:
		return true
	case <-time.After(within):
		return false
	}
}

// A notice wakes the followers of its run only, a cancel notice reaches
// OnCancel, and when the subscribed connection breaks every follower is
// woken once it is back (notices may have been lost meanwhile), after
// which notices flow again.
func TestNoticesAndReconnection(t *testing.T) {
	for _, sv := range severables {
		t.Run(sv.name, func(t *testing.T) {
			n := sv.open(t)
			ctx := context.Background()
			cancels := make(chan string, 4)
			n.OnCancel(func(id string) { cancels <- id })
			x, stopX := n.Subscribe("run-x-" + uniqueName())
			defer stopX()
			idY := "run-y-" + uniqueName()
			y, stopY := n.Subscribe(idY)
			defer stopY()

			if err := n.Publish(ctx, []string{idY, "run-z"}); err != nil {
				t.Fatal(err)
			}
			if !token(y, 5*time.Second) {
				t.Fatal("a notice of run y did not wake its follower")
			}
			if token(x, 200*time.Millisecond) {
				t.Fatal("a notice of run y woke the follower of run x")
			}
			if err := n.RequestCancel(ctx, idY); err != nil {
				t.Fatal(err)
			}
			select {
			case id := <-cancels:
				if id != idY {
					t.Fatalf("cancel of %q", id)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("a cancel notice did not reach OnCancel")
			}

			n.cut(t)
			if !token(x, 10*time.Second) || !token(y, time.Second) {
				t.Fatal("followers were not woken after the connection came back")
			}
			if err := n.Publish(ctx, []string{idY}); err != nil {
				t.Fatal(err)
			}
			if !token(y, 5*time.Second) {
				t.Fatal("no notice after the reconnection")
			}
		})
	}
}
