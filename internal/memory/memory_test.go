package memory_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/sova-ai/sova"

	"github.com/sova-ai/sova/internal/memory"
	"github.com/sova-ai/sova/internal/memory/supermemorytest"
	"github.com/sova-ai/sova/internal/store/storetest"
)

type backend struct {
	name string
	open func(t *testing.T) memory.Service
}

var backends = []backend{
	{"builtin-sqlite", func(t *testing.T) memory.Service { return &memory.Builtin{Store: storetest.SQLite(t)} }},
	{"builtin-postgres", func(t *testing.T) memory.Service { return &memory.Builtin{Store: storetest.Postgres(t)} }},
	{"supermemory", func(t *testing.T) memory.Service {
		fake := supermemorytest.New(t, "sm_key")
		s, err := memory.NewSupermemory(memory.SupermemoryConfig{APIKey: "sm_key", URL: fake.URL})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}},
}

// Every back-end: memories are added, listed newest first, found by
// their words (Russian and English) and deleted; nobody else sees them.
func TestServices(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := b.open(t)
			var ids []string
			for _, c := range []string{"I live in Berlin and work as a nurse", "Я предпочитаю вегетарианскую кухню", "My cat is called Tofu"} {
				m, err := s.Add(ctx, "anna", c)
				if err != nil {
					t.Fatal(err)
				}
				if m.ID == "" || m.Content != c {
					t.Fatalf("Add = %+v", m)
				}
				ids = append(ids, m.ID)
			}
			if _, err := s.Add(ctx, "anna", "  "); !errors.Is(err, sova.ErrInvalid) {
				t.Errorf("empty memory: %v", err)
			}
			if _, err := s.Add(ctx, "boris", "Boris lives in Berlin too"); err != nil {
				t.Fatal(err)
			}

			list, err := s.List(ctx, "anna", 0)
			if err != nil {
				t.Fatal(err)
			}
			if len(list) != 3 || list[0].Content != "My cat is called Tofu" {
				t.Fatalf("List = %+v", list)
			}
			for _, q := range []struct{ query, want string }{
				{"where does she live", "I live in Berlin and work as a nurse"},
				{"cat", "My cat is called Tofu"},
			} {
				found, err := s.Search(ctx, "anna", q.query, 5)
				if err != nil {
					t.Fatal(err)
				}
				if len(found) == 0 || found[0].Content != q.want {
					t.Errorf("Search(%q) = %+v, want %q first", q.query, found, q.want)
				}
				for _, m := range found {
					if strings.Contains(m.Content, "Boris") {
						t.Errorf("anna's search found boris's memory: %+v", m)
					}
				}
			}
			if found, _ := s.Search(ctx, "anna", "quantum chromodynamics", 5); len(found) != 0 {
				t.Errorf("unrelated query found %+v", found)
			}
			if err := s.Delete(ctx, "boris", ids[0]); !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("boris deletes anna's memory: %v, want ErrNotFound", err)
			}
			if err := s.Delete(ctx, "anna", ids[0]); err != nil {
				t.Fatal(err)
			}
			if err := s.Delete(ctx, "anna", ids[0]); !errors.Is(err, sova.ErrNotFound) {
				t.Errorf("deleted twice: %v", err)
			}
			if list, _ := s.List(ctx, "anna", 0); len(list) != 2 {
				t.Errorf("after delete: %+v", list)
			}
		})
	}
}

// The built-in search stems both languages: a Russian question finds a
// memory written in another form of its words.
func TestBuiltinStemsRussian(t *testing.T) {
	s := &memory.Builtin{Store: storetest.SQLite(t), MaxPerUser: 3}
	ctx := t.Context()
	for _, c := range []string{"Мой брат живёт в Москве", "Люблю горные лыжи", "Работаю в школе учителем"} {
		if _, err := s.Add(ctx, "u", c); err != nil {
			t.Fatal(err)
		}
	}
	found, err := s.Search(ctx, "u", "где живет брат, в Москва?", 5)
	if err != nil || len(found) != 1 || !strings.Contains(found[0].Content, "брат") || found[0].Score <= 0 {
		t.Errorf("Search = %+v, %v", found, err)
	}
	if _, err := s.Add(ctx, "u", "one too many"); !errors.Is(err, memory.ErrFull) {
		t.Errorf("over MaxPerUser: %v, want ErrFull", err)
	}
}

// Supermemory's requests: the documented paths, the key as a bearer
// token, the user's container tag; a wrong key is an error naming the
// setting, and the key never shows in it.
func TestSupermemoryWire(t *testing.T) {
	fake := supermemorytest.New(t, "sm_right")
	s, err := memory.NewSupermemory(memory.SupermemoryConfig{APIKey: "sm_wrong", URL: fake.URL + "/"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Add(t.Context(), "u1", "hello")
	if err == nil || !strings.Contains(err.Error(), "SUPERMEMORY_API_KEY") || strings.Contains(err.Error(), "sm_wrong") {
		t.Errorf("wrong key: %v", err)
	}
	s, _ = memory.NewSupermemory(memory.SupermemoryConfig{APIKey: "sm_right", URL: fake.URL})
	if _, err := s.Add(t.Context(), "user@example.com", "remember me"); err != nil {
		t.Fatal(err)
	}
	if tags := fake.Contents()["remember me"]; len(tags) != 1 || tags[0] != "sova_user_user_40example.com" {
		t.Errorf("container tags %v", tags)
	}
	if _, err := s.Search(t.Context(), "user@example.com", "remember", 3); err != nil {
		t.Fatal(err)
	}
	want := []string{"POST /v3/documents", "POST /v3/documents", "POST /v3/search"}
	if got := fake.Requests(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("requests %v, want %v", got, want)
	}
	fake.Fail = http.StatusInternalServerError
	if _, err := s.Search(t.Context(), "u", "x", 3); err == nil {
		t.Error("a 500 answer is no error")
	}
	if _, err := memory.NewSupermemory(memory.SupermemoryConfig{}); err == nil {
		t.Error("no key accepted")
	}
}
