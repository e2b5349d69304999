package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/store"
)

var memoryContract = []struct {
	name string
	test func(t *testing.T, s store.Store)
}{
	{"Memories", testMemories},
	{"MemoryUserIsolation", testMemoryIsolation},
	{"Connectors", testConnectors},
	{"ConnectorIsolation", testConnectorIsolation},
	{"SyncedFiles", testSyncedFiles},
}

func TestMemoryAndConnectorContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range memoryContract {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.test(t, b.newDatabase(t).open(t))
				})
			}
		})
	}
}

func testMemories(t *testing.T, s store.Store) {
	ctx := t.Context()
	base := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var ids []string
	for i, c := range []string{"  Я живу в Казани  ", "I prefer metric units", "Allergic to peanuts"} {
		m := &sova.Memory{UserID: "u", Content: c, CreatedAt: base.Add(time.Duration(i) * time.Minute)}
		if err := s.AddMemory(ctx, m); err != nil {
			t.Fatal(err)
		}
		if m.ID == "" {
			t.Fatal("no id")
		}
		ids = append(ids, m.ID)
	}
	for _, bad := range []string{"   ", strings.Repeat("я", sova.MaxMemoryChars+1)} {
		if err := s.AddMemory(ctx, &sova.Memory{UserID: "u", Content: bad}); !errors.Is(err, sova.ErrInvalid) {
			t.Errorf("AddMemory(%.10q…) = %v, want ErrInvalid", bad, err)
		}
	}
	list, err := s.ListMemories(ctx, "u", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].ID != ids[2] || list[2].ID != ids[0] || list[2].Content != "Я живу в Казани" ||
		!list[2].CreatedAt.Equal(base) || list[0].UserID != "u" {
		t.Fatalf("ListMemories = %+v", list)
	}
	if top, _ := s.ListMemories(ctx, "u", 2); len(top) != 2 || top[0].ID != ids[2] {
		t.Errorf("ListMemories(limit 2) = %+v", top)
	}
	if n, err := s.CountMemories(ctx, "u"); err != nil || n != 3 {
		t.Errorf("CountMemories = %d, %v", n, err)
	}
	if err := s.DeleteMemory(ctx, "u", ids[1]); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteMemory(ctx, "u", ids[1]); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("second delete: %v, want ErrNotFound", err)
	}
	if list, _ := s.ListMemories(ctx, "u", 0); len(list) != 2 {
		t.Errorf("after delete: %+v", list)
	}
}

func testMemoryIsolation(t *testing.T, s store.Store) {
	ctx := t.Context()
	a := &sova.Memory{UserID: "anna", Content: "Anna's secret"}
	if err := s.AddMemory(ctx, a); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ListMemories(ctx, "boris", 0); len(list) != 0 {
		t.Errorf("boris sees %+v", list)
	}
	if n, _ := s.CountMemories(ctx, "boris"); n != 0 {
		t.Errorf("boris counts %d", n)
	}
	if err := s.DeleteMemory(ctx, "boris", a.ID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("boris deletes anna's memory: %v, want ErrNotFound", err)
	}
	if list, _ := s.ListMemories(ctx, "anna", 0); len(list) != 1 {
		t.Errorf("anna's memory gone: %+v", list)
	}
}

