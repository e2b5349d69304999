package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// migrations holds one directory of goose SQL migrations per back-end.
//
//go:embed migrations/sqlite/*.sql migrations/postgres/*.sql
var migrations embed.FS

// migrate applies the pending migrations in migrations/<dir> to db. Applied
// migrations are recorded in goose_db_version, so running it again is a
// no-op.
func migrate(ctx context.Context, dialect goose.Dialect, db *sql.DB, dir string, opts ...goose.ProviderOption) error {
	fsys, err := migrationFS(dir)
	if err != nil {
		return err
	}
	// Out-of-order application lets features that add tables land in any
	// order; every migration here is independent of the later ones.
	opts = append([]goose.ProviderOption{goose.WithDisableGlobalRegistry(true), goose.WithAllowOutofOrder(true)}, opts...)
	p, err := goose.NewProvider(dialect, db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}

// migrationFS returns the migrations of one back-end.
func migrationFS(dir string) (fs.FS, error) {
	fsys, err := fs.Sub(migrations, "migrations/"+dir)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return fsys, nil
}
