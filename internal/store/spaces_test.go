package store_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/store"
)

var spaceContract = []struct {
	name string
	test func(t *testing.T, s store.Store)
}{
	{"SpacesCRUD", testSpacesCRUD},
	{"SpaceUserIsolation", testSpaceUserIsolation},
	{"PutDocumentsInsertAndReplace", testPutDocuments},
	{"PutDocumentsApplyFailureRollsBack", testPutDocumentsRollback},
	{"DeleteDocuments", testDeleteDocuments},
	{"DeleteSpaceCascades", testDeleteSpaceCascades},
	{"LookupDocuments", testLookupDocuments},
}

func TestSpaceContract(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, c := range spaceContract {
				t.Run(c.name, func(t *testing.T) {
					t.Parallel()
					c.test(t, b.newDatabase(t).open(t))
				})
			}
		})
	}
}

func mustCreateSpace(t *testing.T, s store.Store, userID, name string) *sova.Space {
	t.Helper()
	sp := &sova.Space{UserID: userID, Name: name}
	if err := s.CreateSpace(t.Context(), sp); err != nil {
		t.Fatalf("CreateSpace(%q): %v", name, err)
	}
	return sp
}

func doc(name, sha string, size int64, chunks int) *sova.Document {
	return &sova.Document{Name: name, Format: "text", Size: size, SHA256: sha, ChunkCount: chunks, Version: "v-" + sha}
}

