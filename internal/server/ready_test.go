package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/sova-ai/sova/internal/server"
)

type downRedis struct{}

func (downRedis) Ping(context.Context) error {
	return errors.New("dial tcp 10.9.8.7:6379: connect: connection refused")
}

// /readyz reports the shared Redis: a node whose Redis does not answer
// gets no traffic (its limits and throttles would fail).
func TestReadyReportsRedis(t *testing.T) {
	redisURL := os.Getenv("SOVA_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("SOVA_TEST_REDIS_URL not set: no Redis to report")
	}
	e := newEnv(t, map[string]string{"SOVA_REDIS_URL": redisURL})
	if e.app.Redis() == nil {
		t.Fatal("an app with SOVA_REDIS_URL has no Redis to report")
	}
	for _, tc := range []struct {
		name  string
		redis interface{ Ping(context.Context) error }
		code  int
		check string
	}{
		{"shared Redis answers", e.app.Redis(), http.StatusOK, "ok"},
		{"shared Redis down: its address is not shown", downRedis{}, http.StatusServiceUnavailable, "unavailable"},
		{"no Redis", nil, http.StatusOK, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(server.New(server.Options{Service: e.app.Service, Store: e.app.Store, Auth: testAuth(e.app), Version: "test", Redis: tc.redis}))
			defer srv.Close()
			resp, err := http.Get(srv.URL + "/readyz")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Status string            `json:"status"`
				Checks map[string]string `json:"checks"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.code || body.Checks["redis"] != tc.check {
				t.Errorf("readyz %d %+v, want %d and redis %q", resp.StatusCode, body, tc.code, tc.check)
			}
		})
	}
}
