// Package storetest opens empty stores on every engine for the tests of
// other packages: SQLite in a temporary directory, and PostgreSQL in a
// schema of its own when SOVA_TEST_DATABASE_URL is set.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sova-ai/sova/internal/store"
)

// PostgresURLEnv names the PostgreSQL server tests also run against.
const PostgresURLEnv = "SOVA_TEST_DATABASE_URL"

// Engine opens an empty store of one engine for a test, or skips it.
type Engine struct {
	Name string
	Open func(t testing.TB) *store.DB
}

// Engines are SQLite and PostgreSQL.
var Engines = []Engine{{"sqlite", SQLite}, {"postgres", Postgres}}

// SQLite opens an empty SQLite store, closed when the test ends.
func SQLite(t testing.TB) *store.DB {
	t.Helper()
	s, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "sova.db"))
	if err != nil {
		t.Fatalf("open sqlite: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Postgres opens an empty PostgreSQL store in a schema of its own,
// dropped when the test ends; without SOVA_TEST_DATABASE_URL it skips.
func Postgres(t testing.TB) *store.DB {
	t.Helper()
	dsn := PostgresDSN(t)
	s, err := store.OpenPostgres(t.Context(), dsn)
	if err != nil {
		t.Fatalf("open postgres: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestPoolConns is the connections each PostgreSQL store of a test opens at
// most, unless the URL in SOVA_TEST_DATABASE_URL names pool_max_conns.
const TestPoolConns = 4

// PostgresDSN creates an empty schema and returns a URL that uses it.
func PostgresDSN(t testing.TB) string {
	t.Helper()
	base := os.Getenv(PostgresURLEnv)
	if base == "" {
		t.Skipf("PostgreSQL tests skipped: set %s (e.g. postgres://postgres@127.0.0.1:5432/test?sslmode=disable)", PostgresURLEnv)
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", PostgresURLEnv, err)
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	schema := "sova_test_" + hex.EncodeToString(b[:])
	ctx := t.Context()
	admin, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", PostgresURLEnv, err)
	}
	defer admin.Close(ctx)
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	q := u.Query()
	q.Set("search_path", schema)
	if !q.Has("pool_max_conns") {
		// A bounded share of a shared server's max_connections per store
		// (tests run in parallel, packages at once): enough for the tests,
		// few enough that many at once do not exhaust the server.
		q.Set("pool_max_conns", strconv.Itoa(TestPoolConns))
	}
	u.RawQuery = q.Encode()
	return u.String()
}
