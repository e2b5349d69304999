package server_test

import (
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sova-ai/sova"
)

// Limits end to end: a free user's daily messages and long runs on
// /api/search and /v1/chat/completions, 429 with Retry-After and code
// rate_limited, what /api/me says is left; pro is not limited. On SQLite,
// PostgreSQL, and Redis when SOVA_TEST_REDIS_URL is set.
func TestLimits(t *testing.T) {
	engines := []struct{ name, engine, redis string }{
		{"sqlite", "sqlite", ""}, {"postgres", "postgres", ""}, {"redis", "sqlite", os.Getenv("SOVA_TEST_REDIS_URL")},
	}
	for _, tc := range engines {
		t.Run(tc.name, func(t *testing.T) {
			extra := map[string]string{"SOVA_LIMIT_FREE_MESSAGES": "3", "SOVA_LIMIT_FREE_EXTREME": "0"}
			if tc.name == "redis" {
				if tc.redis == "" {
					t.Skip("Redis tests skipped: set SOVA_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
				}
				extra["SOVA_REDIS_URL"] = tc.redis
			}
			e := newAccountsEnv(t, tc.engine, extra)
			e.addUser(t, "fay", sova.RoleFree, "fay's password")
			e.addUser(t, "pat", sova.RolePro, "pat's password")
			fay, pat := e.browser(t), e.browser(t)
			fay.signIn("fay", "fay's password")
			pat.signIn("pat", "pat's password")

			// deep_research is a long mode: the free limit of 0 refuses it
			// before anything is stored, and it uses no message.
			resp, body := fay.do("POST", "/api/search", `{"group":"deep_research","messages":[{"role":"user","content":"History of Vostok station"}]}`)
			if resp.StatusCode != 429 || errorCode(body) != "rate_limited" || resp.Header.Get("Retry-After") == "" {
				t.Fatalf("free deep_research: %d %s %v", resp.StatusCode, body, resp.Header)
			}
			if n, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || n < 1 || n > 86400 {
				t.Errorf("Retry-After = %q", resp.Header.Get("Retry-After"))
			}
			if chats, _ := e.app.Store.ListChats(t.Context(), userIDOf(t, e, "fay"), 10, 0); len(chats) != 0 {
				t.Errorf("a refused run stored %d chats", len(chats))
			}
			for i := range 2 {
				if resp, body := fay.do("POST", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`); resp.StatusCode != 200 {
					t.Fatalf("message %d: %d %s", i+1, resp.StatusCode, body)
				}
			}
			var me struct {
				Usage struct {
					Messages struct {
						Used, Limit, Left int64
						Resets            time.Time
					}
				}
			}
			if resp, body := fay.do("GET", "/api/me", ""); resp.StatusCode != 200 || json.Unmarshal([]byte(body), &me) != nil ||
				me.Usage.Messages.Used != 2 || me.Usage.Messages.Left != 1 || me.Usage.Messages.Limit != 3 || me.Usage.Messages.Resets.Before(time.Now()) {
				t.Errorf("me: %d %s", resp.StatusCode, body)
			}
			if resp, body := fay.do("POST", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`); resp.StatusCode != 200 {
				t.Fatalf("third message: %d %s", resp.StatusCode, body)
			}
			resp, body = fay.do("POST", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"And of Canada?"}]}`)
			var oai struct {
				Error struct{ Message, Type, Code string }
			}
			if resp.StatusCode != 429 || json.Unmarshal([]byte(body), &oai) != nil || oai.Error.Code != "rate_limited" ||
				oai.Error.Type != "rate_limit_error" || oai.Error.Message == "" || resp.Header.Get("Retry-After") == "" {
				t.Errorf("fourth message on /v1: %d %s", resp.StatusCode, body)
			}
			if resp, body := fay.do("POST", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"And of Canada?"}]}`); resp.StatusCode != 429 || errorCode(body) != "rate_limited" {
				t.Errorf("fourth message on /api/search: %d %s", resp.StatusCode, body)
			}
			// Pro: no daily limit, and /api/me says so.
			for i := range 4 {
				if resp, body := pat.do("POST", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`); resp.StatusCode != 200 {
					t.Fatalf("pro message %d: %d %s", i+1, resp.StatusCode, body)
				}
			}
			if resp, body := pat.do("GET", "/api/me", ""); resp.StatusCode != 200 || json.Unmarshal([]byte(body), &me) != nil || me.Usage.Messages.Limit != -1 {
				t.Errorf("pro me: %s", body)
			}
		})
	}
}

// TestLimitsConcurrentRequests: a free user's requests sent at once are
// answered exactly up to the limit.
func TestLimitsConcurrentRequests(t *testing.T) {
	e := newAccountsEnv(t, "sqlite", map[string]string{"SOVA_LIMIT_FREE_MESSAGES": "4"})
	e.addUser(t, "fay", sova.RoleFree, "fay's password")
	fay := e.browser(t)
	fay.signIn("fay", "fay's password")
	var mu sync.Mutex
	codes := map[int]int{}
	var wg sync.WaitGroup
	for range 12 {
		wg.Go(func() {
			resp, _ := fay.do("POST", "/v1/chat/completions", `{"model":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`)
			mu.Lock()
			codes[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[200] != 4 || codes[429] != 8 {
		t.Errorf("answers by status: %v, want 4 × 200 and 8 × 429", codes)
	}
}

func userIDOf(t *testing.T, e *env, name string) string {
	t.Helper()
	a, err := e.app.Store.GetAccountByName(t.Context(), name)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// The local user (SOVA_AUTH=none, no accounts) owns the installation: the
// free limits do not apply to it, and /api/me shows none.
func TestLocalUserHasNoLimits(t *testing.T) {
	e := newAccountsEnv(t, "sqlite", map[string]string{"SOVA_AUTH": "none", "SOVA_LIMIT_FREE_MESSAGES": "1", "SOVA_LIMIT_FREE_EXTREME": "0"})
	for i := range 3 {
		if resp, body := e.as(t, "", "POST", "/api/search", `{"group":"chat","messages":[{"role":"user","content":"What is the capital of Australia?"}]}`); resp.StatusCode != 200 {
			t.Fatalf("message %d of the local user: %d %s", i+1, resp.StatusCode, body)
		}
	}
	if resp, body := e.as(t, "", "GET", "/api/me", ""); resp.StatusCode != 200 || !strings.Contains(body, `"kind":"local"`) || strings.Contains(body, `"usage"`) {
		t.Errorf("me, local: %d %s", resp.StatusCode, body)
	}
}
