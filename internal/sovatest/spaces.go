package sovatest

import (
	"path/filepath"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/spaces"
	"github.com/sova-ai/sova/internal/store"
)

// Projects is a real document space of user "local", "Projects" (project
// plans and budgets), with two documents: vostok.md (its budget) and
// zapad.md (its timeline), kept in SQLite and the Bleve index in a
// temporary directory.
func Projects(t testing.TB) (*spaces.Service, *sova.Space) {
	t.Helper()
	const user = "local"
	dir := t.TempDir()
	st, err := store.OpenSQLite(t.Context(), filepath.Join(dir, "sova.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	idx, err := spaces.OpenBleve(filepath.Join(dir, "spaces"), spaces.BleveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	svc := spaces.NewService(st, idx, nil, spaces.Config{}, nil)
	t.Cleanup(func() { _ = svc.Close() })
	sp, err := svc.CreateSpace(t.Context(), user, "Projects", "project plans and budgets")
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Add(t.Context(), user, sp.ID, []spaces.File{
		spaces.BytesFile("vostok.md", []byte("# Vostok\n\n## Budget\n\nThe Vostok budget is five million roubles, approved in March.\n")),
		spaces.BytesFile("zapad.md", []byte("# Zapad\n\n## Timeline\n\nThe Zapad project starts in June.\n")),
	}, spaces.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sp, err = svc.Space(t.Context(), user, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	return svc, sp
}
