package server_test

import (
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/sova-ai/sova"
)

// tcpProxy forwards connections to target until it is cut: then it
// closes every connection and refuses new ones, as a Redis that went down.
type tcpProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
	wg    sync.WaitGroup
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{ln: ln}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			p.mu.Lock()
			if err != nil || p.cut {
				p.mu.Unlock()
				_ = c.Close()
				if up != nil {
					_ = up.Close()
				}
				continue
			}
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			p.wg.Go(func() { _, _ = io.Copy(up, c); _ = up.Close() })
			p.wg.Go(func() { _, _ = io.Copy(c, up); _ = c.Close() })
		}
	})
	t.Cleanup(func() { p.stop(); p.wg.Wait() })
	return p
}

func (p *tcpProxy) addr() string { return p.ln.Addr().String() }

// stop cuts every connection and closes the listener: the address refuses.
func (p *tcpProxy) stop() {
	p.mu.Lock()
	p.cut = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	_ = p.ln.Close()
	for _, c := range conns {
		_ = c.Close()
	}
}

// When Redis goes down, a question whose limit cannot be checked is
// refused with 503 and Retry-After, its body naming no address, and a pro
// account's question, which has no message limit, goes on uncounted.
func TestRedisDownLimits(t *testing.T) {
	redisURL := os.Getenv("SOVA_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("Redis tests skipped: set SOVA_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
	}
	target := strings.TrimPrefix(redisURL, "redis://")
	target = target[:strings.IndexAny(target+"/", "/")]
	proxy := newTCPProxy(t, target)
	e := newAccountsEnv(t, "sqlite", map[string]string{
		"SOVA_LIMIT_FREE_MESSAGES": "3", "SOVA_REDIS_URL": "redis://" + proxy.addr() + "/0",
	})
	e.addUser(t, "fay", sova.RoleFree, "fay's password")
	e.addUser(t, "pat", sova.RolePro, "pat's password")
	fay, pat := e.browser(t), e.browser(t)
	fay.signIn("fay", "fay's password")
	pat.signIn("pat", "pat's password")
	if resp, body := fay.do("POST", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`); resp.StatusCode != 200 {
		t.Fatalf("before the outage: %d %s", resp.StatusCode, body)
	}
	proxy.stop()
	for _, path := range []string{"/api/search", "/v1/chat/completions"} {
		body := `{"group":"chat","messages":[{"role":"user","content":"And of Canada?"}]}`
		if path == "/v1/chat/completions" {
			body = `{"model":"chat","messages":[{"role":"user","content":"And of Canada?"}]}`
		}
		resp, got := fay.do("POST", path, body)
		if resp.StatusCode != 503 || resp.Header.Get("Retry-After") == "" || errorCode(got) != "limits_unavailable" {
			t.Errorf("free question on %s with Redis down: %d %v %s", path, resp.StatusCode, resp.Header, got)
		}
		if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 {
			t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
		}
		if strings.Contains(got, proxy.addr()) || strings.Contains(got, "127.0.0.1") || strings.Contains(got, "dial") {
			t.Errorf("the 503 names an address: %s", got)
		}
	}
	resp, got := pat.do("POST", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`)
	if resp.StatusCode != 200 || !strings.Contains(got, "finish") {
		t.Errorf("pro question with Redis down: %d %s", resp.StatusCode, got)
	}
}