func testSpacesCRUD(t *testing.T, s store.Store) {
	ctx := t.Context()
	b := mustCreateSpace(t, s, "u", "  Beta  ")
	a := mustCreateSpace(t, s, "u", "Alpha")
	if b.Name != "Beta" || b.ID == "" || b.CreatedAt.IsZero() {
		t.Errorf("created space = %+v, want trimmed name, an ID and a time", b)
	}
	if err := s.CreateSpace(ctx, &sova.Space{UserID: "u", Name: "Alpha"}); !errors.Is(err, sova.ErrConflict) {
		t.Errorf("duplicate name: err = %v, want ErrConflict", err)
	}
	if err := s.CreateSpace(ctx, &sova.Space{UserID: "u", Name: "  "}); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("empty name: err = %v, want ErrInvalid", err)
	}
	if err := s.CreateSpace(ctx, &sova.Space{UserID: "u", Name: strings.Repeat("я", sova.MaxSpaceNameChars+1)}); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("long name: err = %v, want ErrInvalid", err)
	}

	list, err := s.ListSpaces(ctx, "u")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID {
		t.Fatalf("ListSpaces = %+v, want Alpha then Beta", list)
	}
	got, err := s.GetSpaceByName(ctx, "u", "Beta")
	if err != nil || got.ID != b.ID {
		t.Fatalf("GetSpaceByName = %+v, %v", got, err)
	}

	if err := s.UpdateSpace(ctx, "u", b.ID, "Alpha", ""); !errors.Is(err, sova.ErrConflict) {
		t.Errorf("rename onto a taken name: err = %v, want ErrConflict", err)
	}
	if err := s.UpdateSpace(ctx, "u", b.ID, "Gamma", "reports from 2024"); err != nil {
		t.Fatal(err)
	}
	got, err = s.GetSpace(ctx, "u", b.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != "Gamma" || got.Description != "reports from 2024" || got.UpdatedAt.Before(b.UpdatedAt) {
		t.Errorf("after rename = %+v", got)
	}
	if err := s.DeleteSpace(ctx, "u", a.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.GetSpace(ctx, "u", a.ID)
	wantNotFound(t, "GetSpace(deleted)", err)
	wantNotFound(t, "DeleteSpace(deleted)", s.DeleteSpace(ctx, "u", a.ID))
	wantNotFound(t, "UpdateSpace(missing)", s.UpdateSpace(ctx, "u", "missing", "x", ""))
}

func testSpaceUserIsolation(t *testing.T, s store.Store) {
	ctx := t.Context()
	mine := mustCreateSpace(t, s, "me", "Notes")
	// Another user may use the same name.
	theirs := mustCreateSpace(t, s, "them", "Notes")
	if err := s.PutDocuments(ctx, "them", theirs.ID, []*sova.Document{doc("a.txt", "1", 10, 1)}, nil); err != nil {
		t.Fatal(err)
	}
	list, err := s.ListSpaces(ctx, "me")
	if err != nil || len(list) != 1 || list[0].ID != mine.ID {
		t.Fatalf("ListSpaces(me) = %+v, %v", list, err)
	}
	_, err = s.GetSpace(ctx, "me", theirs.ID)
	wantNotFound(t, "GetSpace(theirs)", err)
	_, err = s.ListDocuments(ctx, "me", theirs.ID)
	wantNotFound(t, "ListDocuments(theirs)", err)
	wantNotFound(t, "PutDocuments(theirs)", s.PutDocuments(ctx, "me", theirs.ID, []*sova.Document{doc("b.txt", "2", 1, 1)}, nil))
	wantNotFound(t, "UpdateSpace(theirs)", s.UpdateSpace(ctx, "me", theirs.ID, "Mine now", ""))
	wantNotFound(t, "DeleteSpace(theirs)", s.DeleteSpace(ctx, "me", theirs.ID))
	docs, err := s.ListDocuments(ctx, "them", theirs.ID)
	if err != nil || len(docs) != 1 {
		t.Fatalf("their documents = %+v, %v", docs, err)
	}
	_, err = s.GetDocument(ctx, "me", theirs.ID, docs[0].ID)
	wantNotFound(t, "GetDocument(theirs)", err)
	wantNotFound(t, "DeleteDocuments(theirs)", s.DeleteDocuments(ctx, "me", theirs.ID, []string{docs[0].ID}, nil))
}

func testPutDocuments(t *testing.T, s store.Store) {
	ctx := t.Context()
	sp := mustCreateSpace(t, s, "u", "Docs")
	first := []*sova.Document{doc("b.md", "aa", 100, 3), doc("a.pdf", "bb", 2000, 7)}
	var replaced []sova.Document
	if err := s.PutDocuments(ctx, "u", sp.ID, first, func(r []sova.Document) error { replaced = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(replaced) != 0 {
		t.Errorf("replaced = %+v on first put, want none", replaced)
	}
	for _, d := range first {
		if d.ID == "" || d.SpaceID != sp.ID || d.CreatedAt.IsZero() {
			t.Errorf("put did not fill in %+v", d)
		}
	}
	got, err := s.GetSpace(ctx, "u", sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.DocumentCount != 2 || got.ChunkCount != 10 || got.TotalBytes != 2100 {
		t.Errorf("counts = %d docs, %d chunks, %d bytes; want 2, 10, 2100", got.DocumentCount, got.ChunkCount, got.TotalBytes)
	}

	// Re-adding b.md with new content replaces it in place.
	again := doc("b.md", "cc", 150, 4)
	if err := s.PutDocuments(ctx, "u", sp.ID, []*sova.Document{again, doc("c.txt", "dd", 5, 1)}, func(r []sova.Document) error { replaced = r; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(replaced) != 1 || replaced[0].ID != first[0].ID || replaced[0].SHA256 != "aa" || replaced[0].ChunkCount != 3 {
		t.Fatalf("replaced = %+v, want the old b.md", replaced)
	}
	if again.ID != first[0].ID || !again.CreatedAt.Equal(first[0].CreatedAt) {
		t.Errorf("replacement got ID %s created %v, want the original %s %v", again.ID, again.CreatedAt, first[0].ID, first[0].CreatedAt)
	}
	docs, err := s.ListDocuments(ctx, "u", sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range docs {
		names = append(names, d.Name)
	}
	if !reflect.DeepEqual(names, []string{"a.pdf", "b.md", "c.txt"}) {
		t.Errorf("documents = %v", names)
	}
	g, err := s.GetDocument(ctx, "u", sp.ID, again.ID)
	if err != nil {
		t.Fatal(err)
	}
	if g.SHA256 != "cc" || g.Size != 150 || g.ChunkCount != 4 || g.Version != "v-cc" || g.Format != "text" {
		t.Errorf("GetDocument = %+v", g)
	}

	if err := s.PutDocuments(ctx, "u", sp.ID, []*sova.Document{doc("x", "1", 1, 1), doc("x", "2", 1, 1)}, nil); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("same name twice: err = %v, want ErrInvalid", err)
	}
	if err := s.PutDocuments(ctx, "u", sp.ID, []*sova.Document{{Name: "y", Version: ""}}, nil); !errors.Is(err, sova.ErrInvalid) {
		t.Errorf("no version: err = %v, want ErrInvalid", err)
	}

	if err := s.ForgetDocumentContent(ctx, "u", sp.ID, []string{again.ID}); err != nil {
		t.Fatal(err)
	}
	g, err = s.GetDocument(ctx, "u", sp.ID, again.ID)
	if err != nil || g.SHA256 != "" || g.ChunkCount != 0 {
		t.Errorf("after ForgetDocumentContent = %+v, %v", g, err)
	}
}

func testPutDocumentsRollback(t *testing.T, s store.Store) {
	ctx := t.Context()
	sp := mustCreateSpace(t, s, "u", "Docs")
	orig := doc("keep.txt", "aa", 10, 2)
	if err := s.PutDocuments(ctx, "u", sp.ID, []*sova.Document{orig}, nil); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("index failed")
	err := s.PutDocuments(ctx, "u", sp.ID, []*sova.Document{doc("keep.txt", "bb", 99, 9), doc("new.txt", "cc", 1, 1)},
		func([]sova.Document) error { return boom })
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the apply error", err)
	}
	docs, err := s.ListDocuments(ctx, "u", sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || docs[0].SHA256 != "aa" || docs[0].ChunkCount != 2 {
		t.Errorf("after a failed apply documents = %+v, want only the original keep.txt", docs)
	}
}

func testDeleteDocuments(t *testing.T, s store.Store) {
	ctx := t.Context()
	sp := mustCreateSpace(t, s, "u", "Docs")
	a, b := doc("a", "1", 1, 1), doc("b", "2", 1, 2)
	if err := s.PutDocuments(ctx, "u", sp.ID, []*sova.Document{a, b}, nil); err != nil {
		t.Fatal(err)
	}
	// An unknown ID fails the whole call.
	err := s.DeleteDocuments(ctx, "u", sp.ID, []string{a.ID, "missing"}, nil)
	wantNotFound(t, "DeleteDocuments(missing)", err)
	// A failed apply rolls the deletion back.
	boom := errors.New("index failed")
	if err := s.DeleteDocuments(ctx, "u", sp.ID, []string{a.ID}, func([]sova.Document) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the apply error", err)
	}
	if docs, _ := s.ListDocuments(ctx, "u", sp.ID); len(docs) != 2 {
		t.Fatalf("after failed deletes %d documents remain, want 2", len(docs))
	}
	var deleted []sova.Document
	if err := s.DeleteDocuments(ctx, "u", sp.ID, []string{b.ID}, func(d []sova.Document) error { deleted = d; return nil }); err != nil {
		t.Fatal(err)
	}
	if len(deleted) != 1 || deleted[0].ID != b.ID || deleted[0].ChunkCount != 2 {
		t.Errorf("deleted = %+v", deleted)
	}
	docs, _ := s.ListDocuments(ctx, "u", sp.ID)
	if len(docs) != 1 || docs[0].ID != a.ID {
		t.Errorf("remaining = %+v", docs)
	}
}

func testDeleteSpaceCascades(t *testing.T, s store.Store) {
	ctx := t.Context()
	sp := mustCreateSpace(t, s, "u", "Docs")
	d := doc("a", "1", 1, 1)
	if err := s.PutDocuments(ctx, "u", sp.ID, []*sova.Document{d}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteSpace(ctx, "u", sp.ID); err != nil {
		t.Fatal(err)
	}
	// A space created again under the same name starts empty.
	again := mustCreateSpace(t, s, "u", "Docs")
	docs, err := s.ListDocuments(ctx, "u", again.ID)
	if err != nil || len(docs) != 0 {
		t.Errorf("documents of the new space = %+v, %v", docs, err)
	}
	_, err = s.GetDocument(ctx, "u", sp.ID, d.ID)
	wantNotFound(t, "GetDocument(of deleted space)", err)
}

func testLookupDocuments(t *testing.T, s store.Store) {
	ctx := t.Context()
	a, b := mustCreateSpace(t, s, "u", "A"), mustCreateSpace(t, s, "u", "B")
	theirs := mustCreateSpace(t, s, "other", "A")
	da, db, dt := doc("a.md", "1", 1, 2), doc("b.md", "2", 1, 3), doc("t.md", "3", 1, 1)
	for _, put := range []struct {
		user, space string
		d           *sova.Document
	}{{"u", a.ID, da}, {"u", b.ID, db}, {"other", theirs.ID, dt}} {
		if err := s.PutDocuments(ctx, put.user, put.space, []*sova.Document{put.d}, nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.LookupDocuments(ctx, "u", []string{da.ID, db.ID, dt.ID, "missing"})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]sova.Document{}
	for _, d := range got {
		byID[d.ID] = d
	}
	if len(got) != 2 || byID[da.ID].SpaceName != "A" || byID[db.ID].SpaceName != "B" || byID[db.ID].ChunkCount != 3 || byID[da.ID].Version != da.Version {
		t.Errorf("LookupDocuments = %+v; want a.md and b.md only, with their spaces", got)
	}
	if got, err := s.LookupDocuments(ctx, "u", nil); err != nil || got == nil || len(got) != 0 {
		t.Errorf("LookupDocuments(nil) = %v, %v", got, err)
	}
}
