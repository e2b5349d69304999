package cluster_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
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
			pc, err := pgxpool.ParseConfig(dsn) // the DSN carries pool settings
			if err != nil {
				t.Fatal(err)
			}
			c, err := pgx.ConnectConfig(t.Context(), pc.ConnConfig)
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

// stallingProxy forwards TCP connections to addr until stall, after which
// the connections open then swallow what they carry and answer nothing,
// as a peer that vanished without closing would; later connections are
// forwarded again.
type stallingProxy struct {
	ln      net.Listener
	addr    string
	mu      sync.Mutex
	stalled []*atomic.Bool
	wg      sync.WaitGroup
}

func newStallingProxy(t *testing.T, addr string) *stallingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallingProxy{ln: ln, addr: addr}
	var conns []net.Conn
	var connsMu sync.Mutex
	t.Cleanup(func() {
		_ = ln.Close()
		connsMu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		connsMu.Unlock()
		p.wg.Wait()
	})
	p.wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", addr)
			if err != nil {
				_ = in.Close()
				continue
			}
			connsMu.Lock()
			conns = append(conns, in, out)
			connsMu.Unlock()
			stalled := &atomic.Bool{}
			p.mu.Lock()
			p.stalled = append(p.stalled, stalled)
			p.mu.Unlock()
			pipe := func(dst, src net.Conn) {
				buf := make([]byte, 32<<10)
				for {
					n, err := src.Read(buf)
					if err != nil {
						_ = dst.Close()
						return
					}
					if !stalled.Load() {
						if _, err := dst.Write(buf[:n]); err != nil {
							return
						}
					}
				}
			}
			p.wg.Go(func() { pipe(out, in) })
			p.wg.Go(func() { pipe(in, out) })
		}
	})
	return p
}

// stall stops the connections open now from carrying anything.
func (p *stallingProxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.stalled {
		s.Store(true)
	}
}

// A subscribed connection that goes silent without closing (a half-open
// TCP connection) is pinged, replaced when the ping goes unanswered, and
// every follower is woken; notices then flow again.
func TestConnectionThatGoesSilent(t *testing.T) {
	const quiet = 200 * time.Millisecond
	discard := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name string
		// open returns the server's URL, and a notifier on url that pings
		// after quiet (or after the default when quiet is 0).
		url  func(t *testing.T) string
		open func(ctx context.Context, url string, quiet time.Duration) (notifier, error)
	}{
		{"postgres", func(t *testing.T) string { return storetest.PostgresDSN(t) }, func(ctx context.Context, url string, quiet time.Duration) (notifier, error) {
			if quiet == 0 {
				return cluster.NewPGNotifier(ctx, url, discard)
			}
			return cluster.NewPGNotifierQuiet(ctx, url, discard, quiet)
		}},
		{"redis", func(t *testing.T) string {
			url := os.Getenv(redisURLEnv)
			if url == "" {
				t.Skipf("Redis tests skipped: set %s (e.g. redis://127.0.0.1:6379/0)", redisURLEnv)
			}
			return url
		}, func(ctx context.Context, url string, quiet time.Duration) (notifier, error) {
			if quiet == 0 {
				return cluster.NewRedisNotifier(ctx, url, discard)
			}
			return cluster.NewRedisNotifierQuiet(ctx, url, discard, quiet)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			url := tc.url(t)
			u, err := neturl.Parse(url)
			if err != nil {
				t.Fatal(err)
			}
			proxy := newStallingProxy(t, u.Host)
			u.Host = proxy.ln.Addr().String()
			n, err := tc.open(t.Context(), u.String(), quiet)
			if err != nil {
				t.Fatal(err)
			}
			defer n.Close()
			direct, err := tc.open(t.Context(), url, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer direct.Close()
			id := "run-" + uniqueName()
			ch, stop := n.Subscribe(id)
			defer stop()

			// Quiet for longer than the ping interval: pings are answered,
			// and the connection stays.
			time.Sleep(5 * quiet)
			if token(ch, 0) {
				t.Fatal("followers woken while the connection was healthy")
			}
			proxy.stall()
			began := time.Now()
			if !token(ch, 5*time.Second) {
				t.Fatal("followers not woken after the subscribed connection went silent")
			}
			t.Logf("replaced %s after the connection went silent", time.Since(began).Round(10*time.Millisecond))
			if err := direct.Publish(context.Background(), []string{id}); err != nil {
				t.Fatal(err)
			}
			if !token(ch, 5*time.Second) {
				t.Fatal("no notice on the new connection")
			}
		})
	}
}
