package doctor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/sova-ai/sova/internal/config"
	"github.com/sova-ai/sova/internal/store"
)

// Names of the storage checks.
const (
	CheckDataDir  = "data directory"
	CheckDatabase = "database"
)

// Storage checks that the data directory is writable and that the database
// opens with its schema up to date. Opening applies pending migrations,
// as `sova serve` would at start.
func Storage(ctx context.Context, cfg *config.Config) []Check {
	return []Check{dataDir(cfg.DataDir), database(ctx, cfg)}
}

func dataDir(dir string) Check {
	c := Check{Name: CheckDataDir, Required: true}
	fail := func(err error) Check {
		c.Status, c.Detail = Fail, err.Error()
		c.Fix = "set SOVA_DATA_DIR to a directory this user may write, or fix its permissions"
		return c
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(err)
	}
	f, err := os.CreateTemp(dir, ".sova-doctor-*")
	if err != nil {
		return fail(err)
	}
	name := f.Name()
	_, werr := f.WriteString("ok")
	cerr := f.Close()
	rerr := os.Remove(name)
	for _, err := range []error{werr, cerr, rerr} {
		if err != nil {
			return fail(err)
		}
	}
	abs, _ := filepath.Abs(dir)
	c.Status, c.Detail = OK, abs+" is writable"
	return c
}

func database(ctx context.Context, cfg *config.Config) Check {
	c := Check{Name: CheckDatabase, Required: true}
	what := "PostgreSQL (SOVA_DATABASE_URL)"
	if cfg.DatabaseURL == "" {
		path, _ := filepath.Abs(filepath.Join(cfg.DataDir, store.SQLiteFileName))
		what = "SQLite " + path
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err == nil {
		err = st.Ping(ctx)
		_ = st.Close()
	}
	if err != nil {
		c.Status, c.Detail = Fail, fmt.Sprintf("%s: %v", what, err)
		switch {
		case cfg.DatabaseURL == "":
			c.Fix = "check SOVA_DATA_DIR and that no other program holds the database file"
		case strings.Contains(err.Error(), "unsupported database URL"):
			c.Fix = "use a postgres:// URL in SOVA_DATABASE_URL, or leave it empty for SQLite"
		default:
			c.Fix = "check SOVA_DATABASE_URL and that PostgreSQL is running"
		}
		return c
	}
	c.Status, c.Detail = OK, what+" opens, schema up to date"
	return c
}
