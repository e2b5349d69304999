package store

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"

	"github.com/pressly/goose/v3"
)

// TestSQLitePragmasOnEveryConnection checks that the settings reach every
// pooled connection, not just the first one.
func TestSQLitePragmasOnEveryConnection(t *testing.T) {
	// A directory name that needs escaping in a file: URI.
	path := filepath.Join(t.TempDir(), "odd ?#% dir", "sova.db")
	s, err := OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })

	var file string
	if err := s.db.QueryRowContext(t.Context(), `SELECT file FROM pragma_database_list WHERE name = 'main'`).Scan(&file); err != nil {
		t.Fatal(err)
	}
	if file != path {
		t.Errorf("database file = %q, want %q", file, path)
	}

	const conns = 4
	held := make([]*sql.Conn, 0, conns)
	for range conns {
		c, err := s.db.Conn(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
		for _, tc := range []struct {
			pragma string
			want   string
		}{
			{"journal_mode", "wal"},
			{"foreign_keys", "1"},
			{"synchronous", "1"}, // NORMAL
			{"busy_timeout", "10000"},
		} {
			var got string
			if err := c.QueryRowContext(t.Context(), "PRAGMA "+tc.pragma).Scan(&got); err != nil {
				t.Fatalf("PRAGMA %s: %v", tc.pragma, err)
			}
			if got != tc.want {
				t.Errorf("PRAGMA %s = %q, want %q", tc.pragma, got, tc.want)
			}
		}
	}
	for _, c := range held {
		_ = c.Close()
	}
}

// TestSQLiteMigrationsIdempotent reopens a database several times, also
// concurrently, and checks that it stays at the latest version with nothing
// pending.
func TestSQLiteMigrationsIdempotent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sova.db")
	for range 3 {
		s, err := OpenSQLite(t.Context(), path)
		if err != nil {
			t.Fatalf("OpenSQLite: %v", err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			s, err := OpenSQLite(t.Context(), path)
			if err != nil {
				t.Errorf("OpenSQLite: %v", err)
				return
			}
			_ = s.Close()
		})
	}
	wg.Wait()

	s, err := OpenSQLite(t.Context(), path)
	if err != nil {
		t.Fatalf("OpenSQLite: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	assertMigrated(t.Context(), t, s)
}

func assertMigrated(ctx context.Context, t *testing.T, s *DB) {
	t.Helper()
	p, err := goose.NewProvider(goose.DialectSQLite3, s.db, mustSub(t, "sqlite"), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	current, target, err := p.GetVersions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if current != target || current < 1 {
		t.Errorf("schema version = %d, want %d", current, target)
	}
	var applied int
	if err := s.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM goose_db_version WHERE version_id > 0`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	// Numbers may have gaps (features land in any order), so the files
	// are counted, not the highest number.
	files, err := fs.Glob(mustSub(t, "sqlite"), "*.sql")
	if err != nil {
		t.Fatal(err)
	}
	if applied != len(files) {
		t.Errorf("goose_db_version has %d applied migrations, want %d (a migration ran twice?)", applied, len(files))
	}
}

func mustSub(t *testing.T, dir string) fs.FS {
	t.Helper()
	fsys, err := migrationFS(dir)
	if err != nil {
		t.Fatal(err)
	}
	return fsys
}
