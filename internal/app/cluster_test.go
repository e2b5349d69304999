package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/sova-ai/sova/internal/store/storetest"
)

// The notices between nodes go through Redis when SOVA_REDIS_URL is set,
// through PostgreSQL otherwise, and nowhere on SQLite; a Redis that does
// not answer stops the start.
func TestNotifierChoice(t *testing.T) {
	redisURL := os.Getenv("SOVA_TEST_REDIS_URL")
	tests := []struct {
		name, db, redis string
		want            string // the notifier's type; "" none
		wantErr         string
	}{
		{"sqlite", "", "", "", ""},
		{"sqlite ignores redis", "", "redis://127.0.0.1:1/0", "", ""},
		{"postgres", "postgres", "", "*cluster.PGNotifier", ""},
		{"postgres and redis", "postgres", redisURL, "*cluster.RedisNotifier", ""},
		{"redis that does not answer", "postgres", "redis://127.0.0.1:1/0?dial_timeout=100ms", "", "SOVA_REDIS_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]string{}
			if tt.db != "" {
				vars["SOVA_DATABASE_URL"] = storetest.PostgresDSN(t)
			}
			if tt.name == "postgres and redis" && redisURL == "" {
				t.Skip("Redis tests skipped: set SOVA_TEST_REDIS_URL (e.g. redis://127.0.0.1:6379/0)")
			}
			if tt.redis != "" {
				vars["SOVA_REDIS_URL"] = tt.redis
			}
			n, err := newNotifier(context.Background(), mustConfig(t, vars), nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || n != nil {
					t.Fatalf("got %v, %v; want an error mentioning %s", n, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer closeNotifier(n)
			got := ""
			if n != nil {
				got = fmt.Sprintf("%T", n)
			}
			if got != tt.want {
				t.Errorf("notifier %q, want %q", got, tt.want)
			}
		})
	}
}