func testConnectors(t *testing.T, s store.Store) {
	ctx := t.Context()
	sp := mustCreateSpace(t, s, "u", "Notes")
	c := &sova.Connector{UserID: "u", SpaceID: sp.ID, Kind: sova.ConnectorWebDAV, Location: "https://cloud.example/remote.php/dav/files/u/",
		Username: "u", Password: "s3cret"}
	if err := s.PutConnector(ctx, c); err != nil {
		t.Fatal(err)
	}
	if c.ID == "" || !c.HasPassword {
		t.Fatalf("PutConnector: %+v", c)
	}
	if err := s.PutConnector(ctx, &sova.Connector{UserID: "u", SpaceID: sp.ID, Kind: "ftp", Location: "x"}); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("unknown kind: %v", err)
	}
	got, err := s.GetConnector(ctx, "u", sp.ID)
	if err != nil || got.Password != "s3cret" || got.Kind != sova.ConnectorWebDAV || !got.LastSyncAt.IsZero() {
		t.Fatalf("GetConnector = %+v, %v", got, err)
	}
	// Never synced: due at once; after a sync, due only once it is old.
	now := time.Now()
	if due, _ := s.DueConnectors(ctx, now, 10); len(due) != 1 || due[0].ID != c.ID {
		t.Errorf("due before sync: %+v", due)
	}
	res := sova.SyncResult{Added: 2, Failed: 1, Errors: []string{"a.pdf: broken"}}
	if err := s.SetConnectorSynced(ctx, c.ID, now, res, ""); err != nil {
		t.Fatal(err)
	}
	if due, _ := s.DueConnectors(ctx, now.Add(-time.Minute), 10); len(due) != 0 {
		t.Errorf("due right after sync: %+v", due)
	}
	if due, _ := s.DueConnectors(ctx, now.Add(time.Minute), 10); len(due) != 1 {
		t.Errorf("not due later: %+v", due)
	}
	got, _ = s.GetConnector(ctx, "u", sp.ID)
	if got.LastResult.Added != 2 || len(got.LastResult.Errors) != 1 || got.LastSyncAt.IsZero() {
		t.Errorf("after sync: %+v", got)
	}
	// Connecting again replaces the connector and forgets its files.
	if err := s.PutSyncedFiles(ctx, c.ID, []sova.SyncedFile{{Path: "a.md", Size: 1, ModTime: now}}, nil); err != nil {
		t.Fatal(err)
	}
	c2 := &sova.Connector{UserID: "u", SpaceID: sp.ID, Kind: sova.ConnectorFolder, Location: "/srv/notes"}
	if err := s.PutConnector(ctx, c2); err != nil {
		t.Fatal(err)
	}
	if files, _ := s.SyncedFiles(ctx, c.ID); len(files) != 0 {
		t.Errorf("old connector's files kept: %+v", files)
	}
	if list, _ := s.ListConnectors(ctx, "u"); len(list) != 1 || list[0].ID != c2.ID || list[0].HasPassword {
		t.Errorf("ListConnectors = %+v", list)
	}
	if err := s.DeleteConnector(ctx, "u", sp.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetConnector(ctx, "u", sp.ID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	// Deleting the space deletes its connector.
	if err := s.PutConnector(ctx, c2); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSpace(ctx, "u", sp.ID); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.ListConnectors(ctx, "u"); len(list) != 0 {
		t.Errorf("connector outlived its space: %+v", list)
	}
}

func testConnectorIsolation(t *testing.T, s store.Store) {
	ctx := t.Context()
	sp := mustCreateSpace(t, s, "anna", "Anna's")
	if err := s.PutConnector(ctx, &sova.Connector{UserID: "boris", SpaceID: sp.ID, Kind: sova.ConnectorFolder, Location: "/tmp"}); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("boris connects anna's space: %v, want ErrNotFound", err)
	}
	if err := s.PutConnector(ctx, &sova.Connector{UserID: "anna", SpaceID: sp.ID, Kind: sova.ConnectorFolder, Location: "/tmp"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetConnector(ctx, "boris", sp.ID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("boris reads anna's connector: %v", err)
	}
	if err := s.DeleteConnector(ctx, "boris", sp.ID); !errors.Is(err, sova.ErrNotFound) {
		t.Errorf("boris disconnects anna's space: %v", err)
	}
	if list, _ := s.ListConnectors(ctx, "boris"); len(list) != 0 {
		t.Errorf("boris lists %+v", list)
	}
}

func testSyncedFiles(t *testing.T, s store.Store) {
	ctx := t.Context()
	sp := mustCreateSpace(t, s, "u", "Docs")
	c := &sova.Connector{UserID: "u", SpaceID: sp.ID, Kind: sova.ConnectorFolder, Location: "/srv"}
	if err := s.PutConnector(ctx, c); err != nil {
		t.Fatal(err)
	}
	mt := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	err := s.PutSyncedFiles(ctx, c.ID, []sova.SyncedFile{
		{Path: "b/отчёт.md", ETag: `"e1"`, Size: 10, ModTime: mt},
		{Path: "a.txt", Size: 5, ModTime: mt},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = s.PutSyncedFiles(ctx, c.ID, []sova.SyncedFile{{Path: "b/отчёт.md", ETag: `"e2"`, Size: 11, ModTime: mt}}, []string{"a.txt", "never-there"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.SyncedFiles(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 || files[0].Path != "b/отчёт.md" || files[0].ETag != `"e2"` || files[0].Size != 11 || !files[0].ModTime.Equal(mt) {
		t.Errorf("SyncedFiles = %+v", files)
	}
}
